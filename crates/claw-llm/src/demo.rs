//! The offline demo model: deterministic, needs no network, and drives the real tools.
//!
//! As the main agent it answers a few phrases ("list files", "read PATH", "run COMMAND",
//! "count the lines in PATH", "spawn TASK", "message TEXT", "every N seconds TEXT",
//! "stop JOB") with a tool call, then quotes what was asked for (a listing, a file, a
//! command's output) or answers in one line where the chat already shows it all (a
//! receipt, a count, a notification); anything else gets help on how to use it and how
//! to configure a real provider. As a subagent it does its task (one of the jobs) with
//! one tool call and reports in one line. Its texts live in `assets/demo.toml`.

mod command;
mod reply;
mod report;
#[cfg(test)]
mod tests;

use super::{LlmEvent, LlmMessage, LlmRequest, LlmStream, Provider};
use crate::tap::RequestOrigin;
use crate::{ModelListError, SetupError};
use claw_agent::convert::NOTIFICATION_PREFIX;
use claw_agent::event::MessageDelta;
use claw_agent::provider::CallOrigin;
use claw_agent::types::{AssistantMessage, Block, StopReason, ToolResultMessage, Usage};
use claw_text::one_line;
use command::{Command, Work};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const SCRIPT: &str = include_str!("../../../assets/demo.toml");

/// Characters per streamed chunk: about one token.
const CHUNK_CHARS: usize = 4;

/// The agent the request tap names the main agent's calls for; any other name is a
/// subagent's id (see [`RequestOrigin::agent`]).
const MAIN_AGENT: &str = "main";

#[derive(Clone, Debug, Deserialize)]
struct Script {
    help: String,
    calling: String,
    result: String,
    failed: String,
    missing_tool: String,
    replies: reply::Replies,
    reports: report::Reports,
}

/// Which agent the demo model answers for: a subagent has a task, not a chat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Main,
    Subagent,
}

impl Role {
    /// The agent a call is made for, as the request tap tagged it; untagged calls are
    /// the main agent's (only the runtime's subagents are tagged otherwise).
    fn of(origin: &CallOrigin) -> Role {
        match origin.get::<RequestOrigin>() {
            Some(origin) if origin.agent != MAIN_AGENT => Role::Subagent,
            _ => Role::Main,
        }
    }
}

/// What the demo model says, and the tool call it makes, if any.
type Answer = (String, Option<(String, Value)>);

/// The offline demo model's name, as `/model` and the status bar show it.
pub const DEMO_MODEL: &str = "demo (offline)";

/// The demo provider.
#[derive(Clone, Debug)]
pub struct DemoProvider {
    script: Script,
    pace: Duration,
    config_path: String,
}

impl DemoProvider {
    /// A demo model streaming one chunk per `pace`; `config_path` is shown in its help.
    pub fn new(pace: Duration, config_path: impl Into<String>) -> Result<Self, SetupError> {
        let script = toml::from_str(SCRIPT).map_err(|e| SetupError::DemoScript(e.to_string()))?;
        Ok(Self {
            script,
            pace,
            config_path: config_path.into(),
        })
    }

    /// What the model says and which tool it calls for this request, made for `role`.
    fn answer(&self, request: &LlmRequest, role: Role) -> Answer {
        match (request.messages.last(), role) {
            (Some(LlmMessage::ToolResult(result)), _) => {
                (self.after_call(request, result, role), None)
            }
            (Some(LlmMessage::User(user)), Role::Main) => {
                match user.content.strip_prefix(NOTIFICATION_PREFIX) {
                    Some(text) => (reply::notification(&self.script.replies, text), None),
                    None => self.prompted(request, &user.content),
                }
            }
            (Some(LlmMessage::User(user)), Role::Subagent) => self.tasked(request, &user.content),
            (_, Role::Main) => (self.help(), None),
            (_, Role::Subagent) => self.tasked(request, ""),
        }
    }

    /// The main agent's answer to the user's `text`: the call of its command, or help.
    fn prompted(&self, request: &LlmRequest, text: &str) -> Answer {
        match Command::parse(text) {
            Some(command) if offered(request, command.tool()) => (
                self.script.calling.replace("{tool}", command.tool()),
                Some(command.call()),
            ),
            Some(command) => (
                self.script.missing_tool.replace("{tool}", command.tool()),
                None,
            ),
            None => (self.help(), None),
        }
    }

    /// A subagent's answer to its `task`: the call of its job, or a one-line report of
    /// why it cannot do it (the report reaches the user, so never the whole help).
    fn tasked(&self, request: &LlmRequest, task: &str) -> Answer {
        let reports = &self.script.reports;
        let task_words = one_line(task, 60);
        match Command::parse(task) {
            Some(command @ Command::Work(_)) if offered(request, command.tool()) => (
                self.script.calling.replace("{tool}", command.tool()),
                Some(command.call()),
            ),
            Some(command) => (
                reports
                    .no_tool
                    .replace("{tool}", command.tool())
                    .replace("{task}", &task_words),
                None,
            ),
            None => (reports.unknown.replace("{task}", &task_words), None),
        }
    }

    /// The answer once the call made for the user's command (or the subagent's task)
    /// returned `result`: a one-line report or acknowledgement, or the result quoted.
    fn after_call(&self, request: &LlmRequest, result: &ToolResultMessage, role: Role) -> String {
        // The subagent's task is its first message; the main agent's command is in the
        // latest user message.
        let mut asked = request.messages.iter().filter_map(|m| match m {
            LlmMessage::User(user) => Some(user.content.as_str()),
            _ => None,
        });
        let asked = match role {
            Role::Subagent => asked.next(),
            Role::Main => asked.next_back(),
        };
        let command = asked
            .and_then(Command::parse)
            .filter(|c| c.tool() == result.tool_name);
        let reports = &self.script.reports;
        match (command, role) {
            (Some(Command::Work(work)), Role::Subagent) => report::report(reports, &work, result),
            (
                Some(Command::Work(work @ (Work::CountLines { .. } | Work::CountFiles { .. }))),
                _,
            ) => report::report(reports, &work, result),
            (Some(command), Role::Main) if !result.is_error => {
                reply::receipt(&self.script.replies, &command, &result.content)
                    .unwrap_or_else(|| self.quoted(result))
            }
            _ => self.quoted(result),
        }
    }

    /// The result quoted whole: what `list files`, `read` and `run` ask to see.
    fn quoted(&self, result: &ToolResultMessage) -> String {
        let template = if result.is_error {
            &self.script.failed
        } else {
            &self.script.result
        };
        template
            .replace("{tool}", &result.tool_name)
            .replace("{output}", &fence_safe(&result.content))
    }

    fn help(&self) -> String {
        self.script.help.replace("{config_path}", &self.config_path)
    }

    /// The streamed answer to `request`, made for `role`.
    fn respond(&self, request: &LlmRequest, role: Role, cancel: CancellationToken) -> LlmStream {
        let (text, call) = self.answer(request, role);
        let input_chars: usize = request
            .messages
            .iter()
            .map(|m| match m {
                LlmMessage::User(u) => u.content.len(),
                LlmMessage::Assistant(a) => a.text().len(),
                LlmMessage::ToolResult(r) => r.content.len(),
            })
            .sum();
        let mut content = vec![Block::Text { text: text.clone() }];
        let mut events: Vec<LlmEvent> = vec![LlmEvent::Start];
        events.extend(
            chunks(&text)
                .into_iter()
                .map(|text| LlmEvent::Delta(MessageDelta::Text { index: 0, text })),
        );
        if let Some((name, args)) = &call {
            let id = format!("demo-{}", fastrand::u32(..));
            events.push(LlmEvent::Delta(MessageDelta::ToolCallStart {
                index: 1,
                id: id.clone(),
                name: name.clone(),
            }));
            events.push(LlmEvent::Delta(MessageDelta::ToolCallArgs {
                index: 1,
                json: args.to_string(),
            }));
            content.push(Block::ToolCall {
                id,
                name: name.clone(),
                args: args.clone(),
            });
        }
        let final_message = AssistantMessage {
            content,
            stop_reason: if call.is_some() {
                StopReason::ToolUse
            } else {
                StopReason::Stop
            },
            // Rough token estimates (4 characters a token); the demo costs nothing.
            usage: Usage {
                input: (input_chars / 4) as u64,
                output: (text.len() / 4) as u64,
                ..Usage::default()
            },
            error_message: None,
            error_kind: None,
            model: DEMO_MODEL.into(),
            timestamp: claw_agent::types::now_ms(),
        };
        events.push(LlmEvent::Done(final_message));
        let pace = self.pace;
        futures::stream::iter(events)
            .then(move |event| {
                let cancel = cancel.clone();
                async move {
                    if matches!(event, LlmEvent::Delta(MessageDelta::Text { .. }))
                        && !pace.is_zero()
                    {
                        tokio::select! {
                            () = tokio::time::sleep(pace) => {}
                            () = cancel.cancelled() => {}
                        }
                    }
                    event
                }
            })
            .boxed()
    }
}

/// Whether the request offers the model `tool`.
fn offered(request: &LlmRequest, tool: &str) -> bool {
    request.tools.iter().any(|t| t.name == tool)
}

/// Keeps a quoted tool output from closing the fence it is shown in.
fn fence_safe(output: &str) -> String {
    let trimmed = output.trim_end();
    if trimmed.is_empty() {
        "(no output)".into()
    } else {
        trimmed.replace("```", "ʼʼʼ")
    }
}

fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(CHUNK_CHARS)
        .map(|c| c.iter().collect())
        .collect()
}

impl Provider for DemoProvider {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        self.respond(&request, Role::Main, cancel)
    }

    /// The call is made for `origin`: the request tap names the agent, which tells a
    /// subagent's task from the main agent's chat.
    fn stream_for(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
        origin: &CallOrigin,
    ) -> LlmStream {
        self.respond(&request, Role::of(origin), cancel)
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelListError>> {
        Box::pin(async { Ok(vec![DEMO_MODEL.to_owned()]) })
    }
}
