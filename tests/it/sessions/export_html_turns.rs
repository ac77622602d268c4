//! The HTML export's way around a session: tool cards that say what each call was and
//! what came of it (from a session recorded from a real run, with the real file tools),
//! the times, the outline of turns, the steer and follow-up badges, the client's cost
//! wording; and hostile text in each of those places staying text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::sessions::export_html::select;
use crate::support::{FnTool, Reply, ScriptedProvider, run};
use claw_tui::agent::{Agent, Message, ToolExecution, ToolResult};
use claw_tui::export::{HtmlOptions, to_html};
use claw_tui::session::{Entry, SessionData, SessionWriter, load, record_events};
use claw_tui::tools::Workspace;
use claw_tui::tools::fs::{EditFileTool, ReadFileTool};
use scraper::{ElementRef, Html};
use serde_json::{Value, json};
use std::sync::Arc;

const LIB_RS: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";

fn text(e: &ElementRef<'_>) -> String {
    e.text().collect()
}

/// The summary lines of the top-level cards, in page order.
fn summaries(doc: &Html) -> Vec<String> {
    select(doc, "section.assistant > details.tool > summary")
        .iter()
        .map(text)
        .collect()
}

/// A run recorded as the client records it: a read, an edit, a command that fails
/// while the user steers and queues a follow-up (so the call after it is skipped), the
/// steer's answer, then the follow-up's. The model has no known price. With the
/// directory that holds the file.
async fn recorded_session() -> (SessionData, tempfile::TempDir) {
    let data_dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), LIB_RS).unwrap();
    let workspace = Arc::new(Workspace::new(ws.path().canonicalize().unwrap(), false));
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[("c1", "read_file", json!({"path": "src/lib.rs"}))]),
        Reply::tool_calls(&[(
            "c2",
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "a - b", "new_text": "a + b"}),
        )]),
        Reply::tool_calls(&[
            ("c3", "exec", json!({"command": "cargo test"})),
            ("c4", "mcp__github__search_issues", json!({"query": "add"})),
        ]),
        Reply::text(&["Looking at the parser test instead."]),
        Reply::text(&["Summary: add is fixed."]),
    ]);
    let agent = Agent::new(provider, "scripted");
    agent.set_tool_execution(ToolExecution::Sequential);
    // A command's result as `exec` gives it; the user steers and queues a follow-up
    // while it runs, as from the composer.
    let exec = {
        let agent = agent.clone();
        FnTool::new("exec", json!({"type": "object"}), move |_, _, _, _| {
            let agent = agent.clone();
            async move {
                agent.steer("Check the parser test first");
                agent.follow_up("Then summarise what changed");
                ToolResult::text("running 3 tests\n3 failed\n[exit code: 1]")
                    .with_details(json!({"exit_code": 1}))
            }
        })
    };
    let never = FnTool::new(
        "mcp__github__search_issues",
        json!({"type": "object"}),
        |_, _, _, _| async { ToolResult::text("ran") },
    );
    agent.set_tools(vec![
        Arc::new(ReadFileTool::new(workspace.clone())),
        Arc::new(EditFileTool::new(workspace)),
        exec,
        never,
    ]);
    let writer = SessionWriter::create(data_dir.path(), ws.path(), "scripted", "scripted").unwrap();
    let path = writer.path().to_path_buf();
    let (finish, recording) = record_events(&agent, writer);
    run(&agent, "Fix the **failing** test in `src/lib.rs`").await;
    finish.send(()).unwrap();
    recording.await.unwrap();
    // The export reads the file again (its queue lines): it must outlive the load.
    (load(&path).unwrap(), data_dir)
}

#[tokio::test]
async fn cards_say_what_each_call_did_and_turns_are_outlined_timed_and_badged() {
    let (data, _dir) = recorded_session().await;
    let html = to_html(&data, &[], &HtmlOptions::default());
    let doc = Html::parse_document(&html);

    // Each card's summary: status mark, tool, argument, outcome; the body keeps the rest.
    assert_eq!(
        summaries(&doc),
        [
            "✓ read_file src/lib.rs 3 lines",
            "✓ edit_file src/lib.rs +1 −1",
            "✓ exec cargo test exit 1 · 3 failed (2 lines)",
            "⤼ github · search_issues add Skipped due to queued user message.",
        ],
        "{html}"
    );
    let skipped = select(&doc, "details.tool.skipped .tool-name");
    assert_eq!(
        skipped.iter().map(text).collect::<Vec<_>>(),
        ["github · search_issues"]
    );
    let edit = select(&doc, "details.tool")[1];
    assert!(text(&select_in(edit, "pre.args")[0]).contains("\"new_text\": \"a + b\""));
    assert_eq!(text(&select_in(edit, "pre.diff span.add")[0]), "+    a + b");

    // The outline links each user message to its turn, the steer and follow-up badged.
    let outline: Vec<(String, String, String)> = select(&doc, "nav.outline li")
        .iter()
        .map(|li| {
            let a = select_in(*li, "a").remove(0);
            let badges: String = select_in(*li, ".badge").iter().map(text).collect();
            (a.value().attr("href").unwrap().to_owned(), text(&a), badges)
        })
        .collect();
    let entry = |href: &str, text: &str, badge: &str| (href.into(), text.into(), badge.into());
    assert_eq!(
        outline,
        [
            entry("#turn-1", "Fix the failing test in src/lib.rs", ""),
            entry("#turn-2", "Check the parser test first", "steer"),
            entry("#turn-3", "Then summarise what changed", "follow-up"),
        ]
    );
    let users = select(&doc, "main > section.user");
    let ids: Vec<&str> = users.iter().map(|s| s.value().id().unwrap()).collect();
    assert_eq!(ids, ["turn-1", "turn-2", "turn-3"]);
    let badges: Vec<Vec<String>> = users
        .iter()
        .map(|s| select_in(*s, "h2 .badge").iter().map(text).collect())
        .collect();
    assert_eq!(badges, [vec![], vec!["steer"], vec!["follow-up"]]);
    assert!(users[1].value().classes().any(|c| c == "steer"));
    assert!(users[2].value().classes().any(|c| c == "follow-up"));

    // Every user message says when, in UTC, with a machine-readable datetime; the
    // scripted model's answers carry no time (0), and show none rather than 1970.
    for section in &users {
        let times = select_in(*section, "h2 > time");
        assert_eq!(times.len(), 1, "{}", section.html());
        let datetime = times[0].value().attr("datetime").unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(datetime).is_ok(),
            "{datetime}"
        );
        assert!(text(&times[0]).ends_with(" UTC"));
    }
    assert!(!html.contains("1970"), "{html}");

    // No price for the model: the client's words, never a made-up zero.
    let usage = text(&select(&doc, "#usage")[0]);
    assert!(usage.ends_with(" · cost n/a"), "{usage}");
    assert!(!html.contains("$0.0000"));
}

/// The elements under `root` that `css` selects.
fn select_in<'a>(root: ElementRef<'a>, css: &str) -> Vec<ElementRef<'a>> {
    root.select(&scraper::Selector::parse(css).unwrap())
        .collect()
}

/// Markup in every place the page now shows session text in: prompts (and the outline
/// that quotes them), a steer, tool names, arguments, outcomes, notices.
const EVIL: &str = "</script><script>alert(1)</script><img src=x onerror=alert(2)>";

fn message(value: Value) -> Message {
    serde_json::from_value(value).unwrap()
}

#[tokio::test]
async fn hostile_text_in_summaries_outline_and_badged_turns_stays_text() {
    let data_dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data_dir.path(), ws.path(), "p", EVIL).unwrap();
    let path = writer.path().to_path_buf();
    let at = 1_700_000_000_000u64;
    let usage = json!({"input": 1, "output": 1, "cache_read": 0, "cache_write": 0, "cost": 0.0});
    let lines = [
        json!({"role": "user", "timestamp": at, "content": EVIL}),
        json!({"role": "assistant", "timestamp": at + 1_000, "model": EVIL, "stop_reason": "tool_use",
               "usage": usage, "content": [
                   {"type": "tool_call", "id": "c1", "name": format!("mcp__{EVIL}__x"),
                    "args": {"path": EVIL}}]}),
        json!({"role": "tool_result", "timestamp": at + 2_000, "tool_call_id": "c1",
               "tool_name": "x", "is_error": true, "content": EVIL}),
    ];
    for m in lines {
        writer.append(&Entry::Message {
            timestamp: at,
            message: message(m),
        });
    }
    // Typed as a steer while the call ran, then delivered.
    let steer = format!("steer {EVIL}");
    writer.append(&Entry::Queue {
        timestamp: at + 1_500,
        steering: vec![steer.clone()],
        follow_up: Vec::new(),
    });
    writer.append(&Entry::Message {
        timestamp: at + 2_000,
        message: message(json!({"role": "user", "timestamp": at + 1_400, "content": steer})),
    });
    writer.append(&Entry::Message {
        timestamp: at + 3_000,
        message: message(
            json!({"role": "notice", "timestamp": at + 3_000, "level": "info", "text": EVIL}),
        ),
    });
    writer.close().await;
    let html = to_html(&load(&path).unwrap(), &[], &HtmlOptions::default());
    let doc = Html::parse_document(&html);

    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    for css in ["script", "img", "[src]", "[onerror]"] {
        assert!(select(&doc, css).is_empty(), "{css} in {html}");
    }
    let csp = select(&doc, "meta[http-equiv=Content-Security-Policy]")[0]
        .value()
        .attr("content")
        .unwrap();
    assert!(csp.starts_with("default-src 'none';"), "{csp}");
    assert!(!csp.contains("script-src"), "{csp}");
    // The text is all there, as text.
    let summary = text(&select(&doc, "details.tool > summary")[0]);
    assert_eq!(summary, format!("✗ {EVIL} · x {EVIL} failed · {EVIL}"));
    let outline: Vec<String> = select(&doc, "nav.outline a").iter().map(text).collect();
    assert_eq!(outline, [EVIL.to_owned(), steer.clone()]);
    let steered = select(&doc, "section#turn-2")[0];
    assert_eq!(text(&select_in(steered, ".badge.steer")[0]), "steer");
    assert!(text(&steered).contains(&steer));
    let times: Vec<String> = select(&doc, "main time").iter().map(text).collect();
    assert_eq!(
        times,
        ["2023-11-14 22:13:20 UTC", "22:13:21 UTC", "22:13:21 UTC"]
    );
    assert_eq!(text(&select(&doc, "p.notice")[0]), EVIL);
    assert!(text(&select(&doc, "#usage")[0]).ends_with("cost n/a"));
}

/// A damaged message line (the loader skips it) does not move the badges: the export
/// counts the message lines as the loader does.
#[tokio::test]
async fn a_damaged_message_line_leaves_the_badges_on_their_messages() {
    let (data, _dir) = recorded_session().await;
    let file = std::fs::read_to_string(&data.path).unwrap();
    // A broken message line before every other line of the file but the first.
    let (head, rest) = file.split_once('\n').unwrap();
    let damaged = r#"{"type":"message","timestamp":1,"message":{"role":"user","content":42}}"#;
    std::fs::write(&data.path, format!("{head}\n{damaged}\n{rest}")).unwrap();
    let data = load(&data.path).unwrap();
    let html = to_html(&data, &[], &HtmlOptions::default());
    let doc = Html::parse_document(&html);
    let badges: Vec<Vec<String>> = select(&doc, "main > section.user")
        .iter()
        .map(|s| select_in(*s, "h2 .badge").iter().map(text).collect())
        .collect();
    assert_eq!(badges, [vec![], vec!["steer"], vec!["follow-up"]], "{html}");
}
