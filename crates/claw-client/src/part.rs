//! The contract between the root (`App`) and its parts (composer, chat, tool tree,
//! dashboard, status, overlays, approvals): a part handles a key or a message and answers
//! with a [`Handled`], which says whether the key was its own, whether what it shows
//! changed, what the runtime must do and what it asks of the root.

use super::msg::Effect;
use super::overlay::kind::Overlay;
use claw_agent::NoticeLevel;
use std::path::PathBuf;
use std::time::Duration;

/// How long a status-bar hint stays, unless the part that asks for it says otherwise.
pub const HINT: Duration = Duration::from_secs(2);

/// What a part did with a key or a message.
#[must_use]
#[derive(Debug, Default)]
pub struct Handled {
    /// The key was for this part: the routing stops here.
    pub consumed: bool,
    /// What the part shows changed: a frame is due.
    pub changed: bool,
    /// What the runtime must do.
    pub effects: Vec<Effect>,
    /// What the part asks of the root, which owns the other parts.
    pub intents: Vec<Intent>,
}

impl Handled {
    /// Not this part's key: the next one in the routing order gets it.
    pub fn ignored() -> Self {
        Self::default()
    }

    /// Taken, and nothing on screen changed.
    pub fn unchanged() -> Self {
        Self {
            consumed: true,
            ..Self::default()
        }
    }

    /// Taken, and the screen changed.
    pub fn changed() -> Self {
        Self {
            consumed: true,
            changed: true,
            ..Self::default()
        }
    }

    /// Taken; the screen changed if `changed` says so.
    pub fn changed_if(changed: bool) -> Self {
        Self {
            consumed: true,
            changed,
            ..Self::default()
        }
    }

    /// The same, with an effect for the runtime.
    pub fn with(mut self, effect: Effect) -> Self {
        self.effects.push(effect);
        self
    }

    /// The same, asking the root for something.
    pub fn ask(mut self, intent: Intent) -> Self {
        self.intents.push(intent);
        self
    }

    /// Adds what another part did (its effects after ours).
    pub fn absorb(&mut self, other: Handled) {
        self.consumed |= other.consumed;
        self.changed |= other.changed;
        self.effects.extend(other.effects);
        self.intents.extend(other.intents);
    }

    /// Ours and then another part's.
    pub fn and(mut self, other: Handled) -> Self {
        self.absorb(other);
        self
    }
}

/// What a part asks of the root: the things that touch another part.
#[derive(Clone, Debug, PartialEq)]
pub enum Intent {
    /// Show a status-bar hint for this long.
    Hint(String, Duration),
    /// Open an overlay above the panes.
    Open(Overlay),
    /// Open the arguments and result of this tool call.
    OpenDetail(String),
    /// What Ctrl+C does: interrupt a run, else clear the composer; twice quits.
    Cancel,
    /// Send what the composer holds: a command, a prompt or a follow-up.
    Submit,
    /// Switch to the session in this file (`fork`: in a copy of it).
    OpenSession {
        /// The session file.
        path: PathBuf,
        /// Continue in a copy instead.
        fork: bool,
    },
    /// Say something in the chat.
    Notice(NoticeLevel, String),
    /// Show all of this call's output on its card, or only its last lines again.
    ExpandCard(String),
    /// Copy this call's whole output to the clipboard.
    CopyOutput(String),
    /// Show this subagent's conversation in the chat pane (read-only).
    OpenSubagent(String),
    /// Save the settings changed in the client into the config file (`/settings`, `s`).
    SaveSettings,
}
