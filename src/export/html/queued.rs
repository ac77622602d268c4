//! Which user messages were steers and which follow-ups. A delivered steer or follow-up
//! is an ordinary user message in the history, and [`SessionData`] keeps only the
//! queues' last state; the session file's `queue` lines tell it: each lists the texts
//! pending at that moment, so a user message that was listed there before it entered
//! the conversation was queued, as that queue's kind.

use crate::agent::{Message, QueueKind};
use crate::session::SessionData;
use serde::Deserialize;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};

/// The parts of a session line this reads; everything else (a message's body above
/// all) is skipped by the parser without being kept.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    timestamp: u64,
    #[serde(default)]
    steering: Vec<String>,
    #[serde(default)]
    follow_up: Vec<String>,
    /// A `rewind` line's count of the messages that remain.
    #[serde(default)]
    messages: usize,
    /// A `message` line's message: parsed, so that a line the loader skips as damaged
    /// (it does not parse) is skipped here too and the count stays in step.
    #[serde(default)]
    message: Option<Message>,
}

/// A text that appeared in a queue: its kind, and when the queue listed it.
struct Queued {
    kind: QueueKind,
    text: String,
    listed: u64,
}

/// The queue each queued user message of `data` came from, by its index in
/// `data.messages`; empty when the file cannot be read (the export then marks none).
pub(super) fn queue_kinds(data: &SessionData) -> HashMap<usize, QueueKind> {
    let mut kinds = HashMap::new();
    let Ok(file) = File::open(&data.path) else {
        return kinds;
    };
    let mut reader = BufReader::new(file);
    let mut bytes = Vec::new();
    // The queues as the last `queue` line left them, and the texts seen arriving in
    // them that no message has taken yet.
    let mut pending: Vec<(QueueKind, String)> = Vec::new();
    let mut arrived: Vec<Queued> = Vec::new();
    // Where the next message line lands in `data.messages`, counted as the loader
    // counts (a rewind takes messages back).
    let mut next = 0usize;
    loop {
        bytes.clear();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // A damaged line is skipped, as the loader skips it.
        let Ok(line) = serde_json::from_slice::<Line>(bytes.trim_ascii()) else {
            continue;
        };
        match line.kind.as_str() {
            "queue" => {
                let now: Vec<(QueueKind, String)> = (line.steering.into_iter())
                    .map(|t| (QueueKind::Steering, t))
                    .chain(line.follow_up.into_iter().map(|t| (QueueKind::FollowUp, t)))
                    .collect();
                // Each snapshot lists the whole queue: what it has more than the one
                // before arrived now.
                let mut before = std::mem::take(&mut pending);
                for (kind, text) in &now {
                    match before.iter().position(|(k, t)| k == kind && t == text) {
                        Some(i) => {
                            before.swap_remove(i);
                        }
                        None => arrived.push(Queued {
                            kind: *kind,
                            text: text.clone(),
                            listed: line.timestamp,
                        }),
                    }
                }
                pending = now;
            }
            "message" if line.message.is_some() => {
                if let Some(Message::User(user)) = data.messages.get(next)
                    // A message is made when it is typed, before its queue lists it; one
                    // made later (the same words sent again as a prompt) was not queued.
                    && let Some(i) = arrived
                        .iter()
                        .position(|q| q.text == user.content && user.timestamp <= q.listed)
                {
                    kinds.insert(next, arrived.remove(i).kind);
                }
                next += 1;
            }
            "rewind" => next = line.messages,
            _ => {}
        }
    }
    kinds
}
