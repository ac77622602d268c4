//! Builds the main runtime from resolved settings: provider, the tool policy (every
//! agent's tools) with the user's hooks, the checkpoints of file changes, subagents, the
//! main agent, its plan-mode switch and the supervisor that owns it.

use crate::agent::{Agent, QueueKind};
use crate::checkpoint::Checkpoints;
use crate::config::{Api, DEMO_MODEL, ProviderSpec, Settings};
use crate::hooks::{HookStage, Hooks};
use crate::llm::Provider;
use crate::llm::demo::DemoProvider;
use crate::mcp::McpManager;
use crate::mcp::launch::McpPlan;
use crate::runtime::context::{ProjectContext, home_dir, system_prompt};
use crate::runtime::cron::{CronError, CronFired, CronOptions, CronService, SchedulerHandle};
use crate::runtime::subagents::SUBAGENT_SYSTEM_PROMPT;
use crate::runtime::{
    AgentMode, InboundMessage, MessageBus, ModeSwitch, RuntimeEvent, SYSTEM_CHANNEL,
    SubagentConfig, SubagentManager, Supervisor, runtime_channel,
};
use crate::session::SessionBinding;
use crate::tools::ToolRegistry;
use crate::tools::Workspace;
use crate::tools::cron::{CronTool, UnavailableCron};
use crate::tools::exec::{Approver, ExecTool};
use crate::tools::fs::file_tools_observed;
use crate::tools::large_results::LargeResults;
use crate::tools::message::{MessageSender, MessageTool};
use crate::tools::pipeline::Step;
use crate::tools::policy::{AgentKind, AgentRole, PolicyConfig, ToolPolicy};
use crate::tools::spawn::SpawnTool;
use crate::tools::web::{WebFetchTool, WebSearchTool};
use crate::trust::Trust;
use color_eyre::eyre::eyre;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

mod own_dirs;
pub use own_dirs::config_dir;
use own_dirs::{make_own_dirs, own_dirs};

mod controls;
pub use controls::Controls;

/// The provider the settings name.
pub fn build_provider(
    spec: &ProviderSpec,
    settings: &Settings,
) -> color_eyre::Result<Arc<dyn Provider>> {
    let provider: Arc<dyn Provider> = match spec.api {
        Api::Demo => Arc::new(
            DemoProvider::new(
                Duration::from_millis(settings.demo_pace_ms),
                settings.config_path.display().to_string(),
            )
            .map_err(|e| eyre!(e))?,
        ),
        Api::Anthropic | Api::Openai | Api::OpenaiResponses => {
            crate::providers::build_remote_provider(
                spec,
                settings.idle_timeout_secs,
                settings.request_timeout_secs,
            )
            .map_err(|e| eyre!(e))?
        }
    };
    Ok(provider)
}

/// The built-in tools (files, exec, web, message) over `workspace` and the settings'
/// sandbox; `outbound` delivers what the `message` tool sends; `checkpoints`, when
/// given, records every file change for undo (the commands `exec` runs are recorded by
/// the checkpoints' step of the pipeline, made from the `exec` returned beside the
/// registry). Agents get them only through the policy.
fn build_registry(
    settings: &Settings,
    workspace: Arc<Workspace>,
    outbound: MessageSender,
    checkpoints: Option<&Checkpoints>,
) -> (ToolRegistry, Arc<ExecTool>) {
    let mut registry = ToolRegistry::new();
    let observer = checkpoints.map(|c| Arc::new(c.clone()) as _);
    let pinned = workspace.protected().pinned().to_vec();
    let own_dirs = workspace.protected().own_dirs().to_vec();
    for tool in file_tools_observed(workspace, observer) {
        registry.register(tool);
    }
    let exec = Arc::new(
        ExecTool::new(settings.workspace.clone(), settings.file.exec.clone())
            .with_pinned(pinned)
            .with_own_dirs(own_dirs),
    );
    registry.register(exec.clone());
    registry.register(Arc::new(WebSearchTool::new(settings.file.web.clone())));
    registry.register(Arc::new(WebFetchTool::new(settings.file.web.clone())));
    registry.register(Arc::new(MessageTool::new(outbound)));
    (registry, exec)
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
    agent.set_thinking_level(settings.thinking);
    agent.set_tool_execution(settings.tool_execution);
    agent.set_queue_mode(QueueKind::Steering, settings.steering_mode);
    agent.set_queue_mode(QueueKind::FollowUp, settings.follow_up_mode);
    agent.set_max_turns(settings.max_turns);
    agent.configure(|c| {
        c.compaction = settings.compaction.clone();
        c.context_window = settings.provider.context_window;
    });
    configure_tools(agent, settings, context, policy);
}

/// The main agent's tools and the system prompt that lists them.
fn configure_tools(
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
    /// The MCP servers (started in the background; their tools join `policy`).
    pub mcp: McpManager,
    /// Which MCP servers started and which wait for the user's trust.
    pub mcp_plan: McpPlan,
    /// Whether the workspace files hooks and servers run hold trusted content.
    pub trust: Trust,
    /// Warnings for the user (unknown disabled tools...).
    pub warnings: Vec<String>,
    /// The instructions files and skills the prompts were built from.
    pub context: Arc<ProjectContext>,
    /// The user's control over the main agent: hooks, checkpoints, plan mode.
    pub controls: Controls,
    /// Where every agent's HTTP calls are reported (the session's request log).
    pub requests: crate::llm::RequestTap,
    /// The sender behind `events`, whose events a session's event log mirrors.
    pub event_sender: crate::runtime::RuntimeEventSender,
    /// The `exec` tool the policy hands out (a front-end may run its commands in a
    /// terminal of its own: `ExecTool::run_in_terminal`).
    pub exec: Arc<ExecTool>,
}

impl MainRuntime {
    /// The handle that ties sessions to this runtime.
    pub fn session_binding(&self, settings: &Settings) -> SessionBinding {
        SessionBinding::new(
            self.supervisor.clone(),
            self.subagents.clone(),
            self.cron.clone(),
            self.controls.session_follower(),
            settings,
        )
        .with_runtime_events(self.event_sender.clone())
        .with_requests(
            self.requests.clone(),
            Arc::new(|tap, session, main, report| {
                Box::new(crate::inspect::RequestRecorder::start(
                    tap, session, main, report,
                ))
            }),
        )
    }

    /// Starts firing cron jobs into the bus's `system` channel (long-running processes
    /// only: the TUI and `--mode rpc`). Keep the handle: dropping it stops the timer.
    pub fn start_cron_scheduler(&self) -> Result<Option<SchedulerHandle>, CronError> {
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
        cron.start_scheduler(on_fire).map(Some)
    }
}

/// The subagents' system prompt over the tools `policy` offers them now.
fn subagent_system_prompt(context: &ProjectContext, policy: &ToolPolicy) -> String {
    system_prompt(
        context,
        &policy.names_for(AgentKind::Subagent),
        Some(SUBAGENT_SYSTEM_PROMPT),
    )
}

/// What runs when MCP tools come or go: the main agent gets the new tools and a system
/// prompt listing them (a run under way from its next request on), through `modes`,
/// so in plan mode it still gets only the read-only ones; and so do the subagents
/// started from then on.
fn tools_refresher(
    settings: &Settings,
    context: &ProjectContext,
    policy: &ToolPolicy,
    modes: &ModeSwitch,
    subagents: &SubagentManager,
) -> crate::mcp::manager::ToolsChanged {
    let settings = settings.clone();
    let context = context.clone();
    let policy = policy.clone();
    let modes = modes.clone();
    let subagents = subagents.clone();
    Arc::new(move || {
        modes.refresh(system_prompt(
            &context,
            &policy.names_for(AgentKind::Main),
            settings.instructions.as_deref(),
        ));
        subagents.set_system_prompt(subagent_system_prompt(&context, &policy));
    })
}

/// The `message` tool's sender: each message goes out as a runtime event (the client's
/// card, the JSON modes' line, the event log's entry), then to `outbound` too.
fn delivering(
    events: &crate::runtime::RuntimeEventSender,
    outbound: MessageSender,
) -> MessageSender {
    let as_event = events.outbound_messages();
    Arc::new(move |message| {
        as_event(message.clone());
        outbound(message);
    })
}

/// Starts the main runtime on the provider the settings name; must run inside a Tokio
/// runtime. `approver` answers approval requests (`[exec] approval = "ask"`) of the
/// main agent and of every subagent. Each message the `message` tool sends goes out as
/// a `RuntimeEvent::OutboundMessage` on the runtime's events, then to `outbound` too.
pub fn start_runtime(
    settings: &Settings,
    outbound: MessageSender,
    approver: Approver,
) -> color_eyre::Result<MainRuntime> {
    let provider = build_provider(&settings.provider, settings)?;
    start_runtime_with(settings, provider, outbound, approver)
}

/// [`start_runtime`] on `provider` (used by the main agent and every subagent).
pub fn start_runtime_with(
    settings: &Settings,
    provider: Arc<dyn Provider>,
    outbound: MessageSender,
    approver: Approver,
) -> color_eyre::Result<MainRuntime> {
    let main = prepare_runtime_with(settings, provider, outbound, approver)?;
    main.mcp.start();
    Ok(main)
}

/// [`start_runtime`] with the MCP servers not started yet: the caller starts them
/// (`main.mcp.start()`) when it is ready to, as the client does after its first frame.
pub fn prepare_runtime(
    settings: &Settings,
    outbound: MessageSender,
    approver: Approver,
) -> color_eyre::Result<MainRuntime> {
    let provider = build_provider(&settings.provider, settings)?;
    prepare_runtime_with(settings, provider, outbound, approver)
}

fn prepare_runtime_with(
    settings: &Settings,
    provider: Arc<dyn Provider>,
    outbound: MessageSender,
    approver: Approver,
) -> color_eyre::Result<MainRuntime> {
    let model = model_name(settings);
    let context = project_context(settings);
    let (events_tx, events) = runtime_channel();
    let mcp_plan = crate::mcp::launch::plan(settings);
    // What runs outside the sandbox: the servers and hooks, each pinned to the content
    // of the workspace files it runs, which the file tools may then not write (the
    // files of project servers still waiting for an answer included).
    let trust = crate::mcp::launch::server_trust(settings, &mcp_plan, events_tx.clone());
    let hooks = Hooks::new(
        settings.file.hooks.clone(),
        &settings.workspace,
        &settings.file.exec,
        events_tx.clone(),
        trust.clone(),
    );
    let waiting = mcp_plan.entries.iter().flat_map(|e| e.files.iter());
    let pinned = trust
        .pinned_paths()
        .into_iter()
        .chain(waiting.map(|f| f.path.clone()));
    // Results too large for the model are kept whole where `read_file` reaches them.
    let large_results = Arc::new(LargeResults::new(&settings.data_dir, &settings.workspace));
    let (workspace, results_warning) = match large_results.prepare() {
        Ok(dir) => (workspace_for(settings, &context).with_read_only(dir), None),
        Err(e) => (
            workspace_for(settings, &context),
            Some(format!("large tool results cannot be kept whole: {e}")),
        ),
    };
    let own = own_dirs(settings);
    make_own_dirs(settings, &own);
    let workspace = Arc::new(workspace.with_pinned(pinned).with_own_dirs(own));
    let checkpoints = Checkpoints::with_failure(
        workspace.clone(),
        settings.file.session.checkpoint_failure.unwrap_or_default(),
    );
    let (registry, exec) = build_registry(
        settings,
        workspace,
        delivering(&events_tx, outbound),
        Some(&checkpoints),
    );
    let policy = ToolPolicy::new(
        registry,
        PolicyConfig::new(&settings.file.tools, &settings.file.exec),
        notifying(approver, &hooks),
    );
    let refreshing = checkpoints.clone();
    let hook_stage = HookStage::new(
        hooks.clone(),
        Some(Arc::new(move |details: &serde_json::Value| {
            refreshing.refresh_after_hooks(details)
        })),
    );
    // What stands between every agent and its tools, outermost first: plan mode; the
    // user's hooks (they may block a call or rewrite it before the user is asked, and
    // see the result); the approval; the checkpoints (innermost: they record exactly
    // what runs).
    policy
        .set_pipeline(vec![
            Step::PlanGate,
            Step::Stage(Arc::new(hook_stage)),
            Step::Approval,
            Step::Stage(checkpoints.exec_stage(exec.clone())),
        ])
        .map_err(|e| eyre!(e))?;
    let bus = MessageBus::new();
    let requests = crate::llm::RequestTap::default();
    let subagent_prompt = subagent_system_prompt(&context, &policy);
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
            requests: requests.clone(),
            ..SubagentConfig::new(model.clone())
        },
    );
    policy.register(Arc::new(SpawnTool::new(Arc::new(subagents.clone()))));
    let mut warnings: Vec<String> = context.warnings();
    warnings.extend(results_warning);
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
            policy.register(Arc::new(CronTool::new(Arc::new(UnavailableCron::new(e)))));
            None
        }
    };
    warnings.extend(
        policy
            .unknown_disabled()
            .into_iter()
            .map(|name| format!("[tools] disabled names an unknown tool: {name}")),
    );
    let agent = Agent::new(requests.tagged(provider, "main"), model);
    configure_main_agent(&agent, settings, &context, &policy);
    warnings.extend(mcp_plan.warnings.iter().cloned());
    let mcp = McpManager::new(
        mcp_plan.start.clone(),
        mcp_plan.untrusted.clone(),
        policy.clone(),
        events_tx.clone(),
        crate::mcp::launch::server_access(settings, &mcp_plan, trust.clone()),
    );
    mcp.keep_large_results_in(large_results);
    let modes = ModeSwitch::new(agent.clone(), policy.clone());
    if settings.plan {
        modes.set(AgentMode::Plan);
    }
    mcp.on_tools_changed(tools_refresher(
        settings, &context, &policy, &modes, &subagents,
    ));
    checkpoints.attach(&agent);
    let event_sender = events_tx.clone();
    let supervisor = Supervisor::start(agent.clone(), &bus, events_tx).map_err(|e| eyre!(e))?;
    if hooks.has_prompt_hooks() {
        // Every front-end sends the user's input through the supervisor's intake.
        supervisor.set_prompt_filter(Arc::new(hooks.clone()));
    }
    run_event_hooks(&agent, &supervisor, &hooks);
    Ok(MainRuntime {
        exec,
        supervisor,
        agent,
        policy,
        subagents,
        bus,
        events,
        cron,
        mcp,
        mcp_plan,
        trust,
        warnings,
        context: Arc::new(context),
        controls: Controls {
            hooks,
            checkpoints,
            modes,
        },
        requests,
        event_sender,
    })
}

/// `approver` with the notify hooks told about each request before it is asked.
fn notifying(approver: Approver, hooks: &Hooks) -> Approver {
    let Approver::Ask(asker) = approver else {
        return approver;
    };
    let hooks = hooks.clone();
    Approver::Ask(Arc::new(move |request| {
        let message = format!("{} waits for your approval", request.tool_name);
        let fields = serde_json::json!({
            "tool_name": request.tool_name,
            "tool_call_id": request.tool_call_id,
            "args": request.args,
            "subagent": request.subagent,
        });
        hooks.notify("approval", &message, fields);
        asker(request)
    }))
}

/// Runs the stop hooks when the main agent goes idle and the notify hooks when the bus
/// brings background results.
fn run_event_hooks(agent: &Agent, supervisor: &Supervisor, hooks: &Hooks) {
    let observing = hooks.clone();
    supervisor.observe_inbound(Arc::new(move |message: &InboundMessage| {
        let fields = serde_json::json!({ "chat_id": message.chat_id });
        observing.notify(&message.sender_id, &message.content, fields);
    }));
    hooks.watch_stops(agent);
}
