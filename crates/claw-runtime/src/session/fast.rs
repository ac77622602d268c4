//! One-pass parsing of `message` lines, nearly all of a session file. Serde's internally
//! tagged enums (`Entry` by `type`, `Message` by `role`) first buffer the whole object
//! into a tree and then read it a second time; for a line the writer wrote (`type` and
//! `role` first) this parser reads the tag and hands the rest of the object straight to
//! the variant's own `Deserialize`. Anything else goes through `Entry`'s derived impl,
//! which stays the definition of the format.

use super::Entry;
use crate::agent::{
    AssistantMessage, Message, NoticeMessage, NotificationMessage, ToolResultMessage, UserMessage,
};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;

/// Parses one line of a session file (without its newline).
pub(super) fn parse_line(line: &[u8]) -> Result<Entry, serde_json::Error> {
    fast(line).or_else(|_| serde_json::from_slice(line))
}

/// Whether `line`, the last of a file and without its newline, is a whole record (the
/// process stopped between its bytes and the newline) rather than a torn fragment: a
/// prefix of a JSON object never parses, so a line that does is complete and kept.
pub(super) fn is_whole_record(line: &[u8]) -> bool {
    let text = line.trim_ascii();
    !text.is_empty() && parse_line(text).is_ok()
}

/// Parses a line's `type` only, when it is the first key; `None` otherwise.
pub(super) fn line_kind(line: &[u8]) -> Option<LineKind> {
    let mut de = serde_json::Deserializer::from_slice(line);
    de.deserialize_map(KindOnly).ok()
}

/// The kinds of line the summaries tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LineKind {
    /// A `message` line.
    Message,
    /// A `pending_notifications` line (not activity).
    PendingNotifications,
    /// A `pending_added` line (not activity).
    PendingAdded,
    /// The header.
    Header,
    /// A `queue` snapshot.
    Queue,
    /// Another kind (queue, setting, or one this build does not know).
    Other,
}

fn fast(line: &[u8]) -> Result<Entry, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let entry = de.deserialize_map(MessageLine)?;
    de.end()?;
    Ok(entry)
}

/// Not an error of the line: only a sign that the generic parser must read it.
const NOT_FAST: &str = "not in the writer's field order";

enum Field {
    Type,
    Timestamp,
    Message,
    Role,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "type" => Field::Type,
                    "timestamp" => Field::Timestamp,
                    "message" => Field::Message,
                    "role" => Field::Role,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// A tag value, compared without allocating.
struct Tag(LineKind, Option<Role>);

#[derive(Clone, Copy)]
enum Role {
    User,
    Assistant,
    ToolResult,
    Notification,
    Notice,
}

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagVisitor;
        impl Visitor<'_> for TagVisitor {
            type Value = Tag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tag string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tag, E> {
                let kind = match v {
                    "message" => LineKind::Message,
                    "pending_notifications" => LineKind::PendingNotifications,
                    "pending_added" => LineKind::PendingAdded,
                    "header" => LineKind::Header,
                    "queue" => LineKind::Queue,
                    _ => LineKind::Other,
                };
                let role = match v {
                    "user" => Some(Role::User),
                    "assistant" => Some(Role::Assistant),
                    "tool_result" => Some(Role::ToolResult),
                    "notification" => Some(Role::Notification),
                    "notice" => Some(Role::Notice),
                    _ => None,
                };
                Ok(Tag(kind, role))
            }
        }
        deserializer.deserialize_str(TagVisitor)
    }
}

struct KindOnly;

impl<'de> Visitor<'de> for KindOnly {
    type Value = LineKind;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a session line")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LineKind, A::Error> {
        match map.next_key::<Field>()? {
            Some(Field::Type) => Ok(map.next_value::<Tag>()?.0),
            // Stops at the first key: the caller abandons the rest of the line.
            _ => Err(de::Error::custom(NOT_FAST)),
        }
    }
}

struct MessageLine;

impl<'de> Visitor<'de> for MessageLine {
    type Value = Entry;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message line")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
        if !matches!(map.next_key::<Field>()?, Some(Field::Type))
            || map.next_value::<Tag>()?.0 != LineKind::Message
        {
            return Err(de::Error::custom(NOT_FAST));
        }
        let (mut timestamp, mut message) = (None, None);
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Timestamp => timestamp = Some(map.next_value::<u64>()?),
                Field::Message => message = Some(map.next_value_seed(MessageSeed)?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Entry::Message {
            timestamp: timestamp.ok_or_else(|| de::Error::missing_field("timestamp"))?,
            message: message.ok_or_else(|| de::Error::missing_field("message"))?,
        })
    }
}

struct MessageSeed;

impl<'de> DeserializeSeed<'de> for MessageSeed {
    type Value = Message;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Message, D::Error> {
        deserializer.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        if !matches!(map.next_key::<Field>()?, Some(Field::Role)) {
            return Err(de::Error::custom(NOT_FAST));
        }
        // An unknown role: the generic parser names it in its error.
        let Some(role) = map.next_value::<Tag>()?.1 else {
            return Err(de::Error::custom(NOT_FAST));
        };
        let rest = MapAccessDeserializer::new(map);
        Ok(match role {
            Role::User => Message::User(UserMessage::deserialize(rest)?),
            Role::Assistant => Message::Assistant(AssistantMessage::deserialize(rest)?),
            Role::ToolResult => Message::ToolResult(ToolResultMessage::deserialize(rest)?),
            Role::Notification => Message::Notification(NotificationMessage::deserialize(rest)?),
            Role::Notice => Message::Notice(NoticeMessage::deserialize(rest)?),
        })
    }
}
