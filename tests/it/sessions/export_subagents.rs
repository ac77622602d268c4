//! Subagent runs in the HTML export: the real binary on the demo model spawns
//! subagents, and `claw-tui export --format html` shows each subagent's own calls
//! (from the session's `.subagents` side file) inside the card of the `spawn` call that
//! started it, before its report, with hostile text from their results kept as text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::bin::{Sandbox, run, session_lines, session_messages};
use crate::support::pty::{Tui, status_line};
use claw_tui::agent::{Message, ToolResult};
use claw_tui::export::{HtmlOptions, to_html};
use claw_tui::session::{SessionData, SubagentCall, subagent_calls_path};
use scraper::{ElementRef, Html, Selector};
use serde_json::json;

/// A file name and a file's text that would be markup if they were not escaped.
const HOSTILE_NAME: &str = "<img src=x onerror=alert(1)>.txt";
const HOSTILE_TEXT: &str = "</pre><script>document.body.dataset.pwned='sub'</script><b>bold</b>";

fn select<'a>(root: ElementRef<'a>, css: &str) -> Vec<ElementRef<'a>> {
    root.select(&Selector::parse(css).unwrap()).collect()
}

fn text(e: ElementRef<'_>) -> String {
    e.text().collect()
}

/// The tool names of the subagent calls nested directly in `card`, in page order.
fn nested_names(card: ElementRef<'_>) -> Vec<String> {
    select(
        card,
        ":scope > .subagent-calls > .subagent-call > details.tool .tool-name",
    )
    .into_iter()
    .map(text)
    .collect()
}

#[test]
fn the_exported_spawn_cards_hold_each_subagents_calls_then_its_report() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    std::fs::write(ws.join(HOSTILE_NAME), "x").unwrap();
    std::fs::write(ws.join("notes.txt"), HOSTILE_TEXT).unwrap();
    let root = sandbox.dir.path();
    let sb = &sandbox;
    let mut tui = Tui::demo(root, "0", &[]);
    tui.wait_text("Welcome to claw-tui");
    // Both subagents have finished, reported, and had their calls kept beside the session.
    let finished = |reports: usize| {
        move |s: &vt100::Screen| {
            let files = sb.session_files();
            let [session] = files.as_slice() else {
                return false;
            };
            let notifications = session_messages(session)
                .iter()
                .filter(|m| m["role"] == "notification")
                .count();
            let kept = std::fs::read_to_string(subagent_calls_path(session))
                .map(|t| t.lines().count())
                .unwrap_or(0);
            notifications >= reports && kept >= reports && status_line(s).contains("idle")
        }
    };
    tui.send("spawn list files\r");
    tui.wait_for("the first subagent's report", finished(1));
    tui.send("spawn read notes.txt\r");
    tui.wait_for("the second subagent's report", finished(2));
    tui.send("\x04");
    let (code, _, _) = tui.wait_exit();
    assert_eq!(code, 0);

    let session = sandbox.only_session();
    let id = session_lines(&session)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut cmd = sandbox.command();
    cmd.args(["export", &id, "--format", "html"]);
    let (code, html, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let doc = Html::parse_document(&html);
    let main = select(doc.root_element(), "main").remove(0);

    // The spawn cards are top-level cards of the conversation; each holds its subagent.
    let spawns: Vec<ElementRef<'_>> = select(main, "section.assistant > details.tool")
        .into_iter()
        .filter(|card| {
            select(*card, ":scope > summary .tool-name")
                .first()
                .is_some_and(|n| text(*n) == "spawn")
        })
        .collect();
    assert_eq!(spawns.len(), 2, "{html}");
    assert_eq!(nested_names(spawns[0]), ["list_dir"], "{html}");
    assert_eq!(nested_names(spawns[1]), ["read_file"], "{html}");

    // Inside a card: the spawn's own result, then the subagent's calls, then its report.
    for card in &spawns {
        let parts: Vec<String> = card
            .children()
            .filter_map(ElementRef::wrap)
            .filter_map(|e| {
                let classes: Vec<&str> = e.value().classes().collect();
                ["result", "subagent-calls", "subagent"]
                    .into_iter()
                    .find(|c| classes.contains(c))
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(parts, ["result", "subagent-calls", "subagent"], "{html}");
    }

    // The nested calls carry their arguments and results, collapsed like the main cards.
    let listed = select(spawns[0], ".subagent-call details.tool").remove(0);
    assert!(listed.value().attr("open").is_none());
    assert!(text(select(listed, "pre.args").remove(0)).contains("\"path\": \".\""));
    assert!(text(select(listed, "pre.result").remove(0)).contains(HOSTILE_NAME));
    let read = select(spawns[1], ".subagent-call details.tool").remove(0);
    assert!(text(select(read, "pre.args").remove(0)).contains("notes.txt"));
    assert!(
        text(select(read, "pre.result").remove(0)).contains(HOSTILE_TEXT),
        "{html}"
    );
    assert!(text(select(spawns[1], "details.subagent").remove(0)).contains("completed"));

    // The hostile text stayed text: no element or handler came out of it.
    for css in ["script", "img", "b", "[onerror]", "[src]"] {
        assert!(select(main, css).is_empty(), "{css} in the page: {html}");
    }
    assert!(!html.contains("<script"), "{html}");
}

fn message(value: serde_json::Value) -> Message {
    serde_json::from_value(value).unwrap()
}

#[test]
fn a_subagents_calls_keep_their_order_and_stay_with_their_own_spawn() {
    let spawn = |id: &str| {
        message(
            json!({"role": "assistant", "timestamp": 1, "model": "m", "stop_reason": "tool_use",
            "usage": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "cost": 0.0},
            "content": [{"type": "tool_call", "id": id, "name": "spawn", "args": {"task": id}}]}),
        )
    };
    let started = |id: &str, sub: &str| {
        message(
            json!({"role": "tool_result", "timestamp": 2, "tool_call_id": id,
            "tool_name": "spawn", "is_error": false,
            "content": format!("Started subagent {sub} (\"{id}\"); 1 running now.")}),
        )
    };
    let data = SessionData {
        messages: vec![
            spawn("s1"),
            started("s1", "sa-1"),
            spawn("s2"),
            started("s2", "sa-2"),
        ],
        ..SessionData::default()
    };
    let call = |parent: &str, id: &str, tool: &str, result: ToolResult| SubagentCall {
        parent_call_id: parent.into(),
        subagent_id: format!("sub-of-{parent}"),
        call_id: id.into(),
        tool_name: tool.into(),
        args: json!({"n": id}),
        result,
    };
    let calls = [
        call("s1", "a", "list_dir", ToolResult::text("one")),
        call("s2", "b", "exec", ToolResult::error("<i>failed</i>")),
        call("s1", "c", "read_file", ToolResult::text("two")),
        call("s1", "d", "exec", ToolResult::text("three")),
        call(
            "gone",
            "e",
            "exec",
            ToolResult::text("of a spawn not in the session"),
        ),
    ];
    let html = to_html(&data, &calls, &HtmlOptions::default());
    let doc = Html::parse_document(&html);
    let cards = select(doc.root_element(), "section.assistant > details.tool");
    assert_eq!(cards.len(), 2, "{html}");
    assert_eq!(nested_names(cards[0]), ["list_dir", "read_file", "exec"]);
    assert_eq!(nested_names(cards[1]), ["exec"]);
    let failed = select(cards[1], ".subagent-call details.tool").remove(0);
    assert!(failed.value().classes().any(|c| c == "error"));
    assert_eq!(
        text(select(failed, "pre.result").remove(0)),
        "<i>failed</i>"
    );
    assert!(select(doc.root_element(), "i").is_empty());
    assert!(!html.contains("of a spawn not in the session"));
}
