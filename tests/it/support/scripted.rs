//! A provider that plays back scripted replies and records every request it gets.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{AssistantMessage, Block, MessageDelta, StopReason, Usage};
use claw_tui::llm::{LlmEvent, LlmRequest, LlmStream, Provider};
use futures::StreamExt;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// One scripted answer to one request.
pub enum Reply {
    /// These events, then the stream ends.
    Events(Vec<LlmEvent>),
    /// These events, then nothing until the request is cancelled; then an aborted message
    /// built from the text deltas sent so far.
    Hang(Vec<LlmEvent>),
    /// These events, then wait for `gate` to be notified, then the rest.
    Gated(Vec<LlmEvent>, Arc<Notify>, Vec<LlmEvent>),
}

impl Reply {
    /// A text answer streamed as one delta per chunk.
    pub fn text(chunks: &[&str]) -> Reply {
        let mut events = vec![LlmEvent::Start];
        for chunk in chunks {
            events.push(LlmEvent::Delta(MessageDelta::Text {
                index: 0,
                text: (*chunk).to_owned(),
            }));
        }
        let text: String = chunks.concat();
        events.push(LlmEvent::Done(message(
            vec![Block::Text { text }],
            StopReason::Stop,
        )));
        Reply::Events(events)
    }

    /// An answer calling tools `(id, name, args)` in order.
    pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Reply {
        let mut events = vec![LlmEvent::Start];
        let mut blocks = Vec::new();
        for (index, (id, name, args)) in calls.iter().enumerate() {
            events.push(LlmEvent::Delta(MessageDelta::ToolCallStart {
                index,
                id: (*id).to_owned(),
                name: (*name).to_owned(),
            }));
            events.push(LlmEvent::Delta(MessageDelta::ToolCallArgs {
                index,
                json: args.to_string(),
            }));
            blocks.push(Block::ToolCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                args: args.clone(),
            });
        }
        events.push(LlmEvent::Done(message(blocks, StopReason::ToolUse)));
        Reply::Events(events)
    }

    /// A failed call with `error` as its message.
    pub fn error(error: &str) -> Reply {
        let mut m = message(Vec::new(), StopReason::Error);
        m.error_message = Some(error.to_owned());
        Reply::Events(vec![LlmEvent::Start, LlmEvent::Error(m)])
    }
}

/// A final assistant message from the scripted model.
pub fn message(content: Vec<Block>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        stop_reason,
        usage: Usage {
            input: 10,
            output: 5,
            ..Usage::default()
        },
        error_message: None,
        error_kind: None,
        model: "scripted".into(),
        timestamp: 0,
    }
}

/// Plays `Reply`s in order; an unexpected extra request gets an error reply.
#[derive(Default)]
pub struct ScriptedProvider {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<LlmRequest<'static>>>,
}

impl ScriptedProvider {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Self {
            script: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// Appends replies.
    pub fn push(&self, reply: Reply) {
        self.script.lock().unwrap().push_back(reply);
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<LlmRequest<'static>> {
        self.requests.lock().unwrap().clone()
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

impl Provider for ScriptedProvider {
    fn stream(&self, request: LlmRequest, cancel: CancellationToken) -> LlmStream {
        self.requests.lock().unwrap().push(request.into_owned());
        let reply = self.script.lock().unwrap().pop_front();
        match reply {
            None => futures::stream::iter(
                Reply::error("script exhausted: unexpected request").into_events(),
            )
            .boxed(),
            Some(Reply::Events(events)) => futures::stream::iter(events).boxed(),
            Some(Reply::Hang(events)) => {
                let text: String = events
                    .iter()
                    .filter_map(|e| match e {
                        LlmEvent::Delta(MessageDelta::Text { text, .. }) => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                let tail = futures::stream::once(async move {
                    cancel.cancelled().await;
                    let mut m = message(vec![Block::Text { text }], StopReason::Aborted);
                    m.error_message = Some("aborted".into());
                    LlmEvent::Error(m)
                });
                futures::stream::iter(events).chain(tail).boxed()
            }
            Some(Reply::Gated(first, gate, rest)) => {
                let wait = futures::stream::once(async move { gate.notified().await })
                    .filter_map(|()| async { None });
                futures::stream::iter(first)
                    .chain(wait)
                    .chain(futures::stream::iter(rest))
                    .boxed()
            }
        }
    }
}

impl Reply {
    fn into_events(self) -> Vec<LlmEvent> {
        match self {
            Reply::Events(events) => events,
            Reply::Hang(events) => events,
            Reply::Gated(mut first, _, rest) => {
                first.extend(rest);
                first
            }
        }
    }
}
