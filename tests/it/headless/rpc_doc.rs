//! docs/rpc.md and the RPC output agree: the commands its table documents are the ones
//! the process takes, and the fields it lists for `get_state` and a `get_requests` row
//! are the ones the output has (the row from its type, the state from a real process).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::rpc::{Rpc, is_type};
use claw_tui::inspect::rows::RequestRow;
use std::collections::BTreeSet;

fn doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rpc.md")).unwrap()
}

/// The cell of the commands table that describes `command`.
fn described(command: &str) -> String {
    let start = format!("| `{command}` |");
    doc()
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("docs/rpc.md has no row for {command}"))
        .rsplit(" | ")
        .next()
        .unwrap()
        .to_owned()
}

/// The `code` names of `text` outside parentheses (the top-level fields a cell lists).
fn top_level_names(text: &str) -> BTreeSet<String> {
    let mut depth = 0u32;
    let mut plain = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_documented_commands_are_the_ones_taken() {
    let documented: BTreeSet<String> = doc()
        .lines()
        .skip_while(|l| !l.starts_with("## Commands"))
        .take_while(|l| !l.starts_with("## Output"))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"frobnicate"}"#);
    let answer = rpc.until(|l| is_type(l, "response")).pop().unwrap();
    let error = answer["error"].as_str().unwrap();
    let taken: BTreeSet<String> = error
        .rsplit("expected one of ")
        .next()
        .unwrap()
        .split(", ")
        .map(str::to_owned)
        .collect();
    assert_eq!(documented, taken, "{error}");
    rpc.close_and_wait();
}

#[test]
fn get_state_has_the_documented_fields() {
    let mut rpc = Rpc::start(0);
    rpc.send(r#"{"type":"get_state"}"#);
    let answer = rpc.until(|l| is_type(l, "response")).pop().unwrap();
    let fields: BTreeSet<String> = answer["state"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut documented = top_level_names(&described("get_state"));
    documented.remove("state");
    assert_eq!(documented, fields);
    rpc.close_and_wait();
}

#[test]
fn a_request_row_has_the_documented_fields() {
    let row = RequestRow {
        index: 1,
        turn: 1,
        agent: "main".into(),
        model: "m".into(),
        input: 0,
        output: 0,
        cached: 0,
        ttft_ms: None,
        duration_ms: None,
        status: "200".into(),
        error: None,
        bytes: 0,
    };
    let fields: BTreeSet<String> = serde_json::to_value(&row)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut documented = top_level_names(&described("get_requests"));
    documented.remove("requests");
    assert_eq!(documented, fields);
}
