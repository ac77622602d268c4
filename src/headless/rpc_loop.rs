//! The RPC process: commands read line by line and answered, events forwarded as they
//! happen. At the end of input everything queued is run and printed before the process
//! exits (or, with `--exit-on-eof`, the run is aborted and the queue dropped, with a
//! count); a stop signal aborts the run and leaves what is queued in the session.

use super::rpc::{PendingApprovals, failure, handle_line};
use super::rpc_input::{Input, LineReader};
use super::write_json_line;
use crate::agent::{AgentEvent, EventKind, Message, QueueKind};
use crate::exit::EXIT_OK;
use crate::mcp::McpManager;
use crate::runtime::{RuntimeEvent, SubagentManager, Supervisor};
use crate::setup::Controls;
use crate::signals::{StopSignals, signal_name};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::AsyncRead;
use tokio::sync::{mpsc, oneshot};

/// How often the end-of-input wait looks again at subagents it has no event for.
const RECHECK: Duration = Duration::from_millis(200);

/// How the RPC process reads its input and ends.
#[derive(Clone, Copy, Debug)]
pub struct RpcOptions {
    /// The longest input line accepted, in bytes.
    pub max_line_bytes: usize,
    /// At the end of input, abort and drop what is queued instead of finishing it.
    pub exit_on_eof: bool,
}

/// What the process shares with its event forwarder.
struct Shared<'a> {
    supervisor: &'a Supervisor,
    subagents: &'a SubagentManager,
    /// Subagent results delivered to the main agent so far.
    delivered: Arc<AtomicUsize>,
}

/// The parts of the runtime the commands act on.
#[derive(Clone, Copy)]
pub struct RpcRuntime<'a> {
    /// Takes prompts and runs the main agent.
    pub supervisor: &'a Supervisor,
    /// Hooks, checkpoints and plan mode.
    pub controls: &'a Controls,
    /// The subagents, waited for at the end of input.
    pub subagents: &'a SubagentManager,
    /// The MCP servers `get_state` lists.
    pub mcp: &'a McpManager,
    /// Where the session's requests are recorded (`get_requests`, `get_request`).
    pub requests: &'a crate::llm::RequestTap,
    /// The custom commands and skills a `prompt` may name.
    pub prompts: &'a crate::typed::PromptFiles,
}

/// Serves RPC commands from `input` until its end or a stop signal; returns the exit
/// code (130/143 after a signal).
pub async fn serve(
    runtime: RpcRuntime<'_>,
    runtime_events: mpsc::UnboundedReceiver<RuntimeEvent>,
    approvals: PendingApprovals,
    input: impl AsyncRead + Unpin,
    options: RpcOptions,
    stop: &mut StopSignals,
) -> i32 {
    let RpcRuntime {
        supervisor,
        controls,
        subagents,
        mcp,
        requests,
        prompts,
    } = runtime;
    let agent = supervisor.agent();
    let shared = Shared {
        supervisor,
        subagents,
        delivered: Arc::new(AtomicUsize::new(0)),
    };
    let events = agent.subscribe(None);
    let (done_tx, done_rx) = oneshot::channel();
    let forwarder = tokio::spawn(forward_events(
        events,
        runtime_events,
        done_rx,
        shared.delivered.clone(),
    ));
    let mut reader = LineReader::new(input, options.max_line_bytes);
    let mut signal = None;
    loop {
        let next = tokio::select! {
            next = reader.next() => next,
            code = stop.recv() => {
                signal = Some(code);
                break;
            }
        };
        match next {
            Ok(Input::Line(line)) if line.trim().is_empty() => {}
            Ok(Input::Line(line)) => {
                let sources = super::rpc::Sources {
                    controls,
                    mcp,
                    requests,
                    prompts: Some(prompts),
                };
                write_json_line(&handle_line(supervisor, sources, &approvals, &line).await)
            }
            Ok(Input::Bad(why)) => write_json_line(&failure(None, why)),
            Ok(Input::End) => break,
            Err(e) => {
                write_json_line(&failure(None, format!("cannot read stdin: {e}")));
                break;
            }
        }
    }
    // Nobody can answer an approval request any more.
    approvals.close();
    let code = match signal {
        Some(code) => stopped(&shared, code, stop).await,
        None if options.exit_on_eof => {
            drop_queued(&shared, stop).await;
            EXIT_OK
        }
        None => match finish_queued(&shared, stop).await {
            Some(code) => stopped(&shared, code, stop).await,
            None => EXIT_OK,
        },
    };
    // `state()` takes the lock under which `agent_end` is handed to subscribers, so after
    // it every event of the run is in the forwarder's channel.
    let _ = agent.state();
    let _ = done_tx.send(());
    let _ = forwarder.await;
    code
}

/// Runs what is queued (follow-ups, steering, notifications, subagents still working)
/// until nothing is left; `Some(code)` if a stop signal came first.
async fn finish_queued(shared: &Shared<'_>, stop: &mut StopSignals) -> Option<i32> {
    let supervisor = shared.supervisor;
    let mut changes = supervisor
        .agent()
        .subscribe(Some(&[EventKind::AgentStart, EventKind::AgentEnd]));
    let mut recheck = tokio::time::interval(RECHECK);
    loop {
        // An abort holds what waits until the next input: there is none to come now.
        supervisor.release();
        if settled(shared) {
            return None;
        }
        tokio::select! {
            _ = changes.recv() => {}
            _ = recheck.tick() => {}
            code = stop.recv() => return Some(code),
        }
    }
}

/// Nothing runs, nothing is queued, and every subagent's result has been delivered.
fn settled(shared: &Shared<'_>) -> bool {
    let supervisor = shared.supervisor;
    let agent = supervisor.agent();
    let subagents = shared.subagents.list();
    !agent.state().is_streaming
        && agent.queued(QueueKind::Steering).is_empty()
        && agent.queued(QueueKind::FollowUp).is_empty()
        && supervisor.pending_count() == 0
        && subagents.iter().all(|s| s.status.is_finished())
        && shared.delivered.load(Ordering::SeqCst) >= subagents.len()
}

/// `--exit-on-eof`: aborts the run, drops the queued messages and says how many.
async fn drop_queued(shared: &Shared<'_>, stop: &mut StopSignals) {
    let agent = shared.supervisor.agent();
    let running = agent.state().is_streaming;
    let dropped = agent.clear_queue(None).len();
    shared.supervisor.abort();
    wait_idle(shared, stop).await;
    let what = if running {
        "aborted the running prompt"
    } else {
        "no prompt was running"
    };
    say!(
        "claw-tui: end of input (--exit-on-eof): {what}; dropped {dropped} queued message{}",
        plural(dropped)
    );
    write_json_line(&json!({
        "type": "end_of_input",
        "aborted": running,
        "dropped": dropped,
    }));
}

/// A stop signal: aborts the run (its partial answer is recorded as aborted); what is
/// queued stays queued in the session, for the next resume.
async fn stopped(shared: &Shared<'_>, code: i32, stop: &mut StopSignals) -> i32 {
    let agent = shared.supervisor.agent();
    let running = agent.state().is_streaming;
    shared.supervisor.abort();
    wait_idle(shared, stop).await;
    let queued = agent.queued(QueueKind::Steering).len() + agent.queued(QueueKind::FollowUp).len();
    let what = if running {
        "aborted the running prompt (what it had streamed is saved as aborted)"
    } else {
        "no prompt was running"
    };
    let kept = if queued > 0 {
        format!(
            "; {queued} queued message{} stay in the session",
            plural(queued)
        )
    } else {
        String::new()
    };
    say!("claw-tui: {}: {what}{kept}", signal_name(code));
    code
}

/// Waits for the aborted run to end; another signal meanwhile exits at once.
async fn wait_idle(shared: &Shared<'_>, stop: &mut StopSignals) {
    tokio::select! {
        () = shared.supervisor.agent().wait_for_idle() => {}
        code = stop.recv_again() => {
            say!("claw-tui: stopped again; exiting without waiting");
            // Not waiting for the run, but its commands are stopped and checked.
            crate::tools::exec::stop_commands_and_report();
            std::process::exit(code);
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

async fn forward_events(
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    mut runtime_events: mpsc::UnboundedReceiver<RuntimeEvent>,
    mut done: oneshot::Receiver<()>,
    delivered: Arc<AtomicUsize>,
) {
    let forward = |event: AgentEvent| {
        if let AgentEvent::MessageEnd {
            message: Message::Notification(n),
        } = &event
            && n.source == crate::runtime::subagents::RESULT_SENDER
        {
            delivered.fetch_add(1, Ordering::SeqCst);
        }
        write_json_line(&event);
    };
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => forward(event),
                None => return,
            },
            Some(event) = runtime_events.recv() => {
                super::report_on_stderr(&event);
                write_json_line(&event);
            }
            _ = &mut done => {
                while let Ok(event) = events.try_recv() {
                    forward(event);
                }
                return;
            }
        }
    }
}
