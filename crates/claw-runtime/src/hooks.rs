//! Hooks: the user's own commands, run at points of the agent's work.
//!
//! `[[hooks.before_tool]]` and `[[hooks.after_tool]]` run around every tool call of
//! every agent (main, subagents, cron runs), as a step of the tool-call pipeline the
//! policy hands every agent (`crate::tools::pipeline`), so no agent can bypass them; `[[hooks.prompt]]` runs before
//! a user prompt is sent, `[[hooks.stop]]` when the main agent went idle, and
//! `[[hooks.notify]]` when something waits for the user (an approval, a finished
//! subagent, a cron job that fired). The client and the headless modes run them alike.
//!
//! Each hook gets one JSON object on stdin (`event`, `session_id`, `workspace` and the
//! event's own fields) and answers with its exit code and stdout (see [`run`]). Hooks run
//! like git hooks, as the user's own commands: not confined by the exec sandbox (a
//! formatter must be able to write, a notifier to connect), but with exec's environment,
//! scrubbed of API keys and other secrets, and under the same launcher, so a hook that
//! runs past its `timeout_secs` is killed together with everything it started. A hook
//! that fails (other exit codes, a timeout, bad JSON) never stops the agent: the call or
//! prompt goes on, the user gets a warning and the log the hook's stderr.

mod checked;
pub mod config;
mod event;
mod run;
mod stage;
mod tool;

pub use config::{EventHook, HooksConfig, ToolHook, ToolMatch};
pub use event::{AnswerError, CallFields, Decision, HookAnswer, HookEvent, SeenResult};
pub use run::BLOCK_EXIT_CODE;
pub use run::trust_runner;
pub use stage::{HookStage, HookedResultObserver};
pub use tool::{BLOCKED_PREFIX, BeforeTool, CANCELLED_IN_HOOK, hook_marks};

use crate::runtime::supervisor::PromptFilter;
use crate::runtime::{RuntimeEvent, RuntimeEventSender};
use crate::tools::exec::ExecConfig;
use crate::trust::Trust;
use config::HookCommand;
use event::Reply;
use run::Runner;
use serde_json::{Map, Value};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::runtime::supervisor::PromptDecision;

/// Asks the stop watcher to start the hooks of every run end it has been sent, then
/// answers.
type Flush = tokio::sync::oneshot::Sender<()>;

struct Inner {
    config: HooksConfig,
    runner: Runner,
    session_id: Mutex<String>,
    events: RuntimeEventSender,
    background: Mutex<Vec<JoinHandle<()>>>,
    stop_watcher: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Flush>>>,
}

/// The configured hooks and how to run them; cheap to clone. Without any hook
/// configured every entry point returns at once.
#[derive(Clone, Default)]
pub struct Hooks {
    inner: Option<Arc<Inner>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Hooks {
    /// The hooks of `config`, run in `workspace` with the environment and launcher of
    /// `exec`; failures are reported to `events` as `hook_warning`. Each hook is made
    /// known to `trust`, and runs only while the workspace files its command names
    /// hold content the user trusted.
    pub fn new(
        config: HooksConfig,
        workspace: &Path,
        exec: &ExecConfig,
        events: RuntimeEventSender,
        trust: Trust,
    ) -> Self {
        if config.is_empty() {
            return Self::default();
        }
        for command in config.commands() {
            trust.register(run::trust_runner(command, workspace));
        }
        Self {
            inner: Some(Arc::new(Inner {
                config,
                runner: Runner {
                    launcher: exec.launcher.clone(),
                    workspace: workspace.to_path_buf(),
                    env: exec.env_policy(),
                    trust,
                },
                session_id: Mutex::new(String::new()),
                events,
                background: Mutex::new(Vec::new()),
                stop_watcher: Mutex::new(None),
            })),
        }
    }

    /// No hooks.
    pub fn none() -> Self {
        Self::default()
    }

    /// The session hooks are told about (`session_id` in their input).
    pub fn set_session(&self, id: &str) {
        if let Some(inner) = &self.inner {
            *lock(&inner.session_id) = id.to_owned();
        }
    }

    /// Whether any `[[hooks.prompt]]` is configured (else prompts go out unchanged, at
    /// once).
    pub fn has_prompt_hooks(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| !i.config.prompt.is_empty())
    }

    /// Tells the user a hook was not run (its file is not trusted) and what became of
    /// the call, prompt or event it was for.
    fn refused(&self, inner: &Inner, event: &str, command: &str, why: &str, outcome: &str) {
        let message = format!("{why}. {outcome}");
        tracing::warn!("{message}");
        inner.events.send(RuntimeEvent::HookWarning {
            event: event.to_owned(),
            command: command.to_owned(),
            message,
        });
    }

    /// Tells the user a hook failed (the call or prompt went on) and logs its stderr.
    fn warn(&self, inner: &Inner, event: &str, command: &str, why: &str, stderr: &str) {
        let shown = crate::text::clip(command, 80);
        let message = format!("The {event} hook `{shown}` failed ({why}); carried on without it.");
        tracing::warn!("{message} stderr: {stderr}");
        inner.events.send(RuntimeEvent::HookWarning {
            event: event.to_owned(),
            command: command.to_owned(),
            message,
        });
    }

    /// Runs the prompt hooks on `prompt`: each may block it or add context (appended
    /// to the text, in order). The supervisor runs them on every input through
    /// [`crate::runtime::Supervisor::deliver`] (see [`PromptFilter`]).
    pub async fn prompt(&self, prompt: &str) -> PromptDecision {
        let Some(inner) = &self.inner else {
            return PromptDecision::Send(prompt.to_owned());
        };
        let hooks: Vec<&(dyn HookCommand + Sync)> =
            inner.config.prompt.iter().map(|h| h as _).collect();
        let event = HookEvent::Prompt {
            prompt: prompt.to_owned(),
        };
        let mut text = prompt.to_owned();
        // A prompt is not cancelled: it goes out or not as a whole.
        let flow = self
            .run_all(
                inner,
                &hooks,
                &mut text,
                |_| event.clone(),
                &CancellationToken::new(),
                |text, command, reply| match reply {
                    Reply::Continue | Reply::Cancelled => ControlFlow::Continue(()),
                    Reply::Block(reason) => ControlFlow::Break(reason),
                    Reply::Untrusted(why) => {
                        self.refused(inner, "prompt", command, &why, "The message was not sent.");
                        ControlFlow::Break(why)
                    }
                    Reply::Answer(answer) => {
                        if let Some(reason) = answer.blocks(command) {
                            return ControlFlow::Break(reason);
                        }
                        if let Some(context) = answer.context.filter(|c| !c.trim().is_empty()) {
                            text.push_str("\n\n");
                            text.push_str(context.trim_end());
                        }
                        ControlFlow::Continue(())
                    }
                },
            )
            .await;
        match flow {
            ControlFlow::Break(reason) => PromptDecision::Block(reason),
            ControlFlow::Continue(()) => PromptDecision::Send(text),
        }
    }

    /// Runs the stop hooks in the background: the main agent went idle after
    /// answering `last_answer`.
    pub fn stop(&self, last_answer: &str) {
        self.in_background(HookEvent::Stop {
            last_answer: last_answer.to_owned(),
        });
    }

    /// Runs the stop hooks each time `agent` goes idle (must be called inside a Tokio
    /// runtime).
    pub fn watch_stops(&self, agent: &crate::agent::Agent) {
        let Some(inner) = &self.inner else {
            return;
        };
        if inner.config.stop.is_empty() {
            return;
        }
        let mut ends = agent.subscribe(Some(&[crate::agent::EventKind::AgentEnd]));
        let (flush_tx, mut flushes) = tokio::sync::mpsc::unbounded_channel::<Flush>();
        *lock(&inner.stop_watcher) = Some(flush_tx);
        let hooks = self.clone();
        tokio::spawn(async move {
            let stopped = |event: crate::agent::AgentEvent| {
                if let crate::agent::AgentEvent::AgentEnd { messages } = event {
                    let answer = messages
                        .iter()
                        .rev()
                        .find_map(crate::agent::Message::as_assistant)
                        .map(|a| a.text())
                        .unwrap_or_default();
                    hooks.stop(&answer);
                }
            };
            loop {
                tokio::select! {
                    event = ends.recv() => match event {
                        Some(event) => stopped(event),
                        None => return,
                    },
                    Some(flush) = flushes.recv() => {
                        // Run ends already sent are in the channel: start their hooks.
                        while let Ok(event) = ends.try_recv() {
                            stopped(event);
                        }
                        let _ = flush.send(());
                    }
                }
            }
        });
    }

    /// Runs the notify hooks in the background: `kind` (`approval`, `subagent`,
    /// `cron`) waits for the user, described by `message`, with more `fields`.
    pub fn notify(&self, kind: &str, message: &str, fields: Value) {
        let more = match fields {
            Value::Object(more) => more,
            _ => Map::new(),
        };
        self.in_background(HookEvent::Notify {
            kind: kind.to_owned(),
            message: message.to_owned(),
            more,
        });
    }

    /// Runs the hooks of `event` (stop or notify) without waiting for them: they can
    /// only warn, never block.
    fn in_background(&self, event: HookEvent) {
        let Some(inner) = &self.inner else {
            return;
        };
        let hooks = match event {
            HookEvent::Stop { .. } => inner.config.stop.clone(),
            _ => inner.config.notify.clone(),
        };
        if hooks.is_empty() {
            return;
        }
        let name = event.name();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no async runtime to run the {name} hooks on");
            return;
        };
        let this = self.clone();
        let running = inner.clone();
        let task = runtime.spawn(async move {
            let hooks: Vec<&(dyn HookCommand + Sync)> = hooks.iter().map(|h| h as _).collect();
            let _ = this
                .run_all(
                    &running,
                    &hooks,
                    &mut (),
                    |_| event.clone(),
                    &CancellationToken::new(),
                    |_, command, reply| {
                        if let Reply::Untrusted(why) = reply {
                            this.refused(&running, name, command, &why, "Carried on without it.");
                        }
                        ControlFlow::<()>::Continue(())
                    },
                )
                .await;
        });
        let mut background = lock(&inner.background);
        background.retain(|t| !t.is_finished());
        background.push(task);
    }

    /// Waits for the stop and notify hooks still running (before the process exits),
    /// including those of a run that ended just now.
    pub async fn drain(&self) {
        let Some(inner) = &self.inner else {
            return;
        };
        let watcher = lock(&inner.stop_watcher).clone();
        if let Some(watcher) = watcher {
            let (done, flushed) = tokio::sync::oneshot::channel();
            if watcher.send(done).is_ok() {
                let _ = flushed.await;
            }
        }
        let tasks: Vec<JoinHandle<()>> = std::mem::take(&mut *lock(&inner.background));
        for task in tasks {
            let _ = task.await;
        }
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("config", &self.inner.as_ref().map(|i| &i.config))
            .finish()
    }
}

#[async_trait::async_trait]
impl PromptFilter for Hooks {
    async fn filter(&self, text: &str) -> PromptDecision {
        self.prompt(text).await
    }
}
