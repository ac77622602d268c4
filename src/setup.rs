//! Builds the main agent from resolved settings: provider, tools, prompt, limits.

use crate::agent::Agent;
use crate::tools::ToolRegistry;
use crate::tools::exec::{ApprovalAsker, ExecTool, approval_hook};
use crate::tools::fs::file_tools;
use crate::tools::message::{MessageSender, MessageTool};
use crate::tools::web::{WebFetchTool, WebSearchTool};
use crate::config::{Api, DEMO_MODEL, ProviderSpec, Settings};
use crate::llm::Provider;
use crate::llm::demo::DemoProvider;
use std::sync::Arc;
use std::time::Duration;

/// The provider the settings name.
pub fn build_provider(spec: &ProviderSpec, settings: &Settings) -> Result<Arc<dyn Provider>, String> {
    match spec.api {
        Api::Demo => Ok(Arc::new(DemoProvider::new(
            Duration::from_millis(settings.demo_pace_ms),
            settings.config_path.display().to_string(),
        )?)),
        Api::Anthropic | Api::Openai => Err(format!(
            "the {:?} provider is not available in this build; use --provider demo",
            spec.api
        )),
    }
}

/// The system prompt: who the agent is, where it works, and the user's instructions.
pub fn system_prompt(settings: &Settings) -> String {
    let mut prompt = format!(
        "You are claw-tui, a coding and operations agent working in a terminal.\n\
         Workspace: {}\n\
         Use the tools to inspect and change files and to run commands; paths are relative \
         to the workspace. Be concise; show the user what you did and what you found.",
        settings.workspace.display()
    );
    if let Some(extra) = &settings.instructions {
        prompt.push_str("\n\n");
        prompt.push_str(extra);
    }
    prompt
}

/// The main agent's tools; `outbound` delivers what the `message` tool sends.
/// Returns the registry and the names of disabled tools that did not exist.
pub fn build_registry(settings: &Settings, outbound: MessageSender) -> (ToolRegistry, Vec<String>) {
    let workspace = Arc::new(settings.file.tools.workspace(settings.workspace.clone()));
    let mut registry = ToolRegistry::new();
    for tool in file_tools(workspace) {
        registry.register(tool);
    }
    registry.register(Arc::new(ExecTool::new(
        settings.workspace.clone(),
        settings.file.exec.clone(),
    )));
    registry.register(Arc::new(WebSearchTool::new(settings.file.web.clone())));
    registry.register(Arc::new(WebFetchTool::new(settings.file.web.clone())));
    registry.register(Arc::new(MessageTool::new(outbound)));
    let unknown = registry.apply_config(&settings.file.tools);
    (registry, unknown)
}

/// The main agent for `settings`, with `tools`; `asker` answers `exec` approval requests
/// when `[exec] approval = "ask"`.
pub fn build_agent(
    settings: &Settings,
    tools: &ToolRegistry,
    asker: ApprovalAsker,
) -> Result<Agent, String> {
    let provider = build_provider(&settings.provider, settings)?;
    let model = match settings.provider.api {
        Api::Demo => DEMO_MODEL.to_owned(),
        _ => settings.provider.model.clone(),
    };
    let agent = Agent::new(provider, model);
    agent.set_system_prompt(system_prompt(settings));
    agent.set_thinking_level(settings.thinking);
    agent.set_tool_execution(settings.tool_execution);
    agent.set_max_turns(settings.max_turns);
    agent.set_tools(tools.tools());
    agent.set_before_tool_call(Some(approval_hook(settings.file.exec.approval, asker)));
    Ok(agent)
}
