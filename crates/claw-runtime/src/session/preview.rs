//! The last exchange of a session for the `/sessions` picker's preview: where its last
//! prompt and last answer are, noted while the listing glances over the lines, and then
//! those two lines read in full (the rest of a long history never is).

use super::Entry;
use super::fast::parse_line;
use crate::agent::Message;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Characters of a prompt or an answer the preview keeps.
const PREVIEW_CHARS: usize = 240;

/// Who wrote a message line, as far as the preview cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// A prompt.
    User,
    /// An answer.
    Assistant,
    /// A tool result, a notification, a notice.
    Other,
}

/// A session's last prompt and last answer, clipped to a few lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LastExchange {
    /// What the user asked last.
    pub prompt: Option<String>,
    /// The text of the last answer (empty answers, only tool calls, skipped).
    pub answer: Option<String>,
}

/// Where the last prompt and the last answer lines are: byte offset and length.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ExchangePlaces {
    prompt: Option<(u64, usize)>,
    answer: Option<(u64, usize)>,
}

impl ExchangePlaces {
    /// A message line of `role` at byte `at`, `len` bytes long.
    pub(super) fn saw(&mut self, role: Role, at: u64, len: usize) {
        match role {
            Role::User => {
                self.prompt = Some((at, len));
                // An answer before this prompt is not its answer.
                self.answer = None;
            }
            Role::Assistant => self.answer = Some((at, len)),
            Role::Other => {}
        }
    }

    /// Reads the two lines of the file at `path`.
    pub(super) fn read(&self, path: &Path) -> LastExchange {
        let Ok(mut file) = File::open(path) else {
            return LastExchange::default();
        };
        let mut text_at = |place: Option<(u64, usize)>| {
            let (at, len) = place?;
            let mut line = vec![0; len];
            file.seek(SeekFrom::Start(at)).ok()?;
            file.read_exact(&mut line).ok()?;
            let text = match parse_line(line.trim_ascii()).ok()? {
                Entry::Message {
                    message: Message::User(u),
                    ..
                } => u.content,
                Entry::Message {
                    message: Message::Assistant(a),
                    ..
                } => a.text(),
                _ => return None,
            };
            let text = text.trim();
            (!text.is_empty()).then(|| claw_text::clip(text, PREVIEW_CHARS))
        };
        LastExchange {
            prompt: text_at(self.prompt),
            answer: text_at(self.answer),
        }
    }
}
