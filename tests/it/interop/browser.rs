//! The HTML export opened in a real browser, headless Chromium: the messages in order and
//! no script from the content executed, with and without the page's
//! Content-Security-Policy.

use super::{missing, which};
use crate::sessions::export_html::{conversation, export, select};
use scraper::Html;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser: `$CHROMIUM`, else the first of Chromium's usual names on `PATH`.
fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(which)
        .unwrap_or_else(|| missing("Chromium (Debian: apt-get install chromium; or CHROMIUM=path)"))
}

/// The DOM of `file` after headless Chromium loaded it (and ran whatever it allowed).
fn rendered_dom(browser: &Path, file: &Path) -> Html {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            // Nothing but the file: no background connections that a closed network
            // would refuse or leave hanging.
            "--disable-quic",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Html::parse_document(&String::from_utf8(output.stdout).unwrap())
}

#[test]
#[ignore = "interop: needs Chromium (scripts/install-interop.sh; cargo test -- --ignored interop::)"]
fn headless_chromium_shows_the_messages_in_order_and_runs_no_script_from_them() {
    let browser = chromium();
    let dir = tempfile::tempdir().unwrap();
    let html = export();
    let page = dir.path().join("export.html");
    std::fs::write(&page, &html).unwrap();
    // The same page without its policy: the escaping alone must hold.
    let bare = dir.path().join("bare.html");
    let without_csp: String = html
        .lines()
        .filter(|l| !l.contains("Content-Security-Policy"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&bare, without_csp).unwrap();
    // The control: this browser does run a page's script when there is one.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><body><script>document.body.dataset.pwned='control'</script></body>",
    )
    .unwrap();
    let dom = rendered_dom(&browser, &control);
    assert_eq!(
        select(&dom, "body[data-pwned=control]").len(),
        1,
        "the control ran"
    );

    for file in [&page, &bare] {
        let dom = rendered_dom(&browser, file);
        assert!(
            select(&dom, "[data-pwned]").is_empty(),
            "script ran in {file:?}"
        );
        let messages = conversation(&dom);
        let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            roles,
            [
                "user",
                "assistant",
                "assistant",
                "notification",
                "assistant",
                "notice"
            ]
        );
        assert!(messages[0].1.contains("First question"));
        assert!(
            messages[0]
                .1
                .contains("<script>document.body.dataset.pwned='script'</script>")
        );
        assert!(messages[1].1.contains("Editing:"));
        assert!(
            messages[2].1.contains("No <b>lint</b> errors."),
            "in the spawn card"
        );
        assert!(messages[3].1.contains("Subagent cleanup finished"));
        assert!(messages[4].1.contains("Second answer."));
        assert_eq!(messages[5].1, "Model set to <i>x</i>");
        assert!(select(&dom, "script").is_empty());
    }
}
