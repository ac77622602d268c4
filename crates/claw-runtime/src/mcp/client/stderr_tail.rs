//! What a server said last on stderr, for the message when it fails: its last error
//! line when it printed one. A crashed Node server ends with a stack and its version
//! (`Node.js v22.3.0`), a Python one with its traceback's last line; the line worth
//! quoting is the error, not the banner after it.

use std::sync::{Arc, Mutex};

/// The last lines worth quoting, shared by the stderr reader and the error paths.
#[derive(Clone, Debug, Default)]
pub(super) struct StderrTail(Arc<Mutex<Tail>>);

#[derive(Debug, Default)]
struct Tail {
    /// The last line that reads as an error.
    error: Option<String>,
    /// The last line with words that is not a stack frame or a version banner.
    other: Option<String>,
}

impl StderrTail {
    /// Takes one line the server wrote.
    pub(super) fn push(&self, line: &str) {
        let line = line.trim();
        if line.is_empty() || is_frame_or_banner(line) {
            return;
        }
        let Ok(mut tail) = self.0.lock() else {
            return;
        };
        if reads_as_error(line) {
            tail.error = Some(line.to_owned());
        }
        tail.other = Some(line.to_owned());
    }

    /// The line to quote: the last error line, else the last line with words.
    pub(super) fn last_words(&self) -> Option<String> {
        let tail = self.0.lock().ok()?;
        tail.error.clone().or_else(|| tail.other.clone())
    }
}

/// A stack frame (`at f (file:1:2)`, `File "x.py", line 3`) or a runtime's version line.
fn is_frame_or_banner(line: &str) -> bool {
    line.starts_with("at ")
        || line.starts_with("File \"")
        || line.starts_with("Node.js v")
        || line == "^"
}

/// `Error: …`, `TypeError: …`, `ValueError: …`, `error: …`, `FATAL …`, a Rust panic.
fn reads_as_error(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let head = lower.split(':').next().unwrap_or("");
    head.ends_with("error")
        || head.ends_with("exception")
        || lower.starts_with("fatal")
        || lower.contains("panicked at")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(lines: &str) -> Option<String> {
        let tail = StderrTail::default();
        lines.lines().for_each(|l| tail.push(l));
        tail.last_words()
    }

    #[test]
    fn a_node_crash_is_quoted_by_its_error_not_its_version() {
        let node = "/srv/index.js:12\n    throw new Error(\"missing DATABASE_URL\");\n    ^\n\n\
                    Error: missing DATABASE_URL\n    at Object.<anonymous> (/srv/index.js:12:11)\n\
                    \x20   at Module._compile (node:internal/modules/cjs/loader:1358:14)\n\nNode.js v22.3.0\n";
        assert_eq!(said(node).as_deref(), Some("Error: missing DATABASE_URL"));
    }

    #[test]
    fn a_python_traceback_and_plain_lines() {
        let python = "Traceback (most recent call last):\n  File \"server.py\", line 3, in <module>\n\
                      \x20   main()\nValueError: no token\n";
        assert_eq!(said(python).as_deref(), Some("ValueError: no token"));
        assert_eq!(
            said("starting\nlistening on stdio\n").as_deref(),
            Some("listening on stdio")
        );
        assert_eq!(said("\n  \n"), None);
    }
}
