//! Each message once in the event log: a `message_end`, `turn_end` or `agent_end` whose
//! messages were all logged already in the same run (by `message_start` or
//! `message_end` lines) refers to those lines instead of repeating the messages. A long
//! answer was written four times (as deltas, and whole in `message_end`, `turn_end` and
//! `agent_end`), a tool's result five (its `tool_execution_end`, then `message_start`,
//! `message_end`, `turn_end`, `agent_end`).
//!
//! Such an event is the line `{"us":T,"agent_refs":R}`, where `R` is the event's JSON
//! with every message replaced by `[k,us]`: the `k`-th message line (`message_start` or
//! `message_end`) of the segment, from 0, written at `us`. The reader ([`expand`]) puts
//! the messages back and gets the text the event had in `--mode json`, byte for byte; a
//! reference that does not name a message line of its segment at that time (a line
//! lost in a write failure) makes the line unreadable, never a line with the wrong
//! message.

use crate::agent::{AgentEvent, Message};
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// The line key of an event written with references.
pub const REFS_KEY: &str = "agent_refs";

/// How the JSON texts of the events that carry one message begin; the message follows.
const MESSAGE_PREFIXES: [&str; 2] = [
    r#"{"type":"message_start","message":"#,
    r#"{"type":"message_end","message":"#,
];

/// The message of a `message_start` or `message_end` event's JSON text (`None`:
/// another event).
pub fn message_of(event_json: &str) -> Option<&str> {
    MESSAGE_PREFIXES
        .iter()
        .find_map(|prefix| event_json.strip_prefix(prefix))?
        .strip_suffix('}')
}

/// The hash a message's JSON text is known by.
pub(super) fn digest(message_json: &str) -> [u8; 32] {
    Sha256::digest(message_json.as_bytes()).into()
}

/// A message line of the segment: its place among them, its time, and the hash of its
/// message's text (held instead of the text: a run's answers may be long).
struct Ended {
    ordinal: usize,
    us: u64,
    digest: [u8; 32],
}

/// What the writer remembers to refer to messages: the message lines of the run in
/// progress.
#[derive(Default)]
pub(super) struct EndedMessages {
    /// Message lines written in this segment.
    count: usize,
    /// Those of the run in progress.
    run: Vec<Ended>,
}

impl EndedMessages {
    /// A segment begins: its message lines are counted from 0.
    pub(super) fn segment_started(&mut self) {
        self.count = 0;
        self.run.clear();
    }

    /// A message line was written at `us` (whole or with a reference), its message's
    /// text known by `digest`.
    pub(super) fn logged(&mut self, us: u64, digest: [u8; 32]) {
        self.run.push(Ended {
            ordinal: self.count,
            us,
            digest,
        });
        self.count += 1;
    }

    /// The run ended: its messages are referred to no more.
    pub(super) fn run_ended(&mut self) {
        self.run.clear();
    }

    /// The event's text with its messages as references, when it is a `message_end`,
    /// `turn_end` or `agent_end` whose every message was logged in this run; else
    /// `None` (the event is logged whole). A `message_end`'s comes with its message's
    /// digest.
    pub(super) fn refs_json(&self, event: &AgentEvent) -> Option<(String, Option<[u8; 32]>)> {
        let mut json = String::new();
        match event {
            AgentEvent::MessageEnd { message } => {
                let (reference, digest) = self.find(message)?;
                json.push_str(r#"{"type":"message_end","message":"#);
                json.push_str(&reference);
                json.push('}');
                return Some((json, Some(digest)));
            }
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
        Some((json, None))
    }

    /// `[k,us]` of the latest message line of this run with `message`'s text.
    fn reference(&self, message: &Message) -> Option<String> {
        self.find(message).map(|(reference, _)| reference)
    }

    /// `[k,us]` of the latest message line of this run with `message`'s text, and the
    /// text's digest.
    fn find(&self, message: &Message) -> Option<(String, [u8; 32])> {
        if self.run.is_empty() {
            return None;
        }
        let mut hasher = Sha256::new();
        serde_json::to_writer(&mut hasher, message).ok()?;
        let digest: [u8; 32] = hasher.finalize().into();
        let ended = self.run.iter().rev().find(|e| e.digest == digest)?;
        Some((format!("[{},{}]", ended.ordinal, ended.us), digest))
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
/// `message(k, us)` gives the message of the `k`-th message line of the segment when it
/// was written at `us`. `None` when a reference names no such line.
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
        "message_end" => Some(format!(
            r#"{{"type":"message_end","message":{}}}"#,
            one(refs.message?)?
        )),
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

    /// The log's message lines (`message_end`s), as the reader finds them: (time,
    /// event text).
    fn log_ends(ended: &mut EndedMessages, messages: &[(u64, &Message)]) -> Vec<(u64, String)> {
        messages
            .iter()
            .map(|&(us, message)| {
                let json = event_json(&AgentEvent::MessageEnd {
                    message: message.clone(),
                })
                .unwrap();
                ended.logged(us, digest(message_of(&json).unwrap()));
                (us, json)
            })
            .collect()
    }

    fn lookup<'a>(lines: &'a [(u64, String)]) -> impl Fn(usize, u64) -> Option<&'a str> {
        move |k, us| {
            let (at, json) = lines.get(k)?;
            (*at == us).then(|| message_of(json)).flatten()
        }
    }

    #[test]
    fn a_message_end_like_its_start_refers_to_it() {
        let result = result();
        let start = event_json(&AgentEvent::MessageStart {
            message: result.clone(),
        })
        .unwrap();
        let mut ended = EndedMessages::default();
        ended.logged(5, digest(message_of(&start).unwrap()));
        let end = AgentEvent::MessageEnd { message: result };
        let (refs, digest_of_end) = ended.refs_json(&end).unwrap();
        assert_eq!(refs, r#"{"type":"message_end","message":[0,5]}"#);
        assert_eq!(digest_of_end, Some(digest(message_of(&start).unwrap())));
        let lines = [(5, start)];
        assert_eq!(
            expand(&refs, lookup(&lines)).as_deref(),
            Some(event_json(&end).unwrap().as_str())
        );
        // An answer ends unlike its (empty) start: written whole.
        let mut empty = AssistantMessage::empty("m");
        empty.stop_reason = StopReason::Stop;
        ended.logged(
            6,
            digest(&serde_json::to_string(&Message::Assistant(empty)).unwrap()),
        );
        assert_eq!(
            ended.refs_json(&AgentEvent::MessageEnd {
                message: answer("a")
            }),
            None
        );
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
            let (refs, _) = ended.refs_json(&event).expect("every message was logged");
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
        let (refs, _) = ended
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
