//! Each message once in the event log: a `turn_end` or `agent_end` whose messages were
//! all logged by `message_end` lines of the same run refers to those lines instead of
//! repeating the messages (a long answer was written four times: as deltas, and whole
//! in `message_end`, `turn_end` and `agent_end`).
//!
//! Such an event is the line `{"us":T,"agent_refs":R}`, where `R` is the event's JSON
//! with every message replaced by `[k,us]`: the `k`-th `message_end` line of the
//! segment (from 0), written at `us`. The reader ([`expand`]) puts the messages back and
//! gets the text the event had in `--mode json`, byte for byte; a reference that does
//! not name a `message_end` of its segment at that time (a line lost in a write failure)
//! makes the line unreadable, never a line with the wrong message.

use crate::agent::{AgentEvent, Message};
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// The line key of an event written with references.
pub const REFS_KEY: &str = "agent_refs";

/// How a `message_end` event's JSON text begins; its message follows.
const MESSAGE_END_PREFIX: &str = r#"{"type":"message_end","message":"#;

/// The message of a `message_end` event's JSON text (`None`: another event).
pub fn message_of_end(event_json: &str) -> Option<&str> {
    event_json
        .strip_prefix(MESSAGE_END_PREFIX)?
        .strip_suffix('}')
}

/// A `message_end` line of the segment: its place among them, its time, and the hash
/// of its message's text (held instead of the text: a run's answers may be long).
struct Ended {
    ordinal: usize,
    us: u64,
    digest: [u8; 32],
}

/// What the writer remembers to refer to messages: the `message_end` lines of the run
/// in progress.
#[derive(Default)]
pub(super) struct EndedMessages {
    /// `message_end` lines written in this segment.
    count: usize,
    /// Those of the run in progress.
    run: Vec<Ended>,
}

impl EndedMessages {
    /// A segment begins: its `message_end` lines are counted from 0.
    pub(super) fn segment_started(&mut self) {
        self.count = 0;
        self.run.clear();
    }

    /// A `message_end` line was written at `us`, with `event_json` its event's text.
    pub(super) fn logged(&mut self, us: u64, event_json: &str) {
        let Some(message) = message_of_end(event_json) else {
            return;
        };
        self.run.push(Ended {
            ordinal: self.count,
            us,
            digest: Sha256::digest(message.as_bytes()).into(),
        });
        self.count += 1;
    }

    /// The run ended: its messages are referred to no more.
    pub(super) fn run_ended(&mut self) {
        self.run.clear();
    }

    /// The event's text with its messages as references, when it is a `turn_end` or
    /// `agent_end` whose every message was logged in this run; else `None` (the event
    /// is logged whole).
    pub(super) fn refs_json(&self, event: &AgentEvent) -> Option<String> {
        let mut json = String::new();
        match event {
            AgentEvent::TurnEnd {
                message,
                tool_results,
                context_usage,
            } => {
                json.push_str(r#"{"type":"turn_end","message":"#);
                json.push_str(&self.reference(message)?);
                json.push_str(r#","tool_results":"#);
                json.push_str(&self.references(tool_results)?);
                json.push_str(r#","context_usage":"#);
                json.push_str(&serde_json::to_string(context_usage).ok()?);
                json.push('}');
            }
            AgentEvent::AgentEnd { messages } => {
                json.push_str(r#"{"type":"agent_end","messages":"#);
                json.push_str(&self.references(messages)?);
                json.push('}');
            }
            _ => return None,
        }
        Some(json)
    }

    /// `[k,us]` of the latest `message_end` of this run with `message`'s text.
    fn reference(&self, message: &Message) -> Option<String> {
        let mut hasher = Sha256::new();
        serde_json::to_writer(&mut hasher, message).ok()?;
        let digest: [u8; 32] = hasher.finalize().into();
        let ended = self.run.iter().rev().find(|e| e.digest == digest)?;
        Some(format!("[{},{}]", ended.ordinal, ended.us))
    }

    fn references(&self, messages: &[Message]) -> Option<String> {
        let refs: Option<Vec<String>> = messages.iter().map(|m| self.reference(m)).collect();
        Some(format!("[{}]", refs?.join(",")))
    }
}

/// A reference as written: `[k,us]`.
type Ref = (usize, u64);

/// The parts of a line written with references.
#[derive(Deserialize)]
struct Refs<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    message: Option<Ref>,
    tool_results: Option<Vec<Ref>>,
    messages: Option<Vec<Ref>>,
    #[serde(borrow)]
    context_usage: Option<&'a RawValue>,
}

/// The event's JSON text (as `--mode json` printed it) of the references `refs_json`;
/// `message(k, us)` gives the message of the `k`-th `message_end` line of the segment
/// when it was written at `us`. `None` when a reference names no such line.
pub fn expand<'m>(
    refs_json: &str,
    message: impl Fn(usize, u64) -> Option<&'m str>,
) -> Option<String> {
    let refs: Refs<'_> = serde_json::from_str(refs_json).ok()?;
    let one = |(k, us): Ref| message(k, us);
    let list = |refs: &[Ref]| -> Option<String> {
        let texts: Option<Vec<&str>> = refs.iter().map(|&r| one(r)).collect();
        Some(format!("[{}]", texts?.join(",")))
    };
    match refs.kind {
        "turn_end" => Some(format!(
            r#"{{"type":"turn_end","message":{},"tool_results":{},"context_usage":{}}}"#,
            one(refs.message?)?,
            list(&refs.tool_results?)?,
            refs.context_usage?.get(),
        )),
        "agent_end" => Some(format!(
            r#"{{"type":"agent_end","messages":{}}}"#,
            list(&refs.messages?)?
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AssistantMessage, Block, ContextUsage, StopReason, ToolResultMessage};
    use crate::session::events::event_json;

    fn answer(text: &str) -> Message {
        let mut message = AssistantMessage::empty("m");
        message.stop_reason = StopReason::ToolUse;
        message.content.push(Block::Text { text: text.into() });
        message.content.push(Block::ToolCall {
            id: "c1".into(),
            name: "read".into(),
            // A call's arguments that look like a reference stay what they are.
            args: serde_json::json!({"$ref": [0, 1], "path": "a \"quoted\" name"}),
        });
        Message::Assistant(message)
    }

    fn result() -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: "line\n".repeat(50),
            images: Vec::new(),
            details: serde_json::json!({"lines": 50}),
            is_error: false,
            timestamp: 7,
        })
    }

    /// The log's `message_end` texts, as the reader finds them: (time, event text).
    fn log_ends(ended: &mut EndedMessages, messages: &[(u64, &Message)]) -> Vec<(u64, String)> {
        messages
            .iter()
            .map(|&(us, message)| {
                let json = event_json(&AgentEvent::MessageEnd {
                    message: message.clone(),
                })
                .unwrap();
                ended.logged(us, &json);
                (us, json)
            })
            .collect()
    }

    fn lookup<'a>(lines: &'a [(u64, String)]) -> impl Fn(usize, u64) -> Option<&'a str> {
        move |k, us| {
            let (at, json) = lines.get(k)?;
            (*at == us).then(|| message_of_end(json)).flatten()
        }
    }

    #[test]
    fn turn_and_agent_ends_read_back_as_the_json_mode_printed_them() {
        let prompt = Message::user("read a");
        let (answer, result) = (answer("I will **read** it."), result());
        let mut ended = EndedMessages::default();
        ended.segment_started();
        let lines = log_ends(&mut ended, &[(10, &prompt), (20, &answer), (30, &result)]);
        let turn_end = AgentEvent::TurnEnd {
            message: answer.clone(),
            tool_results: vec![result.clone()],
            context_usage: ContextUsage::default(),
        };
        let agent_end = AgentEvent::AgentEnd {
            messages: vec![prompt, answer, result],
        };
        for event in [turn_end, agent_end] {
            let refs = ended.refs_json(&event).expect("every message was logged");
            assert!(refs.len() < 200, "{refs}");
            assert_eq!(
                expand(&refs, lookup(&lines)).as_deref(),
                Some(event_json(&event).unwrap().as_str())
            );
        }
    }

    #[test]
    fn an_event_with_a_message_not_logged_in_this_run_is_written_whole() {
        let mut ended = EndedMessages::default();
        log_ends(&mut ended, &[(10, &answer("a"))]);
        let other = AgentEvent::AgentEnd {
            messages: vec![answer("a"), answer("b")],
        };
        assert_eq!(ended.refs_json(&other), None);
        // A new run refers to nothing of the last one.
        ended.run_ended();
        let same = AgentEvent::AgentEnd {
            messages: vec![answer("a")],
        };
        assert_eq!(ended.refs_json(&same), None);
        // Other events are never written with references.
        assert_eq!(ended.refs_json(&AgentEvent::AgentStart), None);
    }

    #[test]
    fn a_reference_to_a_line_that_is_not_there_reads_as_nothing() {
        let mut ended = EndedMessages::default();
        let message = answer("a");
        let lines = log_ends(&mut ended, &[(10, &message)]);
        let refs = ended
            .refs_json(&AgentEvent::AgentEnd {
                messages: vec![message],
            })
            .unwrap();
        // The line it names was lost, and another took its place, at another time.
        let moved = vec![(11, lines[0].1.clone())];
        assert_eq!(expand(&refs, lookup(&moved)), None);
        assert_eq!(expand(&refs, lookup(&[])), None);
        assert_eq!(expand("{\"type\":\"agent_end\"}", lookup(&lines)), None);
        assert_eq!(expand("not json", lookup(&lines)), None);
    }
}
