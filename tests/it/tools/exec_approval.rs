#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The `exec` approval policy as a `before_tool_call` hook, and the `[exec]` config.

use crate::support::exec::tool;
use crate::support::{Reply, ScriptedProvider, echo_tool, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, BeforeToolCall, BeforeToolCallContext, ToolResult};
use claw_tui::tools::exec::{
    ALWAYS_DENY_REASON, ApprovalAsker, ApprovalDecision, ApprovalMode, ApprovalRequest, ExecConfig,
    SandboxMode, USER_DENIED_REASON, approval_hook,
};
use futures::FutureExt;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// An asker answering from a script and recording what it was asked.
fn scripted_asker(
    answers: &[ApprovalDecision],
) -> (ApprovalAsker, Arc<Mutex<Vec<ApprovalRequest>>>) {
    let answers = Arc::new(Mutex::new(answers.iter().copied().collect::<VecDeque<_>>()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let asker: ApprovalAsker = Arc::new(move |request| {
        log.lock().unwrap().push(request);
        let answer = answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("asked too often");
        async move { answer }.boxed()
    });
    (asker, asked)
}

fn exec_call(id: &str, command: &str) -> BeforeToolCallContext {
    BeforeToolCallContext {
        tool_call_id: id.to_owned(),
        tool_name: "exec".to_owned(),
        args: json!({"command": command}),
    }
}

#[tokio::test]
async fn never_lets_everything_through() {
    let (asker, asked) = scripted_asker(&[]);
    let hook = approval_hook(ApprovalMode::Never, asker);
    assert_eq!(
        hook(exec_call("1", "ls")).await,
        Ok(BeforeToolCall::Continue)
    );
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn always_deny_blocks_exec_only() {
    let (asker, asked) = scripted_asker(&[]);
    let hook = approval_hook(ApprovalMode::AlwaysDeny, asker);
    assert_eq!(
        hook(exec_call("1", "ls")).await,
        Ok(BeforeToolCall::Block {
            reason: ALWAYS_DENY_REASON.to_owned()
        })
    );
    let other = BeforeToolCallContext {
        tool_call_id: "2".into(),
        tool_name: "read_file".into(),
        args: json!({}),
    };
    assert_eq!(hook(other).await, Ok(BeforeToolCall::Continue));
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn ask_asks_each_time_until_allowed_for_the_session() {
    use ApprovalDecision::*;
    let (asker, asked) = scripted_asker(&[Deny, Allow, AllowSession]);
    let hook = approval_hook(ApprovalMode::Ask, asker);
    assert_eq!(
        hook(exec_call("1", "rm x")).await,
        Ok(BeforeToolCall::Block {
            reason: USER_DENIED_REASON.to_owned()
        })
    );
    assert_eq!(
        hook(exec_call("2", "ls")).await,
        Ok(BeforeToolCall::Continue)
    );
    assert_eq!(
        hook(exec_call("3", "pwd")).await,
        Ok(BeforeToolCall::Continue)
    );
    // Approved for the session: any later exec call, with any command, runs unasked.
    assert_eq!(
        hook(exec_call("4", "make")).await,
        Ok(BeforeToolCall::Continue)
    );
    assert_eq!(
        hook(exec_call("5", "ls -la")).await,
        Ok(BeforeToolCall::Continue)
    );
    let asked: Vec<ApprovalRequest> = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 3);
    assert_eq!(
        asked[0],
        ApprovalRequest {
            id: "1".into(),
            tool_name: "exec".into(),
            args: json!({"command": "rm x"})
        }
    );

    // A new hook is a new session.
    let (asker, asked_again) = scripted_asker(&[Deny]);
    let fresh = approval_hook(ApprovalMode::Ask, asker);
    assert!(matches!(
        fresh(exec_call("6", "ls")).await,
        Ok(BeforeToolCall::Block { .. })
    ));
    assert_eq!(asked_again.lock().unwrap().len(), 1);
}

/// Runs `exec` calls through the agent loop with the hook installed; returns the results
/// in call order (`c1`, `c2`, `c3`).
async fn run_agent(workspace: &Path, mode: ApprovalMode, asker: ApprovalAsker) -> Vec<ToolResult> {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            (
                "c1",
                "exec",
                json!({"command": "touch one && echo ran-one"}),
            ),
            ("c2", "echo", json!({"text": "echoed"})),
        ]),
        Reply::tool_calls(&[(
            "c3",
            "exec",
            json!({"command": "touch two && echo ran-two"}),
        )]),
        Reply::text(&["done"]),
    ]);
    let agent = Agent::new(provider, "scripted");
    agent.set_tools(vec![Arc::new(tool(workspace)), echo_tool()]);
    agent.set_before_tool_call(Some(approval_hook(mode, asker)));
    let mut rx = agent.subscribe(None);
    agent.prompt("go").unwrap();
    let mut results: Vec<(String, ToolResult)> = until_agent_end(&mut rx)
        .await
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                ..
            } => Some((tool_call_id, result)),
            _ => None,
        })
        .collect();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    results.into_iter().map(|(_, r)| r).collect()
}

#[tokio::test]
async fn the_hook_gates_real_commands_in_the_agent_loop() {
    let dir = tempfile::tempdir().unwrap();
    let (asker, _) = scripted_asker(&[]);
    let results = run_agent(dir.path(), ApprovalMode::AlwaysDeny, asker).await;
    let contents: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(contents, [ALWAYS_DENY_REASON, "echoed", ALWAYS_DENY_REASON]);
    assert!(!dir.path().join("one").exists() && !dir.path().join("two").exists());

    let dir = tempfile::tempdir().unwrap();
    let (asker, asked) = scripted_asker(&[ApprovalDecision::AllowSession]);
    let results = run_agent(dir.path(), ApprovalMode::Ask, asker).await;
    assert!(results[0].content.starts_with("ran-one\n"), "{results:?}");
    assert!(results[2].content.starts_with("ran-two\n"), "{results:?}");
    assert_eq!(asked.lock().unwrap().len(), 1, "allow_session asks once");

    let dir = tempfile::tempdir().unwrap();
    let (asker, asked) = scripted_asker(&[ApprovalDecision::Allow, ApprovalDecision::Deny]);
    let results = run_agent(dir.path(), ApprovalMode::Ask, asker).await;
    assert!(results[0].content.starts_with("ran-one\n"));
    assert_eq!(results[2].content, USER_DENIED_REASON);
    assert!(results[2].is_error);
    assert!(dir.path().join("one").exists() && !dir.path().join("two").exists());
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[test]
fn wire_formats() {
    let request = ApprovalRequest {
        id: "c1".into(),
        tool_name: "exec".into(),
        args: json!({"command": "ls"}),
    };
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        json!({"id": "c1", "tool_name": "exec", "args": {"command": "ls"}})
    );
    for (decision, text) in [
        (ApprovalDecision::Allow, "allow"),
        (ApprovalDecision::AllowSession, "allow_session"),
        (ApprovalDecision::Deny, "deny"),
    ] {
        assert_eq!(serde_json::to_value(decision).unwrap(), Value::from(text));
        assert_eq!(
            serde_json::from_value::<ApprovalDecision>(Value::from(text)).unwrap(),
            decision
        );
    }
}

#[test]
fn exec_config_from_toml() {
    let defaults: ExecConfig = toml::from_str("").unwrap();
    assert_eq!(defaults, ExecConfig::default());
    assert_eq!(defaults.default_timeout_secs, 30);
    assert_eq!(defaults.max_timeout_secs, 600);
    assert_eq!(defaults.max_output_bytes, 2 * 1024 * 1024);
    assert_eq!(defaults.approval, ApprovalMode::Never);
    assert_eq!(defaults.sandbox, SandboxMode::WorkspaceWrite);
    assert_eq!(defaults.launcher, None);

    let config: ExecConfig = toml::from_str(
        "sandbox = \"off\"\napproval = \"always-deny\"\nmax_timeout_secs = 60\n\
         launcher = \"/opt/claw-tui\"\n",
    )
    .unwrap();
    assert_eq!(config.sandbox, SandboxMode::Off);
    assert_eq!(config.approval, ApprovalMode::AlwaysDeny);
    assert_eq!(config.max_timeout_secs, 60);
    assert_eq!(config.default_timeout_secs, 30);
    assert_eq!(config.launcher.as_deref(), Some(Path::new("/opt/claw-tui")));
    let ask: ExecConfig = toml::from_str("approval = \"ask\"").unwrap();
    assert_eq!(ask.approval, ApprovalMode::Ask);

    let typo = toml::from_str::<ExecConfig>("aproval = \"ask\"").unwrap_err();
    assert!(
        typo.to_string().contains("unknown field `aproval`"),
        "{typo}"
    );
    let bad = toml::from_str::<ExecConfig>("sandbox = \"strict\"").unwrap_err();
    assert!(bad.to_string().contains("workspace-write"), "{bad}");
}
