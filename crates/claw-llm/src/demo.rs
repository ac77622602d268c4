//! The offline demo model: deterministic, needs no network, and drives the real tools.
//!
//! It answers a few phrases ("list files", "read PATH", "run COMMAND", "spawn TASK",
//! "message TEXT", "every N seconds MESSAGE") with a tool call, quotes the tool's result on the next
//! turn, and answers anything else with help on how to use it and how to configure a
//! real provider. Its texts live in `assets/demo.toml`.

use super::{LlmEvent, LlmMessage, LlmRequest, LlmStream, Provider};
use crate::{ModelListError, SetupError};
use claw_agent::convert::NOTIFICATION_PREFIX;
use claw_agent::event::MessageDelta;
use claw_agent::types::{AssistantMessage, Block, StopReason, Usage};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const SCRIPT: &str = include_str!("../../../assets/demo.toml");

/// Characters per streamed chunk: about one token.
const CHUNK_CHARS: usize = 4;

#[derive(Clone, Debug, Deserialize)]
struct Script {
    help: String,
    calling: String,
    result: String,
    failed: String,
    missing_tool: String,
    notification: String,
}

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

    /// What the model says and which tool it calls for this request.
    fn answer(&self, request: &LlmRequest) -> (String, Option<(String, Value)>) {
        match request.messages.last() {
            Some(LlmMessage::ToolResult(result)) => {
                let template = if result.is_error {
                    &self.script.failed
                } else {
                    &self.script.result
                };
                let text = template
                    .replace("{tool}", &result.tool_name)
                    .replace("{output}", &fence_safe(&result.content));
                (text, None)
            }
            Some(LlmMessage::User(user)) if user.content.starts_with(NOTIFICATION_PREFIX) => {
                let text = self.script.notification.replace(
                    "{output}",
                    &fence_safe(user.content[NOTIFICATION_PREFIX.len()..].trim()),
                );
                (text, None)
            }
            Some(LlmMessage::User(user)) => match parse_request(&user.content) {
                Some((tool, args)) if request.tools.iter().any(|t| t.name == tool) => (
                    self.script.calling.replace("{tool}", &tool),
                    Some((tool, args)),
                ),
                Some((tool, _)) => (self.script.missing_tool.replace("{tool}", &tool), None),
                None => (self.help(), None),
            },
            _ => (self.help(), None),
        }
    }

    fn help(&self) -> String {
        self.script.help.replace("{config_path}", &self.config_path)
    }
}

/// Matches the demo phrases to a tool call.
fn parse_request(text: &str) -> Option<(String, Value)> {
    let text = text.trim();
    let lower = text.to_lowercase();
    let rest = |prefix: &str| {
        lower
            .starts_with(prefix)
            .then(|| text[prefix.len()..].trim().to_owned())
            .filter(|r| !r.is_empty())
    };
    if let Some(path) = rest("read ") {
        return Some(("read_file".into(), json!({"path": path})));
    }
    if let Some(command) = rest("run ") {
        return Some(("exec".into(), json!({"command": command})));
    }
    if let Some(task) = rest("spawn ") {
        return Some(("spawn".into(), json!({"task": task})));
    }
    if let Some(content) = rest("message ") {
        return Some(("message".into(), json!({"content": content})));
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if let [every, n, unit, message @ ..] = words.as_slice()
        && every.eq_ignore_ascii_case("every")
        && unit.to_lowercase().starts_with("second")
        && !message.is_empty()
        && let Ok(seconds) = n.parse::<u64>()
    {
        return Some((
            "cron".into(),
            json!({"action": "add", "every_seconds": seconds, "message": message.join(" ")}),
        ));
    }
    if lower.contains("list files") || lower == "ls" {
        return Some(("list_dir".into(), json!({"path": "."})));
    }
    None
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
        let (text, call) = self.answer(&request);
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

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelListError>> {
        Box::pin(async { Ok(vec![DEMO_MODEL.to_owned()]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_map_to_tool_calls() {
        assert_eq!(
            parse_request("list files").map(|c| c.0),
            Some("list_dir".into())
        );
        assert_eq!(
            parse_request("read src/main.rs"),
            Some(("read_file".into(), json!({"path": "src/main.rs"})))
        );
        assert_eq!(
            parse_request("Run echo hi && ls"),
            Some(("exec".into(), json!({"command": "echo hi && ls"})))
        );
        assert_eq!(
            parse_request("every 30 seconds check the build"),
            Some((
                "cron".into(),
                json!({"action": "add", "every_seconds": 30, "message": "check the build"})
            ))
        );
        assert_eq!(
            parse_request("spawn count the lines").map(|c| c.0),
            Some("spawn".into())
        );
        assert_eq!(
            parse_request("Message the build is green"),
            Some(("message".into(), json!({"content": "the build is green"})))
        );
        assert_eq!(parse_request("what can you do?"), None);
        assert_eq!(parse_request("read "), None);
    }

    #[test]
    fn the_script_parses_and_its_help_has_a_code_block() {
        let demo = DemoProvider::new(Duration::ZERO, "/x/config.toml").unwrap();
        let help = demo.help();
        assert!(help.contains("```sh") && help.contains("/x/config.toml"));
    }
}
