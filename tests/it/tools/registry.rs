#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The tool registry: registration, lookup, definitions, exclusion for subagents, the
//! `[tools]` config section, and what an agent built from it offers the model.

use crate::support::{
    BUILTIN_TOOLS, FnTool, Reply, ScriptedProvider, text_schema, until_agent_end,
};
use claw_tui::agent::{Agent, AgentEvent, Message, Tool, ToolResult};
use claw_tui::tools::exec::{Approver, ExecConfig};
use claw_tui::tools::policy::{AgentKind, PolicyConfig, ToolPolicy};
use claw_tui::tools::{SUBAGENT_EXCLUDED, ToolRegistry, ToolsConfig};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

fn named(name: &str) -> Arc<dyn Tool> {
    let reply = format!("{name} ran");
    FnTool::new(name, text_schema(), move |_, _, _, _| {
        let reply = reply.clone();
        async move { ToolResult::text(reply) }
    })
}

fn full_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for name in BUILTIN_TOOLS {
        assert!(registry.register(named(name)).is_none());
    }
    registry
}

#[test]
fn register_get_and_names_keep_registration_order() {
    let registry = full_registry();
    assert_eq!(registry.len(), 8);
    assert!(!registry.is_empty());
    assert_eq!(registry.names(), BUILTIN_TOOLS);
    assert_eq!(registry.get("exec").unwrap().name(), "exec");
    assert!(registry.get("nope").is_none());
    assert!(registry.contains("cron"));
    assert!(!ToolRegistry::new().contains("cron"));
    assert!(ToolRegistry::new().is_empty());
}

#[test]
fn registering_a_name_again_replaces_in_place() {
    let mut registry = full_registry();
    let replacement = FnTool::new("exec", json!({"type": "object"}), |_, _, _, _| async {
        ToolResult::text("new exec")
    });
    let old = registry.register(replacement).unwrap();
    assert_eq!(old.parameters(), text_schema());
    assert_eq!(registry.len(), 8);
    assert_eq!(registry.names()[4], "exec");
    assert_eq!(
        registry.get("exec").unwrap().parameters(),
        json!({"type": "object"})
    );
}

#[test]
fn definitions_are_what_the_tools_describe() {
    let registry = full_registry();
    let defs = registry.definitions();
    assert_eq!(defs.len(), 8);
    for (def, tool) in defs.iter().zip(registry.tools()) {
        assert_eq!(def.name, tool.name());
        assert_eq!(def.description, tool.description());
        assert_eq!(def.parameters, tool.parameters());
    }
    assert_eq!(defs[0].name, "read_file");
}

#[test]
fn exclude_returns_a_new_registry_and_leaves_the_original_untouched() {
    let registry = full_registry();
    let sub = registry.exclude(&SUBAGENT_EXCLUDED);
    assert_eq!(sub.names(), ["read_file", "write_file", "list_dir", "exec"]);
    assert_eq!(registry.len(), 8);
    assert!(registry.contains("spawn") && registry.contains("edit_file"));
    // Unknown names are simply not there to exclude.
    let same = registry.exclude(&["no_such_tool"]);
    assert_eq!(same.names(), registry.names());
    let owned: Vec<String> = vec!["exec".into()];
    assert!(!registry.exclude(&owned).contains("exec"));
}

#[test]
fn disable_removes_tools_and_reports_unknown_names() {
    let mut registry = full_registry();
    let unknown = registry.disable(&["exec", "web_serch", "cron"]);
    assert_eq!(unknown, ["web_serch"]);
    assert_eq!(
        registry.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "spawn",
            "message"
        ]
    );
    assert!(registry.disable::<&str>(&[]).is_empty());
    assert_eq!(registry.len(), 6);
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(default)]
    tools: ToolsConfig,
}

#[test]
fn the_tools_section_parses_with_defaults() {
    let empty: ConfigFile = toml::from_str("").unwrap();
    assert_eq!(empty.tools, ToolsConfig::default());
    assert!(empty.tools.disabled.is_empty());
    assert!(!empty.tools.allow_outside_workspace);

    let partial: ConfigFile = toml::from_str("[tools]\ndisabled = [\"exec\"]\n").unwrap();
    assert_eq!(partial.tools.disabled, ["exec"]);
    assert!(!partial.tools.allow_outside_workspace);

    let full: ConfigFile = toml::from_str(
        "[tools]\ndisabled = [\"exec\", \"cron\"]\nallow_outside_workspace = true\n",
    )
    .unwrap();
    assert_eq!(
        full.tools,
        ToolsConfig {
            disabled: vec!["exec".into(), "cron".into()],
            allow_outside_workspace: true,
        }
    );

    let wrong: Result<ConfigFile, _> = toml::from_str("[tools]\ndisabled = \"exec\"\n");
    assert!(wrong.is_err());
}

#[test]
fn the_config_applies_to_the_policy_and_a_workspace() {
    let config = ToolsConfig {
        disabled: vec!["spawn".into(), "typo".into()],
        allow_outside_workspace: true,
    };
    let policy = ToolPolicy::new(
        full_registry(),
        PolicyConfig::new(&config, &ExecConfig::default()),
        Approver::Nobody,
    );
    assert_eq!(policy.unknown_disabled(), ["typo"]);
    assert!(
        !policy
            .names_for(AgentKind::Main)
            .contains(&"spawn".to_owned())
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = config.workspace(dir.path());
    assert!(ws.allows_outside());
    assert_eq!(ws.root(), dir.path().canonicalize().unwrap());
    assert!(
        !ToolsConfig::default()
            .workspace(dir.path())
            .allows_outside()
    );
}

#[tokio::test]
async fn an_agent_offers_only_the_registry_tools_and_cannot_call_disabled_ones() {
    let mut registry = full_registry();
    registry.disable(&["exec"]);
    let sub = registry.exclude(&SUBAGENT_EXCLUDED);
    let provider = ScriptedProvider::new(vec![
        Reply::tool_calls(&[
            ("c1", "read_file", json!({"text": "a"})),
            ("c2", "exec", json!({"text": "ls"})),
        ]),
        Reply::text(&["done"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    agent.set_tools(sub.tools());
    let mut rx = agent.subscribe(None);
    agent.prompt("go").unwrap();
    let events = until_agent_end(&mut rx).await;

    let offered: Vec<String> = provider.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(offered, sub.names());
    assert_eq!(provider.requests()[0].tools, sub.definitions());
    let results: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd {
                message: Message::ToolResult(r),
            } => Some((r.content.clone(), r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], ("read_file ran".to_owned(), false));
    assert!(results[1].1, "a disabled tool cannot run: {:?}", results[1]);
    assert!(results[1].0.contains("not found"), "{}", results[1].0);
}
