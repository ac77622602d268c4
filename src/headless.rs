//! The scriptable modes: `--print` (text), `--mode json` (event lines) and `--mode rpc`.

/// `eprintln!` for the headless modes, whose stderr may have no reader left (the
/// terminal of a hung-up session, a closed pipe): the line is dropped, never a panic
/// that would lose the session's last words and the exit code.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::signals::tell(&format!($($arg)*))
    };
}

mod launch;
pub mod rpc;
mod rpc_command;
mod rpc_controls;
mod rpc_input;
mod rpc_loop;
pub(crate) mod saving;
mod stdin;

use crate::signals::{StopSignals, signal_name};
pub(crate) use launch::wait_for_mcp_before_first_request;
pub use launch::{Front, run_command, run_front, run_headless};
pub use rpc_input::{Input, LineReader};

use crate::agent::{AgentEvent, CompactionResult, Message, ToolCall, UserMessage};
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED};
use crate::hooks::hook_marks;
use crate::runtime::supervisor::UserInput;
use crate::runtime::{RuntimeEvent, SubagentManager, Supervisor};
use crate::text::{clip, summarize_args};
use crate::visible::{for_stderr, for_stdout};
use std::io::Write;
use tokio::sync::mpsc::UnboundedReceiver;

/// Writes one JSON line to stdout and flushes it, so readers see each event at once.
pub fn write_json_line(value: &impl serde::Serialize) {
    let mut out = std::io::stdout().lock();
    // The same text the session's event log keeps, so a JSON replay prints these lines.
    if let Some(line) = crate::session::event_json(value) {
        // A closed stdout (reader gone) is not worth crashing over.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Runs one prompt to completion, including the runs that deliver the results of
/// subagents it started. In text mode prints the final answer to stdout and a line per
/// tool call to stderr; in JSON mode prints every agent and runtime event as a JSON line.
/// A stop signal aborts the run (what it streamed is recorded as aborted) and returns
/// 130 or 143.
pub async fn run_prompt(
    supervisor: &Supervisor,
    subagents: &SubagentManager,
    runtime_events: &mut UnboundedReceiver<RuntimeEvent>,
    prompt: UserMessage,
    json: bool,
    stop: &mut StopSignals,
) -> i32 {
    let mut events = supervisor.agent().subscribe(None);
    // The supervisor runs the prompt hooks (they see and extend the text; the images go
    // as they are), then starts the run.
    if let Err(blocked) = supervisor.deliver(UserInput::Submit(prompt)).await {
        while let Ok(event) = runtime_events.try_recv() {
            if json {
                write_json_line(&event);
            } else {
                report_on_stderr(&event);
            }
        }
        say!(
            "claw-tui: a prompt hook blocked the prompt: {}",
            for_stderr(&blocked.reason)
        );
        return EXIT_RUN_FAILED;
    }
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut last_run = Vec::new();
    let mut delivered = 0;
    let mut interrupted = None;
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                show_agent_event(&event, json, &mut calls);
                if let AgentEvent::AgentEnd { messages } = event {
                    delivered += messages.iter().filter(|m| matches!(m, Message::Notification(_))).count();
                    let failed = messages.iter().rev().find_map(Message::as_assistant).is_some_and(|a| a.is_failed());
                    last_run = messages;
                    if failed || background_done(supervisor, subagents, delivered) {
                        break;
                    }
                }
            }
            Some(event) = runtime_events.recv() => {
                if json {
                    write_json_line(&event);
                } else {
                    report_on_stderr(&event);
                }
            }
            code = stop.recv() => {
                interrupted = Some(code);
                // Held too: no notification starts another run now.
                supervisor.abort();
                tokio::select! {
                    () = supervisor.agent().wait_for_idle() => {}
                    code = stop.recv_again() => {
                        say!("claw-tui: stopped again; exiting without waiting");
                        // Not waiting for the run, but its commands are stopped and checked.
                        crate::tools::exec::stop_commands_and_report();
                        std::process::exit(code);
                    }
                }
                // The agent goes idle as it takes in `agent_end`, before it hands the event
                // to its subscribers (under its lock, which reading the state takes): once
                // the state is read, every event of the stopped run is in `events`, and
                // none may be left unprinted (the aborted answer, `agent_end`).
                let _ = supervisor.agent().state();
                while let Ok(event) = events.try_recv() {
                    show_agent_event(&event, json, &mut calls);
                }
                break;
            }
        }
    }
    // What arrived as the run ended is still worth telling (in JSON mode too: a
    // subagent's last events may still wait in the channel when its result is in).
    while let Ok(event) = runtime_events.try_recv() {
        if json {
            write_json_line(&event);
        } else {
            report_on_stderr(&event);
        }
    }
    if let Some(code) = interrupted {
        say!(
            "claw-tui: {}: the run was stopped; what it had streamed is saved in the session as aborted",
            signal_name(code)
        );
        return code;
    }
    finish(&last_run, json)
}

/// Prints one agent event: a JSON line in JSON mode, else what text mode tells on stderr.
fn show_agent_event(event: &AgentEvent, json: bool, calls: &mut Vec<ToolCall>) {
    if json {
        write_json_line(event);
    } else {
        describe_on_stderr(event, calls);
    }
}

/// Prints what the runtime reports for the user (the state of the cron jobs file, hooks
/// that failed) on stderr; other runtime events only matter to the JSON modes.
pub fn report_on_stderr(event: &RuntimeEvent) {
    // A closed stderr leaves nobody to tell.
    match event {
        RuntimeEvent::CronStatus { ok, message } => {
            let kind = if *ok { "note" } else { "warning" };
            let _ = writeln!(
                std::io::stderr(),
                "claw-tui: {kind}: {}",
                for_stderr(message)
            );
        }
        RuntimeEvent::HookWarning { message, .. } => {
            let _ = writeln!(
                std::io::stderr(),
                "claw-tui: warning: {}",
                for_stderr(message)
            );
        }
        _ => {}
    }
}

/// True when no subagent is still working and every result reached the main agent.
fn background_done(supervisor: &Supervisor, subagents: &SubagentManager, delivered: usize) -> bool {
    let all = subagents.list();
    all.iter().all(|s| s.status.is_finished())
        && delivered >= all.len()
        && supervisor.pending_count() == 0
}

/// Decides the exit code from what the run added, printing the answer or the failure.
fn finish(added: &[Message], json: bool) -> i32 {
    if let Some(Message::Notice(notice)) = added.last() {
        say!("claw-tui: {}", for_stderr(&notice.text));
        return EXIT_RUN_FAILED;
    }
    match added.iter().rev().find_map(Message::as_assistant) {
        Some(a) if a.is_failed() => {
            let why = a.error_message.as_deref().unwrap_or("the run failed");
            say!("claw-tui: {}", for_stderr(why));
            EXIT_RUN_FAILED
        }
        Some(a) => {
            if !json {
                // The answer is data: byte for byte to a pipe or file, made visible on a
                // terminal, where an escape sequence would be obeyed.
                println!("{}", for_stdout(a.text().trim_end()));
            }
            EXIT_OK
        }
        None => {
            say!("claw-tui: the run produced no answer");
            EXIT_RUN_FAILED
        }
    }
}

/// One short stderr line per tool call (when it ends) and per retry.
fn describe_on_stderr(event: &AgentEvent, calls: &mut Vec<ToolCall>) {
    match event {
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => calls.push(ToolCall {
            id: tool_call_id.clone(),
            name: tool_name.clone(),
            args: args.clone(),
        }),
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
            is_error,
        } => {
            let args = calls
                .iter()
                .find(|c| c.id == *tool_call_id)
                .map(|c| summarize_args(&c.args))
                .unwrap_or_default();
            let marks = hook_marks(&result.details);
            let line = if *is_error {
                let first = result.content.lines().next().unwrap_or_default();
                format!("✗ {tool_name} {args} — {}", clip(first, 100))
            } else {
                format!("✓ {tool_name} {args}")
            };
            say!("{}", for_stderr(line.trim_end()));
            // A block is the error line already; the other marks say what else happened.
            for mark in marks.iter().filter(|m| !m.starts_with('⛔')) {
                say!("  {}", for_stderr(mark));
            }
        }
        AgentEvent::CompactionStart { tokens_before, .. } => {
            say!("compacting the history ({tokens_before} tokens)…");
        }
        AgentEvent::CompactionEnd(end) => match end.outcome {
            CompactionResult::Compacted => say!(
                "compacted: {} → {} tokens",
                end.tokens_before,
                end.tokens_after
            ),
            CompactionResult::Aborted => say!("compaction cancelled; nothing changed"),
            CompactionResult::Failed | CompactionResult::NothingToCompact => say!(
                "compaction did not happen: {}",
                for_stderr(end.error.as_deref().unwrap_or("no reason was given"))
            ),
        },
        AgentEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            reason,
        } => say!(
            "retry {attempt}/{max_attempts} in {:.1} s: {}",
            *delay_ms as f64 / 1000.0,
            for_stderr(&clip(reason, 100))
        ),
        _ => {}
    }
}
