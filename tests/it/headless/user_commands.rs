//! A custom command and a `$skill` mention in `-p` and in RPC's `prompt`, as in the
//! client: the command's file becomes the prompt, the skill's file is attached.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::rpc::{Rpc, is_type};
use std::sync::Arc;

/// A namespaced command that mentions a skill, in the sandbox's workspace.
fn with_command_and_skill() -> Sandbox {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    std::fs::create_dir_all(ws.join(".claude/commands/git")).unwrap();
    std::fs::write(
        ws.join(".claude/commands/git/pr.md"),
        "---\nargument-hint: [branch]\n---\nOpen a PR for $1 in $house-style.\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join(".claude/skills/house-style")).unwrap();
    std::fs::write(
        ws.join(".claude/skills/house-style/SKILL.md"),
        "---\nname: house-style\ndescription: how we write\n---\nShort sentences only.\n",
    )
    .unwrap();
    sb
}

fn session_text(sb: &Sandbox) -> String {
    let files = sb.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).unwrap()
}

#[test]
fn print_mode_runs_a_custom_command_with_its_skill() {
    let sb = with_command_and_skill();
    let mut cmd = sb.command();
    cmd.args(["-p", "/git:pr feature-x"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let text = session_text(&sb);
    assert!(
        text.contains("Open a PR for feature-x in $house-style."),
        "{text}"
    );
    assert!(text.contains(r#"<skill name=\"house-style\""#), "{text}");
    assert!(text.contains("Short sentences only."), "{text}");
    assert!(!text.contains("/git:pr feature-x"), "{text}");
}

#[test]
fn rpc_prompt_runs_a_custom_command() {
    let sb = Arc::new(with_command_and_skill());
    let mut rpc = Rpc::start_in(sb.clone(), 0, &[]);
    rpc.send(r#"{"type":"prompt","content":"/git:pr topic-7"}"#);
    rpc.until_all(&[&|l| is_type(l, "agent_end"), &|l| is_type(l, "response")]);
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
    let text = session_text(&sb);
    assert!(
        text.contains("Open a PR for topic-7 in $house-style."),
        "{text}"
    );
    assert!(text.contains("Short sentences only."), "{text}");
}
