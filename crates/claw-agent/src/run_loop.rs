//! The agent loop: turns of one LLM call plus its tool calls, steering and follow-up.
//!
//! A pure function of (context, config, queues, provider) that reports everything it does
//! as events; it holds no UI and no global state. The history it reads is the agent's
//! own (through [`RunEnv::history`]), which its events keep up to date: a long history
//! exists once, not once more per run.

use super::compaction::{Compaction, CompactionReason, compacted_view};
use super::config::LoopConfig;
use super::convert::sanitize_for_llm;
use super::event::{AgentEvent, EventSink, apply_delta, finish_partial};
use super::history::History;
use super::provider::{LlmEvent, LlmRequest, Provider, SharedRequest};
use super::queue::{QueueKind, Queues};
use super::running::RunningCalls;
use super::tool_exec::execute_tool_calls;
use super::tool_set::ToolSet;
use super::types::{AssistantMessage, Message, NoticeLevel, StopReason};
use futures::StreamExt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Error text of an assistant message cut short by the user.
pub const ABORTED_MESSAGE: &str = "Aborted by the user.";

/// The context a run works on (the history comes from [`RunEnv::history`]).
#[derive(Clone, Debug, Default)]
pub struct AgentContext {
    /// The system prompt.
    pub system_prompt: String,
    /// The tools the model may call.
    pub tools: ToolSet,
    /// The compaction in force: the model sees its summary instead of the messages
    /// before its first kept one.
    pub compaction: Option<Compaction>,
}

/// What a run needs besides its context.
pub struct RunEnv<'a> {
    /// The model backend.
    pub provider: &'a dyn Provider,
    /// Model, limits, hooks.
    pub config: &'a LoopConfig,
    /// Steering and follow-up queues.
    pub queues: &'a Queues,
    /// Where events go.
    pub sink: &'a EventSink,
    /// Aborts the run.
    pub cancel: &'a CancellationToken,
    /// The tool calls executing now, which can be stopped without aborting the run.
    pub calls: &'a RunningCalls,
    /// The history as it is now: what the run started from, and every message whose
    /// `message_end` it emitted since (the sink's receiver keeps it).
    pub history: &'a (dyn Fn() -> Arc<History> + Send + Sync),
}

impl RunEnv<'_> {
    /// Emits an event.
    pub(crate) fn emit(&self, event: AgentEvent) {
        self.sink.emit(event);
    }
}

/// Runs the loop: injects `prompts` (none to continue from the current context), then
/// turns until the model stops and both queues are empty. Emits `agent_start` first and
/// `agent_end` last, and returns every message the run added.
pub async fn run_loop(
    ctx: &mut AgentContext,
    prompts: Vec<Message>,
    env: &RunEnv<'_>,
) -> Vec<Message> {
    let mut run = Run {
        ctx,
        env,
        added: Vec::new(),
        retired: ToolSet::default(),
    };
    env.emit(AgentEvent::AgentStart);
    run.turns(prompts).await;
    // A run that stopped early (failed, aborted, at its turn limit) takes nothing more:
    // what it leaves queued is the supervisor's to start, before anything sent later.
    env.queues.close_intake();
    let messages = run.added;
    env.emit(AgentEvent::AgentEnd {
        messages: messages.clone(),
    });
    messages
}

/// Compacts the history now (`/compact`, RPC `compact`), as a run of its own between
/// `agent_start` and `agent_end`; `focus` says what the summary should keep. Returns
/// whether the history was compacted.
pub async fn run_compaction(ctx: &mut AgentContext, focus: Option<&str>, env: &RunEnv<'_>) -> bool {
    let mut run = Run {
        ctx,
        env,
        added: Vec::new(),
        retired: ToolSet::default(),
    };
    env.emit(AgentEvent::AgentStart);
    let protected_from = (env.history)().len();
    let done = run
        .compact(CompactionReason::Manual, protected_from, focus)
        .await
        .is_done();
    env.emit(AgentEvent::AgentEnd {
        messages: Vec::new(),
    });
    done
}

pub(super) struct Run<'c, 'e, 'a> {
    pub(super) ctx: &'c mut AgentContext,
    pub(super) env: &'e RunEnv<'a>,
    pub(super) added: Vec<Message>,
    /// Tools the run started with that are no longer offered (the tools changed while
    /// it ran): a call the model still makes to one is answered by the tool itself, whose
    /// guards (plan mode, an MCP server that dropped it) refuse it with their reason.
    pub(super) retired: ToolSet,
}

impl Run<'_, '_, '_> {
    /// Adds a complete message to the context, announcing it.
    fn push(&mut self, message: Message) {
        self.env.emit(AgentEvent::MessageStart {
            message: message.clone(),
        });
        self.env.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        });
        self.record(message);
    }

    pub(super) fn record(&mut self, message: Message) {
        self.added.push(message);
    }

    async fn turns(&mut self, prompts: Vec<Message>) {
        let env = self.env;
        let mut pending = prompts;
        // The user may have typed while waiting: steering goes in before the first call.
        pending.extend(env.queues.poll(QueueKind::Steering, env.sink));
        let mut source = QueueKind::Steering;
        let mut turn = 0u32;
        loop {
            loop {
                // A limit of 0 would drop the prompt unanswered; every run gets one turn.
                if turn >= env.config.max_turns.max(1) {
                    self.stop_at_turn_limit(pending, source);
                    return;
                }
                turn += 1;
                env.emit(AgentEvent::TurnStart { turn });
                // What is injected now is the request's own input: never compacted away.
                let protected_from = (env.history)().len();
                for message in pending.drain(..) {
                    self.push(message);
                }
                let assistant = self.answer(protected_from).await;
                let calls = if assistant.is_failed() {
                    Vec::new()
                } else {
                    assistant.tool_calls()
                };
                let (results, steering) = if calls.is_empty() {
                    (Vec::new(), Vec::new())
                } else {
                    execute_tool_calls(self.ctx.tools.keeping(&self.retired), calls.clone(), env)
                        .await
                };
                for result in &results {
                    self.push(result.clone());
                }
                env.emit(AgentEvent::TurnEnd {
                    message: Message::Assistant(assistant.clone()),
                    tool_results: results,
                    context_usage: self.context_usage(),
                });
                if assistant.is_failed() || env.cancel.is_cancelled() {
                    return;
                }
                pending = steering;
                source = QueueKind::Steering;
                if pending.is_empty() {
                    pending = env.queues.poll(QueueKind::Steering, env.sink);
                }
                if calls.is_empty() && pending.is_empty() {
                    break;
                }
            }
            // Steering that came after the last look, else the follow-ups; when there
            // is neither the intake closes in the same step: whatever is sent from
            // now on is not this run's to take, and waits for the next one.
            let Some((kind, next)) = env.queues.next_or_close(env.sink) else {
                return;
            };
            (source, pending) = (kind, next);
        }
    }

    /// Ends the run with a notice; messages taken from a queue go back to its front.
    fn stop_at_turn_limit(&mut self, pending: Vec<Message>, source: QueueKind) {
        let env = self.env;
        env.queues.push_front(source, pending, env.sink);
        let limit = env.config.max_turns.max(1);
        self.push(Message::notice(
            NoticeLevel::Warning,
            format!(
                "Stopped after {limit} turns: the run reached its turn limit (max_turns = {limit}). \
                 Send a message or continue to let the agent go on."
            ),
        ));
    }

    /// Streams one assistant message (`message_start` and its updates); the caller ends
    /// it with [`Run::finish_answer`].
    pub(super) async fn stream_once(&mut self) -> AssistantMessage {
        let env = self.env;
        let mut partial = AssistantMessage::empty(&env.config.model);
        let mut raw_args = Vec::new();
        // The request borrows the history's messages and keeps the history it borrows
        // (shared, not copied) for as long as the provider needs it: the HTTP provider
        // writes the body from it while sending, so no whole copy of the body is made.
        // The stream, and with it the request, is dropped before the answer is added
        // to the history, so that push copies nothing (unless the request log's thread
        // still writes the body again: then the messages added since the history was
        // last frozen are copied once, as any other holder of the history would cause).
        let mut stream = {
            // Converted straight from the history unless a transform wants its own copy
            // or a compaction is in force: a long history is not copied once more per
            // request. The model sees the summary and the kept messages, never the
            // compacted ones.
            let shared = (env.history)();
            let view = match self.ctx.compaction.as_ref() {
                Some(c) if c.fits(shared.len()) => {
                    Arc::new(History::unshared(compacted_view(&shared, Some(c))))
                }
                _ => shared,
            };
            let history = match &env.config.transform_context {
                Some(transform) => Arc::new(History::unshared(
                    transform(view.to_vec(), env.cancel.clone()).await,
                )),
                None => view,
            };
            // After the transform: it may have waited for tools to become available.
            if let Some(refresh) = &env.config.refresh_tools
                && let Some((system_prompt, tools)) = refresh()
            {
                self.ctx.system_prompt = system_prompt;
                self.retired = self.ctx.tools.keeping(&self.retired);
                self.ctx.tools = tools;
            }
            let request = SharedRequest::new(history, |history| LlmRequest {
                system_prompt: self.ctx.system_prompt.clone(),
                messages: sanitize_for_llm((env.config.convert_to_llm)(history)),
                tools: self.ctx.tools.definitions(),
                model: env.config.model.clone(),
                thinking: env.config.thinking,
            });
            env.emit(AgentEvent::MessageStart {
                message: Message::Assistant(partial.clone()),
            });
            env.provider
                .stream_shared(Arc::new(request), env.cancel.clone(), None)
        };
        let message = loop {
            let event = tokio::select! {
                biased;
                () = env.cancel.cancelled() => break ended(partial, raw_args, StopReason::Aborted, ABORTED_MESSAGE),
                event = stream.next() => event,
            };
            match event {
                Some(LlmEvent::Start) => {}
                Some(LlmEvent::RetryStart {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                }) => env.emit(AgentEvent::AutoRetryStart {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                }),
                Some(LlmEvent::RetryEnd { attempt }) => {
                    env.emit(AgentEvent::AutoRetryEnd { attempt });
                }
                Some(LlmEvent::Delta(delta)) => {
                    apply_delta(&mut partial, &mut raw_args, &delta);
                    env.emit(AgentEvent::MessageUpdate { delta });
                }
                Some(LlmEvent::Done(message)) => break message,
                Some(LlmEvent::Error(message)) => break as_failure(message),
                None => {
                    break ended(
                        partial,
                        raw_args,
                        StopReason::Error,
                        "The provider stream ended without a final message.",
                    );
                }
            }
        };
        drop(stream);
        message
    }

    /// Ends the assistant message being streamed and adds it to the context.
    pub(super) fn finish_answer(&mut self, message: &AssistantMessage) {
        self.env.emit(AgentEvent::MessageEnd {
            message: Message::Assistant(message.clone()),
        });
        self.record(Message::Assistant(message.clone()));
    }

    /// An answer that never started: the user cancelled what came before the call.
    pub(super) fn aborted_answer(&mut self) -> AssistantMessage {
        let env = self.env;
        let message = ended(
            AssistantMessage::empty(&env.config.model),
            Vec::new(),
            StopReason::Aborted,
            ABORTED_MESSAGE,
        );
        env.emit(AgentEvent::MessageStart {
            message: Message::Assistant(AssistantMessage::empty(&env.config.model)),
        });
        self.finish_answer(&message);
        message
    }
}

/// The partial message, closed with a failure reason.
fn ended(
    mut partial: AssistantMessage,
    raw_args: Vec<String>,
    reason: StopReason,
    text: &str,
) -> AssistantMessage {
    finish_partial(&mut partial, &raw_args);
    partial.stop_reason = reason;
    partial.error_message = Some(text.to_owned());
    partial
}

/// A provider's error message, guaranteed to read as a failure.
fn as_failure(mut message: AssistantMessage) -> AssistantMessage {
    if !message.is_failed() {
        message.stop_reason = StopReason::Error;
    }
    if message.error_message.is_none() {
        message.error_message = Some("The provider reported an error without details.".into());
    }
    message
}
