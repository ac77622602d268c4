//! A test that decides at run time that it cannot check something says so where the
//! person running `cargo test` sees it: straight on standard error, past the test
//! harness's capture of `eprintln!` (which shows only a failing test's output).

use std::io::Write as _;

/// Tells the person running the tests that `test` skipped `what`, and why.
pub fn announce_skip(test: &str, what: &str, why: &str) {
    let line = format!("\nSKIPPED in {test}: {what} ({why})\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
