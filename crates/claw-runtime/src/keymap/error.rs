//! Why a `[keys]` table cannot be used; each error names the entries it is about, so the
//! config reader can point at them.

use super::ACTIONS;
use super::chord::{ChordError, KeyChord};

/// A `[keys]` table entry that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    /// The entry names no action.
    #[error("[keys]: unknown action `{name}`; the actions are {}", action_names())]
    UnknownAction {
        /// The entry's name.
        name: String,
    },
    /// A list holds something other than strings.
    #[error("[keys] `{action}`: every key must be a string")]
    NotAString {
        /// The action.
        action: String,
    },
    /// The value is neither a string nor a list.
    #[error("[keys] `{action}`: give a key like \"ctrl+g\" or a list of keys")]
    NotAKey {
        /// The action.
        action: String,
    },
    /// A key's text names no key.
    #[error("[keys] `{action}`: {source}")]
    BadChord {
        /// The action.
        action: String,
        /// What is wrong with the key.
        #[source]
        source: ChordError,
    },
    /// A printable character without Ctrl or Alt: bound, it could no longer be typed.
    #[error(
        "[keys] `{action}`: \"{key}\" is a key you type text with; add a modifier \
         (e.g. \"ctrl+{key}\") or use a function key"
    )]
    TypingKey {
        /// The action.
        action: String,
        /// The key as written.
        key: String,
    },
    /// One key would trigger two actions (only the first would ever run).
    #[error(
        "[keys]: {} is bound to both `{first}` and `{second}`; give one of them another \
         key in [keys]",
        chord.label()
    )]
    Conflict {
        /// The key both have.
        chord: KeyChord,
        /// The action listed first.
        first: &'static str,
        /// The other action.
        second: &'static str,
    },
}

impl KeymapError {
    /// Whether the error is about the `[keys]` entry `name`.
    pub fn names_entry(&self, name: &str) -> bool {
        match self {
            Self::UnknownAction { name: entry }
            | Self::NotAString { action: entry }
            | Self::NotAKey { action: entry }
            | Self::BadChord { action: entry, .. }
            | Self::TypingKey { action: entry, .. } => entry == name,
            Self::Conflict { first, second, .. } => *first == name || *second == name,
        }
    }
}

/// The config names of every action, comma separated.
fn action_names() -> String {
    let names: Vec<&str> = ACTIONS.iter().map(|(_, n, _)| *n).collect();
    names.join(", ")
}
