#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The tool policy: what each kind of agent is offered (disabled tools, the subagent
//! exclusions, per-tool rules as MCP servers will set them), and that the tools it hands
//! out carry the approval gate themselves.

use crate::support::BUILTIN_TOOLS;
use crate::support::{DEADLINE, FnTool, text_schema};
use claw_tui::agent::{Tool, ToolResult, ToolSet, ToolSpec, ToolUpdates};
use claw_tui::tools::exec::{ApprovalAsker, ApprovalDecision, ApprovalMode, Approver};
use claw_tui::tools::policy::{
    AgentKind, AgentRole, PolicyConfig, SubagentRef, ToolPolicy, ToolRules,
};
use claw_tui::tools::{READ_ONLY_TOOLS, ToolRegistry};
use futures::FutureExt;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A tool that counts its runs.
/// A tool called `name` that counts its runs; read-only as the built-in of that name
/// says it is.
fn counted(name: &str, runs: &Arc<AtomicUsize>) -> Arc<dyn Tool> {
    let runs = runs.clone();
    let reply = format!("{name} ran");
    let mut spec = ToolSpec::new(name, name, "a test tool", text_schema());
    spec.read_only = READ_ONLY_TOOLS.contains(&name);
    FnTool::with_spec(spec, move |_, _, _, _| {
        runs.fetch_add(1, Ordering::SeqCst);
        let reply = reply.clone();
        async move { ToolResult::text(reply) }
    })
}

fn builtin_like(runs: &Arc<AtomicUsize>) -> ToolRegistry {
    BUILTIN_TOOLS.iter().map(|n| counted(n, runs)).collect()
}

fn names(tools: &ToolSet) -> Vec<String> {
    tools.names()
}

fn subagent() -> AgentRole {
    AgentRole::Subagent(SubagentRef {
        id: "subagent-1".into(),
        label: "Task 1".into(),
        task: "look around".into(),
    })
}

/// Calls `name` from `tools` through its pipeline, as the agent loop does.
async fn call(tools: &ToolSet, name: &str) -> ToolResult {
    let cancel = CancellationToken::new();
    let updates = ToolUpdates::discard();
    let run = tools.call(None, name, "c1", json!({"text": "x"}), &cancel, &updates);
    tokio::time::timeout(DEADLINE, run).await.unwrap()
}

#[test]
fn disabled_tools_are_offered_to_no_agent_and_subagents_lack_the_excluded_ones() {
    let runs = Arc::new(AtomicUsize::new(0));
    let config = PolicyConfig {
        disabled: vec!["exec".into(), "write_file".into(), "typo".into()],
        ..PolicyConfig::default()
    };
    let policy = ToolPolicy::new(builtin_like(&runs), config, Approver::Nobody);
    assert_eq!(
        names(&policy.tools_for(&AgentRole::Main)),
        [
            "read_file",
            "edit_file",
            "list_dir",
            "spawn",
            "message",
            "cron"
        ]
    );
    assert_eq!(
        names(&policy.tools_for(&subagent())),
        ["read_file", "list_dir"]
    );
    assert_eq!(
        policy.names_for(AgentKind::Subagent),
        ["read_file", "list_dir"]
    );
    assert!(policy.tools_for(&AgentRole::Main).get("exec").is_none());
    assert!(policy.tools_for(&subagent()).get("spawn").is_none());
    assert!(policy.tools_for(&AgentRole::Main).get("spawn").is_some());
    assert_eq!(policy.unknown_disabled(), ["typo"]);
}

#[test]
fn handed_out_tools_describe_themselves_as_the_real_ones() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = builtin_like(&runs);
    let policy = ToolPolicy::new(registry.clone(), PolicyConfig::default(), Approver::Nobody);
    let handed = policy.tools_for(&AgentRole::Main);
    assert_eq!(names(&handed), BUILTIN_TOOLS);
    for (tool, real) in handed.tools().iter().zip(registry.tools()) {
        assert_eq!(tool.label(), real.label());
        assert_eq!(tool.description(), real.description());
        assert_eq!(tool.parameters(), real.parameters());
    }
}

#[tokio::test]
async fn per_tool_rules_set_approval_and_subagent_access_for_any_tool() {
    // What an MCP server's `approval = "ask"` and `subagents = false` will register.
    let runs = Arc::new(AtomicUsize::new(0));
    let policy = ToolPolicy::new(
        ToolRegistry::new(),
        PolicyConfig::default(),
        Approver::Nobody,
    );
    let rules = ToolRules {
        subagents: false,
        approval: ApprovalMode::Ask,
        read_only: false,
    };
    policy.register_with(counted("mcp__db__query", &runs), rules);
    policy.register_with(
        counted("mcp__db__schema", &runs),
        ToolRules {
            subagents: true,
            approval: ApprovalMode::Never,
            read_only: true,
        },
    );
    assert_eq!(names(&policy.tools_for(&subagent())), ["mcp__db__schema"]);
    let result = call(&policy.tools_for(&AgentRole::Main), "mcp__db__query").await;
    assert!(result.is_error);
    assert!(
        result.content.contains("without anyone to ask"),
        "{result:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the refused call never ran");
    let schema = call(&policy.tools_for(&subagent()), "mcp__db__schema").await;
    assert_eq!(schema, ToolResult::text("mcp__db__schema ran"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Built-in defaults: only exec asks, following [exec] approval.
    let config = PolicyConfig {
        exec_approval: ApprovalMode::AlwaysDeny,
        ..PolicyConfig::default()
    };
    let defaults = ToolPolicy::new(ToolRegistry::new(), config, Approver::Nobody);
    assert_eq!(
        defaults.default_rules(&*counted("exec", &runs)).approval,
        ApprovalMode::AlwaysDeny
    );
    assert_eq!(
        defaults
            .default_rules(&*counted("write_file", &runs))
            .approval,
        ApprovalMode::Never
    );
    assert!(!defaults.default_rules(&*counted("spawn", &runs)).subagents);
    assert!(
        defaults
            .default_rules(&*counted("read_file", &runs))
            .subagents
    );
}

#[tokio::test]
async fn requests_name_the_calling_subagent_and_allow_session_holds_for_every_agent() {
    let runs = Arc::new(AtomicUsize::new(0));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let asker: ApprovalAsker = Arc::new(move |request| {
        log.lock().unwrap().push(request);
        async { ApprovalDecision::AllowSession }.boxed()
    });
    let config = PolicyConfig {
        exec_approval: ApprovalMode::Ask,
        ..PolicyConfig::default()
    };
    let policy = ToolPolicy::new(builtin_like(&runs), config, Approver::Ask(asker));
    let from_subagent = call(&policy.tools_for(&subagent()), "exec").await;
    assert_eq!(from_subagent, ToolResult::text("exec ran"));
    let asked_now = asked.lock().unwrap().clone();
    assert_eq!(asked_now.len(), 1);
    let who = asked_now[0].subagent.as_ref().unwrap();
    assert_eq!(
        (who.id.as_str(), who.task.as_str()),
        ("subagent-1", "look around")
    );
    // Allowed for the session: the main agent's exec runs without asking again.
    let from_main = call(&policy.tools_for(&AgentRole::Main), "exec").await;
    assert_eq!(from_main, ToolResult::text("exec ran"));
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[test]
fn a_tool_registered_again_replaces_the_old_one() {
    let runs = Arc::new(AtomicUsize::new(0));
    let policy = ToolPolicy::new(
        builtin_like(&runs),
        PolicyConfig::default(),
        Approver::Nobody,
    );
    let replacement = FnTool::new("exec", json!({"type": "object"}), |_, _, _, _| async {
        ToolResult::text("new exec")
    });
    policy.register(replacement);
    let handed = policy.tools_for(&AgentRole::Main);
    assert_eq!(names(&handed), BUILTIN_TOOLS, "same place, no duplicate");
    assert_eq!(handed.tools()[4].parameters(), json!({"type": "object"}));
}

#[test]
fn the_planner_is_offered_only_read_only_tools() {
    // The built-ins that change nothing, and an MCP tool only when marked read-only.
    let runs = Arc::new(AtomicUsize::new(0));
    let config = PolicyConfig {
        disabled: vec!["list_dir".into()],
        ..PolicyConfig::default()
    };
    let policy = ToolPolicy::new(builtin_like(&runs), config, Approver::Nobody);
    let rules = |read_only| ToolRules {
        subagents: true,
        approval: ApprovalMode::Never,
        read_only,
    };
    policy.register_with(counted("mcp__db__query", &runs), rules(true));
    policy.register_with(counted("mcp__db__drop", &runs), rules(false));
    assert_eq!(
        names(&policy.tools_for(&AgentRole::Planner)),
        ["read_file", "mcp__db__query"],
        "disabled tools stay out too"
    );
    assert_eq!(
        policy.names_for_role(&AgentRole::Planner),
        ["read_file", "mcp__db__query"]
    );
    assert!(policy.tools_for(&AgentRole::Planner).get("exec").is_none());
    assert!(
        policy
            .tools_for(&AgentRole::Planner)
            .get("mcp__db__drop")
            .is_none()
    );
    assert!(
        policy
            .tools_for(&AgentRole::Main)
            .get("mcp__db__drop")
            .is_some()
    );
    for name in [
        "write_file",
        "edit_file",
        "exec",
        "cron",
        "spawn",
        "message",
    ] {
        assert!(
            !policy.default_rules(&*counted(name, &runs)).read_only,
            "{name}"
        );
    }
}
