//! The HTML export: its structure (snapshot of the element outline), the escaping of
//! hostile content (script tags, event handlers, javascript: links, raw HTML, images),
//! and the page opened in headless Chromium: the messages in order and no script from
//! the content executed, with and without the page's Content-Security-Policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use claw_tui::agent::Message;
use claw_tui::export::{HtmlOptions, to_html};
use claw_tui::session::SessionData;
use scraper::{ElementRef, Html, Selector};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each way content could try to run script when the page opens.
const HOSTILE: &str = "<script>document.body.dataset.pwned='script'</script>\n\n\
    <img src=x onerror=\"document.body.dataset.pwned='img'\">\n\n\
    [click](javascript:document.body.dataset.pwned='link') and ![pic](https://example.invalid/x.png)";

fn message(value: Value) -> Message {
    serde_json::from_value(value).unwrap()
}

fn session() -> SessionData {
    let header = serde_json::from_value(json!({
        "version": 1, "id": "3c3b1f2a-export", "workspace": "/home/u/project",
        "provider": "anthropic", "model": "claude-x", "created": 1_700_000_000_000u64
    }))
    .unwrap();
    let usage = |input: u64, output: u64, cost: f64| json!({"input": input, "output": output, "cache_read": 10, "cache_write": 0, "cost": cost});
    let messages = vec![
        message(
            json!({"role": "user", "timestamp": 1, "content": format!("First **question**\n\n{HOSTILE}")}),
        ),
        message(
            json!({"role": "assistant", "timestamp": 2, "model": "claude-x", "stop_reason": "tool_use",
            "usage": usage(100, 20, 0.0015),
            "content": [
                {"type": "thinking", "thinking": "I should <b>edit</b> the file"},
                {"type": "text", "text": "Editing:\n\n```rust\nfn main() { println!(\"</pre><script>x</script>\"); }\n```"},
                {"type": "tool_call", "id": "c1", "name": "edit_file",
                 "args": {"path": "src/main.rs", "old_text": "<script>", "new_text": "fixed"}}
            ]}),
        ),
        message(
            json!({"role": "tool_result", "timestamp": 3, "tool_call_id": "c1", "tool_name": "edit_file",
            "is_error": false, "content": "Edited src/main.rs </pre><script>document.body.dataset.pwned='result'</script>",
            "details": {"path": "src/main.rs",
                        "diff": "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1 +1 @@\n-<script>\n+fixed"}}),
        ),
        message(
            json!({"role": "assistant", "timestamp": 3, "model": "claude-x",
            "stop_reason": "tool_use", "usage": usage(0, 0, 0.0),
            "content": [{"type": "tool_call", "id": "c2", "name": "spawn",
                         "args": {"task": "lint", "label": "lint"}}]}),
        ),
        message(
            json!({"role": "tool_result", "timestamp": 3, "tool_call_id": "c2",
            "tool_name": "spawn", "is_error": false,
            "content": "Started subagent sa-7 (\"lint\"); 1 running now."}),
        ),
        message(
            json!({"role": "notification", "timestamp": 4, "source": "subagent",
            "content": "[Subagent \"lint\" (sa-7) completed]\nNo <b>lint</b> errors."}),
        ),
        message(
            json!({"role": "notification", "timestamp": 4, "source": "subagent",
            "content": "[SYSTEM NOTIFICATION] Subagent cleanup finished: removed 3 files"}),
        ),
        message(
            json!({"role": "assistant", "timestamp": 5, "model": "claude-x", "stop_reason": "stop",
            "usage": usage(200, 30, 0.0025),
            "content": [{"type": "text", "text": "Done. Second answer."}]}),
        ),
        message(
            json!({"role": "notice", "timestamp": 6, "level": "info", "text": "Model set to <i>x</i>"}),
        ),
    ];
    SessionData {
        path: PathBuf::from("/tmp/s.jsonl"),
        header: Some(header),
        messages,
        ..SessionData::default()
    }
}

fn export() -> String {
    to_html(&session(), &[], &HtmlOptions::default())
}

/// The element outline of `<main>`: each element's tag, classes and data-role, indented,
/// without text or the highlighter's spans.
fn outline(element: ElementRef<'_>, depth: usize, out: &mut String) {
    let e = element.value();
    if e.name() == "span" && depth > 0 {
        return;
    }
    let mut line = format!("{}{}", "  ".repeat(depth), e.name());
    let mut classes: Vec<&str> = e.classes().collect();
    classes.sort_unstable();
    for class in classes {
        line.push('.');
        line.push_str(class);
    }
    if let Some(role) = e.attr("data-role") {
        line.push_str(&format!("[{role}]"));
    }
    out.push_str(&line);
    out.push('\n');
    for child in element.children().filter_map(ElementRef::wrap) {
        outline(child, depth + 1, out);
    }
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// The roles and texts of the messages as the DOM has them.
fn conversation(doc: &Html) -> Vec<(String, String)> {
    select(doc, "main > section, main > p")
        .into_iter()
        .map(|e| {
            let text: String = e.text().collect::<Vec<_>>().join("");
            (e.value().attr("data-role").unwrap_or("").to_owned(), text)
        })
        .collect()
}

#[test]
fn the_structure_is_messages_in_order_with_collapsible_cards() {
    let html = export();
    let doc = Html::parse_document(&html);
    let mut out = String::new();
    outline(select(&doc, "main").remove(0), 0, &mut out);
    insta::assert_snapshot!("html_export_outline", out);

    let roles: Vec<String> = conversation(&doc).into_iter().map(|(r, _)| r).collect();
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
    let usage = select(&doc, "#usage").remove(0).text().collect::<String>();
    assert_eq!(
        usage,
        "3 answers · 300 input · 50 output · 30 cache read · 0 cache write tokens · $0.0040"
    );
    // Code is highlighted with inline styles, the tool card holds args, result and diff.
    let code = select(&doc, ".assistant pre[style]");
    assert_eq!(code.len(), 1, "{html}");
    let card = select(&doc, "details.tool").remove(0);
    let card_text: String = card.text().collect();
    assert!(
        card_text.contains("\"old_text\": \"<script>\""),
        "{card_text}"
    );
    assert!(card_text.contains("-<script>\n+fixed"), "{card_text}");
    assert_eq!(select(&doc, "details.tool pre.diff span.del").len(), 1);
    assert!(
        select(&doc, "details.thinking[open]").is_empty(),
        "thinking is collapsed"
    );
    let nested = select(&doc, "details.tool details.subagent");
    assert_eq!(nested.len(), 1, "the report sits in its spawn call's card");
    assert!(
        nested[0]
            .text()
            .collect::<String>()
            .contains("No <b>lint</b> errors.")
    );
    // Nothing external: no element loads anything.
    for css in [
        "script", "img", "link", "iframe", "object", "embed", "[src]",
    ] {
        assert!(select(&doc, css).is_empty(), "{css} in the page");
    }
}

#[test]
fn hostile_content_is_text_never_markup() {
    let html = export();
    let doc = Html::parse_document(&html);
    let user_text: String = select(&doc, "section.user").remove(0).text().collect();
    assert!(user_text.contains("<script>document.body.dataset.pwned='script'</script>"));
    assert!(user_text.contains("<img src=x onerror="));
    let mut attributes = Vec::new();
    for element in select(&doc, "*") {
        for (name, value) in element.value().attrs() {
            attributes.push((name.to_owned(), value.to_owned()));
        }
    }
    assert!(
        !attributes.iter().any(|(n, _)| n.starts_with("on")),
        "{attributes:?}"
    );
    let hrefs: Vec<&str> = select(&doc, "a[href]")
        .iter()
        .map(|a| a.value().attr("href").unwrap())
        .collect();
    assert_eq!(
        hrefs,
        ["#", "https://example.invalid/x.png"],
        "javascript: dropped"
    );
    assert!(
        !html.contains("<script"),
        "no script tag anywhere in the file"
    );
    assert!(html.contains("Content-Security-Policy"));
}

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(move |dir| dir.join(name))
                .collect::<Vec<_>>()
        })
        .find(|p| p.is_file())
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
fn headless_chromium_shows_the_messages_in_order_and_runs_no_script_from_them() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CLAW_TUI_NO_BROWSER").is_some(),
            "this test needs Chromium: apt-get install chromium (or CHROMIUM=path); \
             CLAW_TUI_NO_BROWSER=1 skips it"
        );
        return;
    };
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
