//! Builds the main runtime from resolved settings: provider, the tool policy (every
//! agent's tools), subagents, the main agent and the supervisor that owns it.

use crate::agent::Agent;
use crate::config::{Api, DEMO_MODEL, ProviderSpec, Settings};
use crate::llm::Provider;
use crate::llm::demo::DemoProvider;
use crate::runtime::context::{ProjectContext, home_dir, system_prompt};
use crate::runtime::cron::{CronFired, CronOptions, CronService, SchedulerHandle};
use crate::runtime::subagents::SUBAGENT_SYSTEM_PROMPT;
use crate::runtime::{
    InboundMessage, MessageBus, RuntimeEvent, SYSTEM_CHANNEL, SubagentConfig, SubagentManager,
    Supervisor, runtime_channel,
};
use crate::session::{SessionData, SessionRouter, SessionWriter};
use crate::tools::ToolRegistry;
use crate::tools::Workspace;
use crate::tools::cron::{CronTool, UnavailableCron};
use crate::tools::exec::{Approver, ExecTool};
use crate::tools::fs::file_tools;
use crate::tools::message::{MessageSender, MessageTool};
use crate::tools::policy::{AgentKind, AgentRole, PolicyConfig, ToolPolicy};
use crate::tools::spawn::SpawnTool;
use crate::tools::web::{WebFetchTool, WebSearchTool};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The provider the settings name.
pub fn build_provider(
    spec: &ProviderSpec,
    settings: &Settings,
) -> Result<Arc<dyn Provider>, String> {
    match spec.api {
        Api::Demo => Ok(Arc::new(DemoProvider::new(
            Duration::from_millis(settings.demo_pace_ms),
            settings.config_path.display().to_string(),
        )?)),
        Api::Anthropic | Api::Openai | Api::OpenaiResponses => {
            crate::providers::build_remote_provider(
                spec,
                settings.idle_timeout_secs,
                settings.request_timeout_secs,
            )
        }
    }
}

/// The built-in tools (files, exec, web, message) over the settings' workspace and
/// sandbox; `outbound` delivers what the `message` tool sends. Agents get them only
/// through [`build_policy`].
fn build_registry(
    settings: &Settings,
    workspace: Workspace,
    outbound: MessageSender,
) -> ToolRegistry {
    let workspace = Arc::new(workspace);
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
    registry
}

/// The tool policy over the built-in tools, enforcing the settings' `[tools]` and
/// `[exec]` rules and asking `approver` when a call needs approval.
pub fn build_policy(
    settings: &Settings,
    outbound: MessageSender,
    approver: Approver,
) -> ToolPolicy {
    build_policy_in(settings, &project_context(settings), outbound, approver)
}

/// [`build_policy`] with the skills of `context` readable by the file tools.
fn build_policy_in(
    settings: &Settings,
    context: &ProjectContext,
    outbound: MessageSender,
    approver: Approver,
) -> ToolPolicy {
    ToolPolicy::new(
        build_registry(settings, workspace_for(settings, context), outbound),
        PolicyConfig::new(&settings.file.tools, &settings.file.exec),
        approver,
    )
}

/// A main agent with the tools of `policy`, without the background runtime (no
/// subagents, no supervisor): for front-ends that drive the agent directly.
pub fn build_agent(settings: &Settings, policy: &ToolPolicy) -> Result<Agent, String> {
    let provider = build_provider(&settings.provider, settings)?;
    let agent = Agent::new(provider, model_name(settings));
    configure_main_agent(&agent, settings, &project_context(settings), policy);
    Ok(agent)
}

fn model_name(settings: &Settings) -> String {
    match settings.provider.api {
        Api::Demo => DEMO_MODEL.to_owned(),
        _ => settings.provider.model.clone(),
    }
}

/// The instructions files and skills of the settings' workspace, found now.
pub fn project_context(settings: &Settings) -> ProjectContext {
    ProjectContext::discover(
        &settings.workspace,
        &config_dir(settings),
        home_dir().as_deref(),
        // The configured window, else the built-in table's; unknown: the default budget.
        settings
            .provider
            .context_window
            .filter(|w| *w > 0)
            .or_else(|| crate::agent::compaction::known_context_window(&model_name(settings))),
    )
}

/// The settings' workspace, with each listed skill's directory outside it readable
/// (never writable) by the file tools, so the model can follow a skill it was shown.
pub fn workspace_for(settings: &Settings, context: &ProjectContext) -> Workspace {
    context.readable_skill_dirs().into_iter().fold(
        settings.file.tools.workspace(settings.workspace.clone()),
        |w, dir| w.with_read_only(dir),
    )
}

fn configure_main_agent(
    agent: &Agent,
    settings: &Settings,
    context: &ProjectContext,
    policy: &ToolPolicy,
) {
    agent.set_system_prompt(system_prompt(
        context,
        &policy.names_for(AgentKind::Main),
        settings.instructions.as_deref(),
    ));
    agent.set_thinking_level(settings.thinking);
    agent.set_tool_execution(settings.tool_execution);
    agent.set_max_turns(settings.max_turns);
    agent.configure(|c| {
        c.compaction = settings.compaction.clone();
        c.context_window = settings.provider.context_window;
    });
    policy.equip(agent, &AgentRole::Main);
}

/// Everything a session of claw-tui runs on.
pub struct MainRuntime {
    /// The single owner of the main agent's runs: send prompts and steering through it.
    pub supervisor: Supervisor,
    /// The main agent (subscribe, state, settings).
    pub agent: Agent,
    /// The tool policy every agent of this runtime gets its tools from.
    pub policy: ToolPolicy,
    /// Background subagents.
    pub subagents: SubagentManager,
    /// The inbound bus (`system` channel: subagent and cron results).
    pub bus: MessageBus,
    /// Subagent and notification events for the UI and the JSON modes.
    pub events: mpsc::UnboundedReceiver<RuntimeEvent>,
    /// The workspace's cron jobs (None when the job file could not be opened).
    pub cron: Option<CronService>,
    /// Warnings for the user (unknown disabled tools...).
    pub warnings: Vec<String>,
    /// The instructions files and skills the prompts were built from.
    pub context: Arc<ProjectContext>,
}

impl MainRuntime {
    /// The handle that ties sessions to this runtime.
    pub fn session_binding(&self, settings: &Settings) -> SessionBinding {
        SessionBinding {
            supervisor: self.supervisor.clone(),
            subagents: self.subagents.clone(),
            cron: self.cron.clone(),
            data_dir: settings.data_dir.clone(),
            workspace: settings.workspace.clone(),
        }
    }

    /// Starts firing cron jobs into the bus's `system` channel (long-running processes
    /// only: the TUI and `--mode rpc`). Keep the handle: dropping it stops the timer.
    pub fn start_cron_scheduler(&self) -> Result<Option<SchedulerHandle>, String> {
        let Some(cron) = &self.cron else {
            return Ok(None);
        };
        let bus = self.bus.clone();
        let on_fire = Arc::new(move |fired: CronFired| {
            // No session: whichever one is active gets it.
            let chat_id = fired.session.clone().unwrap_or_default();
            bus.publish(InboundMessage::new(
                SYSTEM_CHANNEL,
                "cron",
                chat_id,
                fired.notification(),
            ));
        });
        cron.start_scheduler(on_fire)
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

/// What a session needs from the runtime: the parts whose work goes back to it.
#[derive(Clone)]
pub struct SessionBinding {
    supervisor: Supervisor,
    subagents: SubagentManager,
    cron: Option<CronService>,
    data_dir: PathBuf,
    workspace: PathBuf,
}

impl SessionBinding {
    /// Makes `writer`'s session the active one: notifications addressed to it are
    /// delivered (the undelivered ones in `resumed`, its file as read, first, once the
    /// supervisor is released), those for other sessions are recorded in them, and
    /// subagents and cron jobs started from now on report back to it. A copy (`resumed`
    /// is another session's) starts with nothing pending: those stay with the original.
    pub fn enter(&self, writer: &SessionWriter, resumed: Option<&SessionData>) {
        let id = writer.id().to_owned();
        self.subagents.set_origin(id.clone());
        if let Some(cron) = &self.cron {
            cron.set_origin(Some(id.clone()));
        }
        let (pending, inbox_offset) = match resumed {
            Some(data) if data.id() == id => {
                (data.pending_notifications.clone(), data.inbox_offset)
            }
            _ => (Vec::new(), 0),
        };
        let router = SessionRouter::new(
            id,
            writer.appender(),
            &self.data_dir,
            &self.workspace,
            inbox_offset,
        );
        self.supervisor.attach(Arc::new(router), pending);
    }

    /// Holds notifications back while the agent's history is being replaced.
    pub fn hold(&self) {
        self.supervisor.hold_for_switch();
    }

    /// Delivers what waits for the active session, now that its history is in place.
    pub fn release(&self) {
        self.supervisor.release();
    }
}

/// The config directory (holds the global AGENTS.md and skills).
pub fn config_dir(settings: &Settings) -> PathBuf {
    settings
        .config_path
        .parent()
        .map_or_else(|| settings.workspace.clone(), PathBuf::from)
}

/// Starts the main runtime on the provider the settings name; must run inside a Tokio
/// runtime. `approver` answers approval requests (`[exec] approval = "ask"`) of the
/// main agent and of every subagent.
pub fn start_runtime(
    settings: &Settings,
    outbound: MessageSender,
    approver: Approver,
) -> Result<MainRuntime, String> {
    let provider = build_provider(&settings.provider, settings)?;
    start_runtime_with(settings, provider, outbound, approver)
}

/// [`start_runtime`] on `provider` (used by the main agent and every subagent).
pub fn start_runtime_with(
    settings: &Settings,
    provider: Arc<dyn Provider>,
    outbound: MessageSender,
    approver: Approver,
) -> Result<MainRuntime, String> {
    let model = model_name(settings);
    let context = project_context(settings);
    let policy = build_policy_in(settings, &context, outbound, approver);
    let bus = MessageBus::new();
    let (events_tx, events) = runtime_channel();
    let subagent_prompt = system_prompt(
        &context,
        &policy.names_for(AgentKind::Subagent),
        Some(SUBAGENT_SYSTEM_PROMPT),
    );
    let subagents = SubagentManager::new(
        provider.clone(),
        policy.clone(),
        bus.clone(),
        events_tx.clone(),
        SubagentConfig {
            system_prompt: subagent_prompt,
            thinking: settings.thinking,
            compaction: settings.compaction.clone(),
            context_window: settings.provider.context_window,
            ..SubagentConfig::new(model.clone())
        },
    );
    policy.register(Arc::new(SpawnTool::new(Arc::new(subagents.clone()))));
    let mut warnings: Vec<String> = context.warnings();
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    // The tool is there even when the jobs cannot be used: its answers say why (an
    // unreadable jobs.json is also reported as a `cron_status` event).
    let options = CronOptions::reporting_to(events_tx.clone());
    let cron = match CronService::open(&settings.data_dir, &settings.workspace, options) {
        Ok(cron) => {
            policy.register(Arc::new(CronTool::new(Arc::new(cron.clone()))));
            Some(cron)
        }
        Err(e) => {
            warnings.push(format!("cron jobs are unavailable: {e}"));
            policy.register(Arc::new(CronTool::new(Arc::new(UnavailableCron::new(
                e.to_string(),
            )))));
            None
        }
    };
    warnings.extend(
        policy
            .unknown_disabled()
            .into_iter()
            .map(|name| format!("[tools] disabled names an unknown tool: {name}")),
    );
    let agent = Agent::new(provider, model);
    configure_main_agent(&agent, settings, &context, &policy);
    let supervisor =
        Supervisor::start(agent.clone(), &bus, events_tx).map_err(|e| e.to_string())?;
    Ok(MainRuntime {
        supervisor,
        agent,
        policy,
        subagents,
        bus,
        events,
        cron,
        warnings,
        context: Arc::new(context),
    })
}
