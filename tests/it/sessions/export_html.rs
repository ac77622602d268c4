//! The HTML export: its structure (snapshot of the element outline), the escaping of
//! hostile content (script tags, event handlers, javascript: links, raw HTML, images),
//! and the page in a real browser (tests/it/interop/browser.rs). The cards' summaries,
//! the outline, times, badges and cost wording: export_html_turns.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use claw_tui::agent::Message;
use claw_tui::export::{HtmlOptions, to_html};
use claw_tui::session::SessionData;
use scraper::{ElementRef, Html, Selector};
use serde_json::{Value, json};
use std::path::PathBuf;

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

/// The export of the test session: hostile content in every kind of message.
pub fn export() -> String {
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

/// The elements of `doc` that `css` selects.
pub fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// The roles and texts of the messages as the DOM has them.
pub fn conversation(doc: &Html) -> Vec<(String, String)> {
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
    // The content's own links (the outline's are the page's).
    let hrefs: Vec<&str> = select(&doc, "main a[href]")
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
