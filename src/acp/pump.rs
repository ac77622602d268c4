//! One task per session that does everything in order: it hands prompts to the
//! supervisor's intake, turns the agent's and the runtime's events into
//! `session/update`s, answers each prompt when its turn ends (after every update of
//! that turn), cancels as Esc does, and asks the client's permission for the calls the
//! policy holds, once the editor has heard of the call.

use super::stop::{Ending, ending};
use super::turns::{Decided, Turns};
use super::updates::{Presenter, call_id};
use super::usage::{totals, usage};
use super::{permission, plan};
use crate::agent::{AgentEvent, Message, QueueKind, UserMessage, now_ms};
use crate::runtime::mode::{AgentMode, ModeSwitch};
use crate::runtime::supervisor::{Delivery, UserInput};
use crate::runtime::{RuntimeEvent, Supervisor};
use crate::tools::Workspace;
use crate::tools::exec::{ApprovalDecision, ApprovalRequest};
use agent_client_protocol::v1::schema::{
    PromptResponse, SessionId, SessionNotification, SessionUpdate, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// What the rest of the front-end asks of a session's pump.
pub enum Job {
    /// A prompt: run it, answer `responder` when its turn ends.
    Prompt {
        /// The user's message.
        message: UserMessage,
        /// Where its answer goes.
        responder: Responder<PromptResponse>,
    },
    /// `session/cancel`: stop the turn as Esc does.
    Cancel,
    /// The policy holds a call until the user answers.
    Ask {
        /// The question.
        request: ApprovalRequest,
        /// Where the answer goes.
        answer: oneshot::Sender<ApprovalDecision>,
    },
    /// Updates to send in order with the events (the commands offered).
    Send(Vec<SessionUpdate>),
    /// A command's answer: these updates, then the prompt answered with `reason`.
    Reply {
        /// What the command says.
        updates: Vec<SessionUpdate>,
        /// The prompt that ran the command.
        responder: Responder<PromptResponse>,
        /// How its turn ended.
        reason: StopReason,
    },
    /// `/compact`: a compaction, its prompt answered when that run ends.
    Compact {
        /// What the summary must keep.
        focus: Option<String>,
        /// The prompt that ran the command.
        responder: Responder<PromptResponse>,
    },
}

/// The parts a pump works with.
pub struct PumpParts {
    /// The connection to the client.
    pub cx: ConnectionTo<Client>,
    /// The session's ACP id.
    pub session: SessionId,
    /// The session's supervisor.
    pub supervisor: Supervisor,
    /// The session's workspace handle (the diffs read files back through it).
    pub workspace: Arc<Workspace>,
    /// The session's mode (a plan-mode answer is sent as a plan too).
    pub modes: ModeSwitch,
    /// The main agent's events (subscribed before anything could run).
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// The runtime's events (subagents, hooks, cron).
    pub runtime: mpsc::UnboundedReceiver<RuntimeEvent>,
    /// Ends the pump.
    pub stop: CancellationToken,
}

type Deliveries = FuturesUnordered<BoxFuture<'static, (u64, Delivery)>>;

struct Pump {
    cx: ConnectionTo<Client>,
    session: SessionId,
    supervisor: Supervisor,
    presenter: Presenter,
    modes: ModeSwitch,
    turns: Turns,
    /// The client cancelled the run under way.
    cancelling: bool,
}

/// Runs the pump of a session until `parts.stop` or the end of its channels.
pub async fn run(parts: PumpParts, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let PumpParts {
        cx,
        session,
        supervisor,
        workspace,
        modes,
        mut events,
        mut runtime,
        stop,
    } = parts;
    let mut pump = Pump {
        cx,
        session,
        supervisor,
        presenter: Presenter::new(workspace),
        modes,
        turns: Turns::default(),
        cancelling: false,
    };
    let mut deliveries = Deliveries::new();
    loop {
        // The order matters: a decision before the events it led to; the events
        // before the jobs, so a permission request comes after its call's update.
        tokio::select! {
            biased;
            Some((id, delivery)) = deliveries.next(), if !deliveries.is_empty() => {
                pump.decided(id, delivery);
            }
            event = events.recv() => match event {
                Some(event) => pump.agent_event(event).await,
                None => break,
            },
            Some(event) = runtime.recv() => pump.runtime_event(event).await,
            job = jobs.recv() => match job {
                Some(Job::Ask { request, answer }) => {
                    // What was sent before the question reaches the editor first.
                    while let Ok(event) = events.try_recv() {
                        pump.agent_event(event).await;
                    }
                    while let Ok(event) = runtime.try_recv() {
                        pump.runtime_event(event).await;
                    }
                    pump.ask(request, answer);
                }
                Some(job) => pump.job(job, &mut deliveries),
                None => break,
            },
            () = stop.cancelled() => break,
        }
    }
    while let Ok(event) = events.try_recv() {
        pump.agent_event(event).await;
    }
    // The session closes: what was not answered ends as cancelled.
    for responder in pump.turns.drain() {
        let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
    }
}

impl Pump {
    fn send(&self, update: SessionUpdate) {
        if let Err(e) = self
            .cx
            .send_notification(SessionNotification::new(self.session.clone(), update))
        {
            tracing::debug!("session/update not sent: {e}");
        }
    }

    fn job(&mut self, job: Job, deliveries: &mut Deliveries) {
        match job {
            Job::Prompt {
                mut message,
                responder,
            } => {
                message.timestamp = self.turns.stamp(now_ms());
                let id = self.turns.add(message.timestamp, responder);
                // Its place in line is taken now; the hooks may still look at it.
                let delivery = self.supervisor.deliver(UserInput::Submit(message));
                deliveries.push(Box::pin(async move { (id, delivery.await) }));
            }
            Job::Cancel => self.cancel(),
            Job::Send(updates) => {
                for update in updates {
                    self.send(update);
                }
            }
            Job::Reply {
                updates,
                responder,
                reason,
            } => {
                for update in updates {
                    self.send(update);
                }
                let _ = responder.respond(PromptResponse::new(reason));
            }
            // Started here, so its run's end cannot come before the prompt is known.
            Job::Compact { focus, responder } => match self.supervisor.compact(focus) {
                Ok(()) => self.turns.add_running(responder),
                Err(e) => {
                    self.send(SessionUpdate::AgentMessageChunk(
                        agent_client_protocol::v1::schema::ContentChunk::new(
                            format!("Cannot compact now: {e}").into(),
                        ),
                    ));
                    let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                }
            },
            // Handled by the loop, which sends what came before it first.
            Job::Ask { request, answer } => self.ask(request, answer),
        }
    }

    /// The hooks decided about prompt `id`.
    fn decided(&mut self, id: u64, delivery: Delivery) {
        let decided = self.turns.decided(id, delivery.is_ok());
        match (decided, delivery) {
            (Some(Decided::Answer(responder)), Err(blocked)) => {
                // Nothing of it reached the history: the agent refused it, in the
                // hook's words.
                self.send(SessionUpdate::AgentMessageChunk(
                    agent_client_protocol::v1::schema::ContentChunk::new(
                        format!("A prompt hook blocked this prompt: {}", blocked.reason).into(),
                    ),
                ));
                let _ = responder.respond(PromptResponse::new(StopReason::Refusal));
            }
            (Some(Decided::Answer(responder)), Ok(_)) => {
                let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
            }
            (Some(Decided::AdmittedAfterCancel), _) => {
                self.cancelling = true;
                self.supervisor.abort();
            }
            _ => {}
        }
    }

    /// `session/cancel`: what waits in the queue is taken out and answered as
    /// cancelled (Esc gives it back to the composer), and the run is stopped: its
    /// running tool stopped, what it streamed kept as aborted. The running prompt is
    /// answered when the run has ended, after its last update.
    fn cancel(&mut self) {
        let agent = self.supervisor.agent();
        agent.clear_queue(Some(QueueKind::FollowUp));
        for responder in self.turns.cancel() {
            let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
        }
        if self.turns.running() || agent.state().is_streaming {
            self.cancelling = true;
        }
        self.supervisor.abort();
    }

    async fn agent_event(&mut self, event: AgentEvent) {
        if let AgentEvent::MessageStart {
            message: Message::User(user),
        } = &event
            && let Some(done) = self.turns.entered(user.timestamp)
        {
            // The agent went on to the next prompt: the one before has had its turn.
            let _ = done.respond(PromptResponse::new(StopReason::EndTurn));
        }
        for update in self.presenter.agent(&event).await {
            self.send(update);
        }
        if let AgentEvent::AgentEnd { messages } = &event {
            self.run_ended(messages);
        }
    }

    fn run_ended(&mut self, messages: &[Message]) {
        let ending = ending(messages, self.cancelling);
        self.cancelling = false;
        // A plan-mode answer's steps, for the editor's plan view.
        if self.modes.mode() == AgentMode::Plan
            && let Some(plan) = plan::from_run(messages)
        {
            self.send(SessionUpdate::Plan(plan));
        }
        let agent = self.supervisor.agent();
        let totals = totals(agent.state().messages.iter());
        self.send(usage(&agent.context_usage(), Some(&totals)));
        for responder in self.turns.run_ended() {
            let _ = match &ending {
                Ending::Stopped(reason) => responder.respond(PromptResponse::new(*reason)),
                Ending::Failed(why) => {
                    responder.respond_with_error(Error::new(ErrorCode::INTERNAL_ERROR, why.clone()))
                }
            };
        }
    }

    async fn runtime_event(&mut self, event: RuntimeEvent) {
        match event {
            RuntimeEvent::SubagentEvent {
                subagent_id, event, ..
            } => {
                for update in self.presenter.subagent(&subagent_id, &event).await {
                    self.send(update);
                }
            }
            RuntimeEvent::HookWarning { message, .. } => {
                say!(
                    "claw-tui: warning: {}",
                    crate::visible::for_stderr(&message)
                );
            }
            RuntimeEvent::CronStatus { ok, message } => {
                let kind = if ok { "note" } else { "warning" };
                say!("claw-tui: {kind}: {}", crate::visible::for_stderr(&message));
            }
            RuntimeEvent::TrustRequest { request } => {
                let names: Vec<String> = request
                    .servers
                    .iter()
                    .map(|s| format!("MCP server {}", s.name))
                    .chain(request.files.iter().map(|q| request.shown(&q.file.path)))
                    .collect();
                say!(
                    "claw-tui: warning: not run, because its content is not trusted: {}; \
                     answer in the terminal client (claw-tui in this workspace), or pass \
                     --trust-project-mcp for the project's MCP servers",
                    crate::visible::for_stderr(&names.join(", "))
                );
            }
            RuntimeEvent::OutboundMessage { message } => say!(
                "[message to {}:{}] {}",
                crate::visible::for_stderr(&message.channel),
                crate::visible::for_stderr(&message.chat_id),
                crate::visible::for_stderr(&message.content)
            ),
            _ => {}
        }
    }

    /// Asks the client about a held call: the editor hears of the call first (a
    /// subagent's may not have been shown yet), then the question goes out from a task
    /// of its own, so the pump goes on while the user thinks.
    fn ask(&mut self, request: ApprovalRequest, answer: oneshot::Sender<ApprovalDecision>) {
        let label = request.subagent.as_ref().map(|s| s.id.clone());
        let id = call_id(label.as_deref(), &request.tool_call_id);
        let (announcement, fields) =
            self.presenter
                .announce(&id, &request.tool_name, &request.args, label.as_deref());
        if let Some(update) = announcement {
            self.send(update);
        }
        let question = permission::permission_request(self.session.clone(), id, &request, fields);
        let cx = self.cx.clone();
        let mut answer = answer;
        tokio::spawn(async move {
            tokio::select! {
                decision = permission::ask(cx, question) => {
                    let _ = answer.send(decision);
                }
                // The call was stopped (the turn cancelled, the session closed): the
                // question is withdrawn, the SDK sending `$/cancel_request` for it.
                () = answer.closed() => {}
            }
        });
    }
}
