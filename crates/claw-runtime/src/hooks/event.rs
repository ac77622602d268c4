//! What hooks are run for and what they may answer, as types: [`HookEvent`] (one
//! payload per event, serialised as the hook's stdin), [`HookAnswer`] (the JSON a hook
//! may print, read once), and [`Hooks::run_all`], the one loop that runs an event's
//! hooks in order and deals alike, for every event, with a hook that failed or gave an
//! answer that cannot be followed.

use super::config::HookCommand;
use super::run::Outcome;
use super::{Hooks, Inner};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::ops::ControlFlow;
use tokio_util::sync::CancellationToken;

/// A tool call as its hooks are told about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallFields {
    /// The tool's name.
    pub tool_name: String,
    /// The call's id.
    pub tool_call_id: String,
    /// Who calls: `"main"`, or the subagent (`{"id", "label", "task"}`).
    pub agent: Value,
}

/// What a tool call returned, as `after_tool` hooks see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeenResult {
    /// The text the model gets.
    pub content: String,
    /// Whether it is an error.
    pub is_error: bool,
}

/// What a hook runs for, with that event's own fields (`event` names it on stdin).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HookEvent {
    /// A prompt the user sends, before it goes out.
    Prompt {
        /// The text as the user wrote it.
        prompt: String,
    },
    /// A tool call, before it runs (with the arguments the previous hook left).
    BeforeTool {
        /// The call.
        #[serde(flatten)]
        call: CallFields,
        /// Its arguments.
        args: Value,
    },
    /// A tool call that ran.
    AfterTool {
        /// The call.
        #[serde(flatten)]
        call: CallFields,
        /// The arguments it ran with.
        args: Value,
        /// What it returned (as the previous hook left it).
        result: SeenResult,
    },
    /// The main agent went idle after answering.
    Stop {
        /// Its last answer's text.
        last_answer: String,
    },
    /// Something waits for the user.
    Notify {
        /// `approval`, `subagent` or `cron`.
        kind: String,
        /// What it is, for a person.
        message: String,
        /// The kind's own fields.
        #[serde(flatten)]
        more: Map<String, Value>,
    },
}

impl HookEvent {
    /// The event's name, as the config and the warnings say it.
    pub fn name(&self) -> &'static str {
        match self {
            HookEvent::Prompt { .. } => "prompt",
            HookEvent::BeforeTool { .. } => "before_tool",
            HookEvent::AfterTool { .. } => "after_tool",
            HookEvent::Stop { .. } => "stop",
            HookEvent::Notify { .. } => "notify",
        }
    }
}

/// A hook's stdin: the event and where it happens.
#[derive(Serialize)]
struct HookInput<'a> {
    #[serde(flatten)]
    event: &'a HookEvent,
    session_id: String,
    workspace: String,
}

/// What a hook decided, when it printed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Do not go on (the prompt is not sent, the call does not run, the result is
    /// withheld).
    Block,
    /// Go on.
    Allow,
}

/// The JSON object a hook may print on stdout; every field may be left out.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct HookAnswer {
    /// Block or allow.
    pub decision: Option<Decision>,
    /// Why it blocks.
    pub reason: Option<String>,
    /// Text added to a prompt (`prompt` hooks).
    pub context: Option<String>,
    /// New arguments for the call (`before_tool` hooks).
    pub args: Option<Value>,
    /// New content of the result (`after_tool` hooks).
    pub result: Option<String>,
    /// Whether the new result is an error (`after_tool` hooks).
    pub is_error: Option<bool>,
}

/// Why a hook's JSON answer cannot be followed (the user is warned; the hook is ignored).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AnswerError {
    /// `decision` is something other than `"block"` or `"allow"`.
    #[error("its decision {decision} is neither \"block\" nor \"allow\"")]
    UnknownDecision {
        /// The value as the hook wrote it.
        decision: Value,
    },
    /// A field has the wrong type.
    #[error("its \"{key}\" is {value}, not {expected}")]
    WrongType {
        /// The field.
        key: String,
        /// The value as the hook wrote it.
        value: Value,
        /// What it must be.
        expected: &'static str,
    },
}

impl HookAnswer {
    /// Reads a hook's answer; a decision it does not know or a field of the wrong type is
    /// an error, so a typo such as `deny` is a warning the user sees rather than a silent
    /// go-ahead.
    pub fn read(answer: Map<String, Value>) -> Result<Self, AnswerError> {
        let value = Value::Object(answer);
        serde_path_to_error::deserialize::<_, HookAnswer>(&value).map_err(|e| {
            let key = e.path().to_string();
            let found = value.get(&key).cloned().unwrap_or(Value::Null);
            match key.as_str() {
                "decision" => AnswerError::UnknownDecision { decision: found },
                "is_error" => AnswerError::WrongType {
                    key,
                    value: found,
                    expected: "true or false",
                },
                "args" => AnswerError::WrongType {
                    key,
                    value: found,
                    expected: "a JSON value",
                },
                _ => AnswerError::WrongType {
                    key,
                    value: found,
                    expected: "a string",
                },
            }
        })
    }

    /// The reason to block, when the answer blocks (a default naming `command` when it
    /// gave none).
    pub fn blocks(&self, command: &str) -> Option<String> {
        (self.decision == Some(Decision::Block))
            .then(|| super::run::block_reason(self.reason.as_deref().unwrap_or_default(), command))
    }
}

/// What one hook said, read: what every event's hooks can answer.
pub(super) enum Reply {
    /// Go on.
    Continue,
    /// Exit 2: block, for this reason (its stderr or a default naming it).
    Block(String),
    /// A JSON answer.
    Answer(HookAnswer),
    /// The caller was cancelled while it ran.
    Cancelled,
    /// It was not run: a file its command names is not trusted (why).
    Untrusted(String),
}

impl Hooks {
    /// Runs `hooks` for the event `make` builds from `state` (each hook sees what the
    /// one before it left), one after another, until `fold` breaks. A hook that failed
    /// or printed an answer that cannot be followed is warned about here, for every
    /// event alike, and the next one runs; `fold` decides what every other reply means
    /// for this event.
    pub(super) async fn run_all<S, B>(
        &self,
        inner: &Inner,
        hooks: &[&(dyn HookCommand + Sync)],
        state: &mut S,
        make: impl Fn(&S) -> HookEvent,
        cancel: &CancellationToken,
        mut fold: impl FnMut(&mut S, &str, Reply) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        for hook in hooks {
            let event = make(state);
            let input = self.input(inner, &event);
            let command = hook.command();
            let reply = match inner.runner.run(*hook, &input, cancel).await {
                Outcome::Continue => Reply::Continue,
                Outcome::Cancelled => Reply::Cancelled,
                Outcome::Block(reason) => Reply::Block(super::run::block_reason(&reason, command)),
                Outcome::Untrusted(why) => Reply::Untrusted(why),
                Outcome::Json(answer) => match HookAnswer::read(answer) {
                    Ok(answer) => Reply::Answer(answer),
                    Err(why) => {
                        self.warn(inner, event.name(), command, &why.to_string(), "");
                        continue;
                    }
                },
                Outcome::Failed { why, stderr } => {
                    self.warn(inner, event.name(), command, &why, &stderr);
                    continue;
                }
            };
            fold(state, command, reply)?;
        }
        ControlFlow::Continue(())
    }

    /// The stdin of a hook run for `event`.
    fn input(&self, inner: &Inner, event: &HookEvent) -> Value {
        let input = HookInput {
            event,
            session_id: super::lock(&inner.session_id).clone(),
            workspace: inner.runner.workspace.display().to_string(),
        };
        // Serialising plain strings and JSON values cannot fail; an empty object would
        // only reach a hook if it did.
        serde_json::to_value(input).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Result<HookAnswer, AnswerError> {
        match value {
            Value::Object(map) => HookAnswer::read(map),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn an_unknown_decision_is_an_error_naming_it() {
        let error = read(json!({"decision": "deny"})).unwrap_err();
        assert_eq!(
            error,
            AnswerError::UnknownDecision {
                decision: json!("deny")
            }
        );
        assert_eq!(
            error.to_string(),
            r#"its decision "deny" is neither "block" nor "allow""#
        );
        let allow = read(json!({"decision": "allow"})).unwrap();
        assert_eq!(allow.blocks("h"), None);
        let block = read(json!({"decision": "block"})).unwrap();
        assert_eq!(block.blocks("h").as_deref(), Some("the hook `h` said no"));
    }

    #[test]
    fn a_field_of_the_wrong_type_is_an_error_naming_it() {
        let answer = read(json!({"result": "ok", "extra": 1})).unwrap();
        assert_eq!(answer.result.as_deref(), Some("ok"));
        assert_eq!(answer.context, None);
        let error = read(json!({"context": ["a"], "result": "ok"})).unwrap_err();
        assert_eq!(error.to_string(), r#"its "context" is ["a"], not a string"#);
        let error = read(json!({"is_error": "yes"})).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"its "is_error" is "yes", not true or false"#
        );
    }

    #[test]
    fn the_input_is_the_events_fields_beside_its_name() {
        let event = HookEvent::AfterTool {
            call: CallFields {
                tool_name: "exec".into(),
                tool_call_id: "c1".into(),
                agent: json!("main"),
            },
            args: json!({"command": "ls"}),
            result: SeenResult {
                content: "a.txt".into(),
                is_error: false,
            },
        };
        let input = serde_json::to_value(HookInput {
            event: &event,
            session_id: "s".into(),
            workspace: "/w".into(),
        })
        .unwrap();
        assert_eq!(
            input,
            json!({
                "event": "after_tool", "session_id": "s", "workspace": "/w",
                "tool_name": "exec", "tool_call_id": "c1", "agent": "main",
                "args": {"command": "ls"},
                "result": {"content": "a.txt", "is_error": false},
            })
        );
        assert_eq!(event.name(), "after_tool");
    }
}
