//! The agent: types, events, the loop, and the `Agent` facade that owns state and queues.

pub mod compaction;
pub mod config;
pub mod convert;
pub mod event;
mod history;
pub mod image;
mod intake;
pub mod intercept;
mod loop_hooks;
pub mod provider;
pub mod queue;
mod run_context;
pub mod run_loop;
mod running;
mod settings;
mod signature;
mod state;
pub mod tool;
pub mod tool_args;
mod tool_exec;
pub mod tool_set;
pub mod types;

pub use compaction::{
    Compaction, CompactionEnd, CompactionReason, CompactionResult, CompactionSettings,
    ContextBudget, ContextUsage,
};
pub use config::{
    AfterToolCall, AfterToolCallContext, AfterToolCallHook, BeforeToolCall, BeforeToolCallContext,
    BeforeToolCallHook, ConvertToLlm, DEFAULT_MAX_TURNS, LoopConfig, RefreshTools, ToolExecution,
    TransformContext,
};
pub use event::{AgentEvent, EventKind, EventSink, MessageDelta};
pub use history::{History, Iter as HistoryIter};
pub use image::ImageData;
pub use intercept::{CheckedArgs, Interceptor, Next, ToolCallContext};
pub use queue::{Admission, QueueKind, QueueMode};
pub use run_loop::{ABORTED_MESSAGE, AgentContext, RunEnv, run_compaction, run_loop};
pub use running::{INTERRUPTED_BY_USER, INTERRUPTED_KEY, Interruption, RunningCalls};
pub use state::AgentState;
pub use tool::{Tool, ToolDefinition, ToolResult, ToolSpec, ToolUpdates, TypedTool};
pub use tool_args::ArgsError;
pub use tool_exec::{SKIPPED_FOR_ABORT, SKIPPED_FOR_STEERING};
pub use tool_set::ToolSet;
pub use types::*;

use futures::FutureExt;
use provider::Provider;
use queue::Queues;
use state::Core;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Why the agent refused a request.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum AgentError {
    /// A run is already active.
    #[error(
        "The agent is already working. Use steer to redirect it now, or follow_up to queue \
         a message for when it finishes."
    )]
    Busy,
    /// `continue_run` found nothing to continue from.
    #[error("Nothing to continue: {0}")]
    NothingToContinue(String),
    /// Called outside a Tokio runtime.
    #[error("The agent needs a Tokio runtime to run; call it from inside one.")]
    NoRuntime,
}

/// What a run starts with.
enum Start {
    /// These messages, first.
    Messages(Vec<Message>),
    /// The next queued follow-up message.
    NextFollowUp,
    /// No turn: only a compaction, with this focus.
    Compact(Option<String>),
}

/// How many messages wait in each queue.
#[derive(Clone, Copy)]
struct QueueLengths {
    steering: usize,
    follow_up: usize,
}

/// Settings and hooks that only take effect at the start of the next run.
struct Settings {
    provider: Arc<dyn Provider>,
    config: LoopConfig,
}

struct Inner {
    core: Arc<Mutex<Core>>,
    settings: Mutex<Settings>,
    queues: Arc<Queues>,
    sink: EventSink,
    running: watch::Sender<bool>,
    /// Bumped (under the core lock) whenever the tools or the system prompt change, so
    /// a running loop can pick the new ones up before its next request.
    tools_version: Arc<AtomicU64>,
    /// The tool calls the active run is executing.
    calls: Arc<RunningCalls>,
}

/// A stateful agent: one run at a time, with steering and follow-up queues and an
/// event subscription. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // State is replaced whole under the lock, so a poisoned lock still holds a valid value.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Agent {
    /// An idle agent on `provider` and `model`, with default settings and no tools.
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>) -> Self {
        let model = model.into();
        let (running, _) = watch::channel(false);
        let core = Arc::new(Mutex::new(Core::new(&model, running.clone())));
        let sink_core = core.clone();
        let sink = EventSink::new(move |event| lock(&sink_core).dispatch(event));
        Self {
            inner: Arc::new(Inner {
                core,
                settings: Mutex::new(Settings {
                    provider,
                    config: LoopConfig::new(model),
                }),
                queues: Arc::new(Queues::default()),
                sink,
                running,
                tools_version: Arc::default(),
                calls: Arc::new(RunningCalls::default()),
            }),
        }
    }

    /// A consistent snapshot of the state, including the message being streamed.
    pub fn state(&self) -> Arc<AgentState> {
        lock(&self.inner.core).snapshot()
    }

    /// A receiver of every event, or only of the `kinds` given.
    pub fn subscribe(&self, kinds: Option<&[EventKind]>) -> mpsc::UnboundedReceiver<AgentEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&self.inner.core).subscribe(tx, kinds.map(<[EventKind]>::to_vec));
        rx
    }

    /// Like [`Agent::subscribe`] for every event, with the number of events dispatched
    /// before it: the first event received is that number plus one. A front-end that
    /// fans events out to late joiners pairs it with [`Agent::state_counted`].
    pub fn subscribe_counted(&self) -> (u64, mpsc::UnboundedReceiver<AgentEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut core = lock(&self.inner.core);
        core.subscribe(tx, None);
        (core.dispatched(), rx)
    }

    /// A snapshot of the state with the number of events folded into it: the events
    /// numbered above it are exactly those the snapshot does not show yet.
    pub fn state_counted(&self) -> (Arc<AgentState>, u64) {
        let mut core = lock(&self.inner.core);
        (core.snapshot(), core.dispatched())
    }

    /// Starts a run with a user prompt; fails with `Busy` while a run is active.
    pub fn prompt(&self, text: impl Into<String>) -> Result<(), AgentError> {
        self.prompt_messages(vec![Message::user(text)])
    }

    /// Starts a run that first adds `messages` to the context.
    pub fn prompt_messages(&self, messages: Vec<Message>) -> Result<(), AgentError> {
        self.start(|_, _| Ok(Start::Messages(messages)))
    }

    /// Continues from the current context: retries after an error or abort, answers a
    /// trailing user message or tool result, or delivers a queued message.
    pub fn continue_run(&self) -> Result<(), AgentError> {
        self.start(|state, queued| {
            let tail = state
                .messages
                .iter()
                .rev()
                .find(|m| !matches!(m, Message::Notice(_)));
            let resumable = match tail {
                Some(Message::Assistant(a)) => a.is_failed(),
                Some(_) => true,
                None => false,
            };
            if resumable || queued.steering > 0 {
                return Ok(Start::Messages(Vec::new()));
            }
            if queued.follow_up > 0 {
                return Ok(Start::NextFollowUp);
            }
            Err(AgentError::NothingToContinue(if tail.is_none() {
                "the conversation is empty; send a prompt first.".into()
            } else {
                "the assistant already answered and no message is queued; send a prompt.".into()
            }))
        })
    }

    fn start(
        &self,
        prompts: impl FnOnce(&AgentState, QueueLengths) -> Result<Start, AgentError>,
    ) -> Result<(), AgentError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| AgentError::NoRuntime)?;
        // Read before taking the core lock: queue changes take the queue lock, then the
        // core lock (to emit), so holding core while asking the queues would deadlock.
        let queued = QueueLengths {
            steering: self.inner.queues.len(QueueKind::Steering),
            follow_up: self.inner.queues.len(QueueKind::FollowUp),
        };
        let cancel = CancellationToken::new();
        let seen_version;
        let (mut ctx, prompts) = {
            let mut core = lock(&self.inner.core);
            let state = core.snapshot();
            if state.is_streaming {
                return Err(AgentError::Busy);
            }
            let prompts = prompts(&state, queued)?;
            core.begin_run(cancel.clone());
            seen_version = self.inner.tools_version.load(Ordering::Acquire);
            let ctx = AgentContext {
                system_prompt: state.system_prompt.clone(),
                tools: state.tools.clone(),
                compaction: state.compaction.clone(),
            };
            (ctx, prompts)
        };
        // Polling emits `queue_update`, which takes the core lock: only now is it free.
        // A run that answers prompts takes what is queued from here on; a compaction
        // takes nothing (what arrives meanwhile waits for the run after it).
        let queues = &self.inner.queues;
        let (prompts, compact) = match prompts {
            Start::Messages(messages) => {
                queues.open_intake();
                (messages, None)
            }
            Start::NextFollowUp => {
                queues.open_intake();
                (queues.poll(QueueKind::FollowUp, &self.inner.sink), None)
            }
            Start::Compact(focus) => (Vec::new(), Some(focus)),
        };
        let (provider, mut config) = {
            let settings = lock(&self.inner.settings);
            (settings.provider.clone(), settings.config.clone())
        };
        // The snapshot is let go before the run starts: a snapshot still held when the
        // run adds its first message would make the state copy the whole history.
        (config.model, config.thinking) = {
            let state = self.state();
            (state.model.clone(), state.thinking)
        };
        if config.refresh_tools.is_none() {
            config.refresh_tools = Some(self.tools_follower(seen_version));
        }
        let inner = self.inner.clone();
        runtime.spawn(async move {
            let history = || lock(&inner.core).messages();
            let env = RunEnv {
                provider: provider.as_ref(),
                config: &config,
                queues: &inner.queues,
                sink: &inner.sink,
                cancel: &cancel,
                calls: &inner.calls,
                history: &history,
            };
            let run = async {
                match compact {
                    Some(focus) => {
                        run_compaction(&mut ctx, focus.as_deref(), &env).await;
                    }
                    None => {
                        run_loop(&mut ctx, prompts, &env).await;
                    }
                }
            };
            if AssertUnwindSafe(run).catch_unwind().await.is_err() {
                // The loop never panics by design; if it does, the agent must not stay busy.
                inner.queues.close_intake();
                inner.sink.emit(AgentEvent::MessageEnd {
                    message: Message::notice(
                        NoticeLevel::Error,
                        "Internal error: the agent loop crashed. Your messages are kept; \
                         send a message to continue.",
                    ),
                });
                inner.sink.emit(AgentEvent::AgentEnd {
                    messages: Vec::new(),
                });
            }
        });
        Ok(())
    }

    /// Compacts the history now, as a run of its own (`agent_start`, `compaction_start`,
    /// `compaction_end`, `agent_end`): the older messages are summarised, the recent ones
    /// kept; `focus` says what the summary should keep. `abort` cancels it. Works with
    /// automatic compaction off too; fails with `Busy` while a run is active.
    pub fn compact(&self, focus: Option<String>) -> Result<(), AgentError> {
        let focus = focus.filter(|f| !f.trim().is_empty());
        self.start(|_, _| Ok(Start::Compact(focus)))
    }

    /// How full the context window is for the next request (the status bar's `ctx N%`).
    pub fn context_usage(&self) -> ContextUsage {
        let state = self.state();
        let config = lock(&self.inner.settings).config.clone();
        let fixed = compaction::estimate_text(&state.system_prompt)
            + compaction::estimate_tools(&state.tools.definitions());
        let tokens = compaction::context_tokens(&state.messages, state.compaction.as_ref(), fixed);
        ContextUsage::new(tokens, &config.budget_for(&state.model))
    }

    /// The window of the next run's model and the compaction settings applied to it.
    pub fn context_budget(&self) -> ContextBudget {
        let model = self.state().model.clone();
        lock(&self.inner.settings).config.budget_for(&model)
    }

    /// Queues a message injected at the next tool boundary (or the next run).
    pub fn steer(&self, text: impl Into<String>) {
        self.queue(QueueKind::Steering, Message::user(text));
    }

    /// Queues a message delivered when the agent would otherwise stop.
    pub fn follow_up(&self, text: impl Into<String>) {
        self.queue(QueueKind::FollowUp, Message::user(text));
    }

    /// Queues any message (e.g. a notification) on one of the queues.
    pub fn queue(&self, kind: QueueKind, message: Message) {
        self.inner.queues.push(kind, message, &self.inner.sink);
    }

    /// Empties one queue, or both with `None`; returns the removed messages so a UI
    /// can give them back to the user.
    pub fn clear_queue(&self, kind: Option<QueueKind>) -> Vec<Message> {
        self.inner.queues.clear(kind, &self.inner.sink)
    }

    /// Takes the oldest message of a queue, leaving the rest queued.
    pub fn take_oldest(&self, kind: QueueKind) -> Option<Message> {
        self.inner.queues.pop_front(kind, &self.inner.sink)
    }

    /// Puts a message back at the front of a queue.
    pub fn requeue_front(&self, kind: QueueKind, message: Message) {
        self.inner
            .queues
            .push_front(kind, vec![message], &self.inner.sink);
    }

    /// The messages waiting in a queue, oldest first.
    pub fn queued(&self, kind: QueueKind) -> Vec<Message> {
        self.inner.queues.snapshot(kind)
    }

    /// Sets how many messages one poll of a queue takes; applies at once, mid-run too.
    pub fn set_queue_mode(&self, kind: QueueKind, mode: QueueMode) {
        self.inner.queues.set_mode(kind, mode);
        let key = match kind {
            QueueKind::Steering => "steering_mode",
            QueueKind::FollowUp => "follow_up_mode",
        };
        self.announce_setting(key, &mode);
    }

    /// Aborts the active run, if any: the stream stops and tools are cancelled.
    pub fn abort(&self) {
        lock(&self.inner.core).abort();
    }

    /// Stops the tool calls executing now without aborting the run: each returns what it
    /// has, its result says the user interrupted it, and the turn goes on (steering
    /// queued meanwhile goes in next). Returns the ids of the calls stopped.
    pub fn interrupt_tools(&self) -> Vec<String> {
        self.inner.calls.interrupt_all()
    }

    /// The ids of the tool calls executing now.
    pub fn running_tools(&self) -> Vec<String> {
        self.inner.calls.ids()
    }

    /// Waits until no run is active.
    pub async fn wait_for_idle(&self) {
        let mut running = self.inner.running.subscribe();
        // The sender lives as long as `self`, so this cannot fail while we wait.
        let _ = running.wait_for(|busy| !busy).await;
    }

    /// Aborts any run, waits for it to end, then clears history, error and queues.
    pub async fn reset(&self) {
        self.abort();
        self.wait_for_idle().await;
        self.clear_queue(None);
        lock(&self.inner.core).update(|s| {
            s.messages = Arc::new(History::default());
            s.compaction = None;
            s.error = None;
        });
    }

    /// Replaces the history (e.g. with a resumed session), with no compaction in force;
    /// refused while running.
    pub fn replace_messages(&self, messages: Vec<Message>) -> Result<(), AgentError> {
        self.restore_history(messages, None)
    }

    /// Replaces the history and the compaction in force (a resumed session: the model
    /// sees exactly what it saw before); a compaction that does not fit the messages is
    /// dropped. Refused while running.
    pub fn restore_history(
        &self,
        messages: Vec<Message>,
        compaction: Option<Compaction>,
    ) -> Result<(), AgentError> {
        self.restore_shared(messages.into(), compaction)
    }

    /// Like [`Agent::restore_history`], with a history others hold too (the client's
    /// chat shows the same messages): the agent never writes to them, so sharing them
    /// costs no copy, now or when messages are added.
    pub fn restore_shared(
        &self,
        messages: Arc<[Message]>,
        compaction: Option<Compaction>,
    ) -> Result<(), AgentError> {
        let mut core = lock(&self.inner.core);
        if core.snapshot().is_streaming {
            return Err(AgentError::Busy);
        }
        let compaction = compaction.filter(|c| c.fits(messages.len()));
        core.update(|s| {
            s.messages = Arc::new(History::shared(messages));
            s.compaction = compaction;
        });
        Ok(())
    }

    /// Cuts the history back to its first `kept` messages (a rewind) and announces it as
    /// a `history_cut` event, after the events of every message before it; a compaction
    /// that summarised what is taken back no longer fits and is dropped. Returns the
    /// history now. Refused while running.
    pub fn cut_history(&self, kept: usize) -> Result<Arc<[Message]>, AgentError> {
        let mut core = lock(&self.inner.core);
        let state = core.snapshot();
        if state.is_streaming {
            return Err(AgentError::Busy);
        }
        let messages: Arc<[Message]> = state.messages.to_vec_until(kept).into();
        let compaction = state.compaction.clone().filter(|c| c.fits(messages.len()));
        core.update(|s| {
            s.messages = Arc::new(History::shared(messages.clone()));
            s.compaction = compaction;
        });
        // Announced once the lock is released: a subscriber may read the state.
        drop(core);
        self.inner.sink.emit(AgentEvent::HistoryCut {
            kept: messages.len(),
        });
        Ok(messages)
    }

    /// What a run started at tools version `seen` calls before each request: the
    /// current prompt and tools when they changed since.
    fn tools_follower(&self, seen: u64) -> RefreshTools {
        let core = self.inner.core.clone();
        let version = self.inner.tools_version.clone();
        let seen = AtomicU64::new(seen);
        Arc::new(move || {
            let mut core = lock(&core);
            let now = version.load(Ordering::Acquire);
            if seen.swap(now, Ordering::AcqRel) == now {
                return None;
            }
            let state = core.snapshot();
            Some((state.system_prompt.clone(), state.tools.clone()))
        })
    }
}
