//! The agent's history: a frozen, shared prefix (the messages it was given, e.g. a
//! resumed session) and the messages added since.
//!
//! The client shows a resumed session from the very messages the agent holds, so a
//! long history is in memory once. That sharing must survive the agent's next message:
//! with one `Arc<Vec<Message>>`, the first push while the chat holds it would copy the
//! whole history. The prefix is therefore an `Arc<[Message]>` nobody ever writes to,
//! and new messages go to a tail of their own.

use super::types::Message;
use serde::ser::{Serialize, SerializeSeq, Serializer};
use std::sync::Arc;

/// The agent's messages, oldest first: a shared prefix that never changes, then the
/// messages added since.
#[derive(Clone, Debug, Default)]
pub struct History {
    frozen: Arc<[Message]>,
    tail: Vec<Message>,
}

impl History {
    /// A history of `frozen` alone (shared with whoever else holds it).
    pub fn shared(frozen: Arc<[Message]>) -> Self {
        Self {
            frozen,
            tail: Vec::new(),
        }
    }

    /// A history of `messages` that nobody shares (taken as they are: no copy, not even
    /// of the list), e.g. a view built for one request.
    pub fn unshared(messages: Vec<Message>) -> Self {
        Self {
            frozen: Arc::new([]),
            tail: messages,
        }
    }

    /// The prefix the history was given, shared (a resumed session's messages).
    pub fn frozen(&self) -> &Arc<[Message]> {
        &self.frozen
    }

    /// Adds a message at the end (the prefix is not touched).
    pub fn push(&mut self, message: Message) {
        self.tail.push(message);
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.frozen.len() + self.tail.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.frozen.is_empty() && self.tail.is_empty()
    }

    /// Message `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&Message> {
        match index.checked_sub(self.frozen.len()) {
            None => self.frozen.get(index),
            Some(i) => self.tail.get(i),
        }
    }

    /// The newest message.
    pub fn last(&self) -> Option<&Message> {
        self.tail.last().or_else(|| self.frozen.last())
    }

    /// The messages, oldest first.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            inner: self.frozen.iter().chain(self.tail.iter()),
        }
    }

    /// The messages from `start` on (none when `start` is past the end).
    pub fn iter_from(&self, start: usize) -> Iter<'_> {
        let frozen = self.frozen.get(start..).unwrap_or_default();
        let tail = self
            .tail
            .get(start.saturating_sub(self.frozen.len())..)
            .unwrap_or_default();
        Iter {
            inner: frozen.iter().chain(tail.iter()),
        }
    }

    /// The two parts: the shared prefix, then the messages added since.
    pub fn as_slices(&self) -> (&[Message], &[Message]) {
        (&self.frozen, &self.tail)
    }

    /// A copy of the first `end` messages (all of them when `end` is past the end).
    pub fn to_vec_until(&self, end: usize) -> Vec<Message> {
        self.iter().take(end).cloned().collect()
    }

    /// A copy of every message.
    pub fn to_vec(&self) -> Vec<Message> {
        self.iter().cloned().collect()
    }
}

impl From<Vec<Message>> for History {
    /// Freezes `messages` as the prefix (moved, not copied one by one).
    fn from(messages: Vec<Message>) -> Self {
        Self::shared(messages.into())
    }
}

impl std::ops::Index<usize> for History {
    type Output = Message;

    fn index(&self, index: usize) -> &Message {
        match index.checked_sub(self.frozen.len()) {
            None => &self.frozen[index],
            Some(i) => &self.tail[i],
        }
    }
}

/// The messages of a [`History`] in order; it knows how many are left, and runs both
/// ways (like a slice's).
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    inner: std::iter::Chain<std::slice::Iter<'a, Message>, std::slice::Iter<'a, Message>>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Message;

    fn next(&mut self) -> Option<&'a Message> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Exact: both halves are slices.
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back()
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a History {
    type Item = &'a Message;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl PartialEq for History {
    /// The same messages in the same order, wherever the prefix ends.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<[Message]> for History {
    fn eq(&self, other: &[Message]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<Message>> for History {
    fn eq(&self, other: &Vec<Message>) -> bool {
        *self == other[..]
    }
}

impl Serialize for History {
    /// As one list, like the `Vec` it stands for.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for message in self {
            seq.serialize_element(message)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(history: &History) -> Vec<String> {
        history.iter().map(Message::preview_text).collect()
    }

    #[test]
    fn pushing_leaves_the_shared_prefix_where_it_was() {
        let frozen: Arc<[Message]> = vec![Message::user("a"), Message::user("b")].into();
        let mut history = History::shared(frozen.clone());
        let mut copy = history.clone();
        copy.push(Message::user("c"));
        history.push(Message::user("d"));
        // Both still read the one prefix: nothing was copied by the pushes.
        assert!(Arc::ptr_eq(history.frozen(), &frozen));
        assert!(Arc::ptr_eq(copy.frozen(), &frozen));
        assert_eq!(texts(&history), ["a", "b", "d"]);
        assert_eq!(texts(&copy), ["a", "b", "c"]);
    }

    #[test]
    fn indexing_and_ranges_cross_the_seam() {
        let mut history = History::from(vec![Message::user("a"), Message::user("b")]);
        history.push(Message::user("c"));
        assert_eq!(history.len(), 3);
        assert_eq!(history[2].preview_text(), "c");
        assert_eq!(
            history.get(1).map(Message::preview_text).as_deref(),
            Some("b")
        );
        assert!(history.get(3).is_none());
        let from = |i| {
            history
                .iter_from(i)
                .map(Message::preview_text)
                .collect::<Vec<_>>()
        };
        assert_eq!(from(1), ["b", "c"]);
        assert_eq!(from(2), ["c"]);
        assert!(from(9).is_empty());
        assert_eq!(history.to_vec_until(2).len(), 2);
        assert_eq!(
            history.last().map(Message::preview_text).as_deref(),
            Some("c")
        );
        let all: Vec<Message> = history.to_vec();
        assert_eq!(history, all);
        assert_eq!(History::from(all.clone()), history);
        assert_eq!(History::unshared(all.clone()), history);
        assert_eq!(
            serde_json::to_value(&history).ok(),
            serde_json::to_value(&all).ok()
        );
    }
}
