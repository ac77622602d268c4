#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `exec` approval as the tool policy enforces it (never, always-deny, ask, nobody to
//! ask, `--yes`, abort while asking), on real commands, and the `[exec]` config.

use crate::support::exec::scripted_asker;
use crate::support::exec::tool;
use crate::support::{DEADLINE, Reply, ScriptedProvider, echo_tool, until_agent_end};
use claw_tui::agent::{Agent, AgentEvent, Tool, ToolResult, ToolUpdates};
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::exec::{
    ALWAYS_DENY_REASON, ApprovalAsker, ApprovalDecision, ApprovalMode, ApprovalRequest, Approver,
    ExecConfig, NOBODY_TO_ASK_REASON, SandboxMode, USER_DENIED_REASON,
};
use claw_tui::tools::policy::{
    AgentRole, CANCELLED_WHILE_ASKING, PolicyConfig, SubagentRef, ToolPolicy,
};
use futures::FutureExt;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The policy over a real `exec` (sandboxed, in `workspace`) and `echo`.
fn policy(workspace: &Path, mode: ApprovalMode, approver: Approver) -> ToolPolicy {
    let registry: ToolRegistry = [Arc::new(tool(workspace)) as Arc<dyn Tool>, echo_tool()]
        .into_iter()
        .collect();
    let config = PolicyConfig {
        exec_approval: mode,
        ..PolicyConfig::default()
    };
    ToolPolicy::new(registry, config, approver)
}

/// Calls `name` as the main agent would get it from `policy`.
async fn call(policy: &ToolPolicy, name: &str, id: &str, args: Value) -> ToolResult {
    let tools = policy.tools_for(&AgentRole::Main);
    let (cancel, updates) = (CancellationToken::new(), ToolUpdates::discard());
    let run = tools.call(None, name, id, args, &cancel, &updates);
    tokio::time::timeout(DEADLINE, run).await.unwrap()
}

fn touch(name: &str) -> Value {
    json!({"command": format!("touch {name} && echo ran-{name}")})
}

#[tokio::test]
async fn never_lets_everything_through() {
    let dir = tempfile::tempdir().unwrap();
    let (asker, asked) = scripted_asker(&[]);
    let policy = policy(dir.path(), ApprovalMode::Never, Approver::Ask(asker));
    let result = call(&policy, "exec", "1", touch("one")).await;
    assert!(result.content.starts_with("ran-one\n"), "{result:?}");
    assert!(dir.path().join("one").exists());
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn always_deny_blocks_exec_only_even_with_yes() {
    let dir = tempfile::tempdir().unwrap();
    for approver in [Approver::AllowAll, Approver::Nobody] {
        let policy = policy(dir.path(), ApprovalMode::AlwaysDeny, approver);
        let result = call(&policy, "exec", "1", touch("one")).await;
        assert_eq!(result, ToolResult::error(ALWAYS_DENY_REASON));
        let echoed = call(&policy, "echo", "2", json!({"text": "hi"})).await;
        assert_eq!(echoed, ToolResult::text("hi"));
    }
    assert!(!dir.path().join("one").exists(), "the command never ran");
}

#[tokio::test]
async fn ask_asks_each_time_until_allowed_for_the_session() {
    use ApprovalDecision::*;
    let dir = tempfile::tempdir().unwrap();
    let (asker, asked) = scripted_asker(&[Deny, Allow, AllowSession]);
    let policy = policy(dir.path(), ApprovalMode::Ask, Approver::Ask(asker));
    let denied = call(&policy, "exec", "1", touch("denied")).await;
    assert_eq!(denied, ToolResult::error(USER_DENIED_REASON));
    assert!(!dir.path().join("denied").exists());
    for (id, name) in [("2", "two"), ("3", "three"), ("4", "four"), ("5", "five")] {
        let result = call(&policy, "exec", id, touch(name)).await;
        assert!(
            result.content.starts_with(&format!("ran-{name}\n")),
            "{result:?}"
        );
        assert!(dir.path().join(name).exists());
    }
    // Approved for the session after the third question: later calls run unasked.
    let asked: Vec<ApprovalRequest> = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 3);
    assert_eq!(
        asked[0],
        ApprovalRequest {
            id: "approval-1".into(),
            tool_call_id: "1".into(),
            tool_name: "exec".into(),
            args: touch("denied"),
            subagent: None,
        }
    );
    let ids: Vec<&str> = asked.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["approval-1", "approval-2", "approval-3"],
        "unique ids"
    );

    // A new policy is a new session.
    let (asker, asked_again) = scripted_asker(&[Deny]);
    let fresh = self::policy(dir.path(), ApprovalMode::Ask, Approver::Ask(asker));
    let result = call(&fresh, "exec", "6", touch("six")).await;
    assert!(result.is_error);
    assert!(!dir.path().join("six").exists());
    assert_eq!(asked_again.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn ask_with_nobody_to_ask_is_denied_and_yes_allows() {
    let dir = tempfile::tempdir().unwrap();
    let nobody = policy(dir.path(), ApprovalMode::Ask, Approver::Nobody);
    let result = call(&nobody, "exec", "1", touch("one")).await;
    assert_eq!(result, ToolResult::error(NOBODY_TO_ASK_REASON));
    assert!(!dir.path().join("one").exists());

    let yes = policy(dir.path(), ApprovalMode::Ask, Approver::AllowAll);
    let result = call(&yes, "exec", "1", touch("one")).await;
    assert!(result.content.starts_with("ran-one\n"), "{result:?}");
    assert!(dir.path().join("one").exists());
}

#[tokio::test]
async fn an_abort_while_asking_ends_the_call_without_running_it() {
    let dir = tempfile::tempdir().unwrap();
    let (asked_tx, mut asked_rx) = tokio::sync::mpsc::unbounded_channel();
    // Never answers: only the abort can end the wait.
    let asker: ApprovalAsker = Arc::new(move |request| {
        let _ = asked_tx.send(request);
        futures::future::pending().boxed()
    });
    let policy = policy(dir.path(), ApprovalMode::Ask, Approver::Ask(asker));
    let tools = policy.tools_for(&AgentRole::Main);
    let cancel = CancellationToken::new();
    let run = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let updates = ToolUpdates::discard();
            tools
                .call(None, "exec", "1", touch("one"), &cancel, &updates)
                .await
        })
    };
    let request = tokio::time::timeout(DEADLINE, asked_rx.recv())
        .await
        .unwrap();
    assert_eq!(request.unwrap().tool_call_id, "1");
    cancel.cancel();
    let result = tokio::time::timeout(DEADLINE, run).await.unwrap().unwrap();
    assert_eq!(result, ToolResult::error(CANCELLED_WHILE_ASKING));
    assert!(!dir.path().join("one").exists());
}

/// Runs `exec` calls through the agent loop with the policy's tools; returns the results
/// in call order (`c1`, `c2`, `c3`).
async fn run_agent(policy: &ToolPolicy) -> Vec<ToolResult> {
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("c1", "exec", touch("one")),
            ("c2", "echo", json!({"text": "echoed"})),
        ]),
        Reply::tool_calls(&[("c3", "exec", touch("two"))]),
        Reply::text(&["done"]),
    ]);
    let agent = Agent::new(provider, "scripted");
    policy.equip(&agent, &AgentRole::Main);
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
async fn the_policy_gates_real_commands_in_the_agent_loop() {
    let dir = tempfile::tempdir().unwrap();
    let results = run_agent(&policy(
        dir.path(),
        ApprovalMode::AlwaysDeny,
        Approver::Nobody,
    ))
    .await;
    let contents: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(contents, [ALWAYS_DENY_REASON, "echoed", ALWAYS_DENY_REASON]);
    assert!(!dir.path().join("one").exists() && !dir.path().join("two").exists());

    let dir = tempfile::tempdir().unwrap();
    let (asker, asked) = scripted_asker(&[ApprovalDecision::AllowSession]);
    let results = run_agent(&policy(dir.path(), ApprovalMode::Ask, Approver::Ask(asker))).await;
    assert!(results[0].content.starts_with("ran-one\n"), "{results:?}");
    assert!(results[2].content.starts_with("ran-two\n"), "{results:?}");
    assert_eq!(asked.lock().unwrap().len(), 1, "allow_session asks once");

    let dir = tempfile::tempdir().unwrap();
    let (asker, asked) = scripted_asker(&[ApprovalDecision::Allow, ApprovalDecision::Deny]);
    let results = run_agent(&policy(dir.path(), ApprovalMode::Ask, Approver::Ask(asker))).await;
    assert!(results[0].content.starts_with("ran-one\n"));
    assert_eq!(results[2].content, USER_DENIED_REASON);
    assert!(results[2].is_error);
    assert!(dir.path().join("one").exists() && !dir.path().join("two").exists());
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[test]
fn wire_formats() {
    let request = ApprovalRequest {
        id: "approval-1".into(),
        tool_call_id: "c1".into(),
        tool_name: "exec".into(),
        args: json!({"command": "ls"}),
        subagent: None,
    };
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        json!({"id": "approval-1", "tool_call_id": "c1", "tool_name": "exec", "args": {"command": "ls"}})
    );
    let from_subagent = ApprovalRequest {
        subagent: Some(SubagentRef {
            id: "subagent-2".into(),
            label: "tests".into(),
            task: "run the tests".into(),
        }),
        ..request
    };
    let value = serde_json::to_value(&from_subagent).unwrap();
    assert_eq!(
        value["subagent"],
        json!({"id": "subagent-2", "label": "tests", "task": "run the tests"})
    );
    assert_eq!(
        serde_json::from_value::<ApprovalRequest>(value).unwrap(),
        from_subagent
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
