//! Bytes typed into the terminal, decoded into key, mouse, paste and focus events.
//!
//! This decoder exists because crossterm's drops xterm's modifyOtherKeys form
//! (`CSI 27;2;13~`, the Shift+Enter of xterm and of tmux with `extended-keys on`) and
//! offers no way to add a form. It reads the same encodings crossterm does (legacy
//! control bytes, SS3 and CSI keys, the kitty protocol's `CSI … u`, SGR, X10 and urxvt
//! mouse, bracketed paste, focus) and yields crossterm's event types, so nothing above
//! the host notices the change.

use super::{csi, escape};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

pub(super) const ESC: u8 = 0x1b;

/// Where the bytes read so far stand.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// The first `usize` bytes were one event (or, with `None`, something to skip: a
    /// terminal's answer to a question, a sequence this decoder does not know).
    Took(usize, Option<Event>),
    /// The bytes start a sequence that is not complete yet.
    Wait,
}

/// Turns the terminal's input bytes into events, keeping an unfinished sequence for
/// the next read.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
    /// How much of an unfinished paste's text was searched for its end already.
    paste_searched: usize,
}

impl Decoder {
    /// Decodes `bytes` after what an earlier read left unfinished. `more` says whether
    /// more input may still come for it: without it, a lone Esc is the Esc key (and an
    /// Alt+`[`, Alt+`O` or Alt+`]` is that key), not the start of a sequence.
    pub fn feed(&mut self, bytes: &[u8], more: bool) -> Vec<Event> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut at = 0;
        while at < self.pending.len() {
            let rest = &self.pending[at..];
            if csi::starts_paste(rest) {
                match csi::paste(rest, self.paste_searched) {
                    csi::Paste::Done(n, event) => {
                        events.push(event);
                        at += n;
                        self.paste_searched = 0;
                        continue;
                    }
                    csi::Paste::Open(searched) => {
                        self.paste_searched = searched;
                        break;
                    }
                }
            }
            match step(rest, more) {
                Step::Took(n, event) => {
                    events.extend(event);
                    at += n.max(1);
                }
                Step::Wait => break,
            }
        }
        self.pending.drain(..at);
        events
    }

    /// Whether bytes are held waiting for the rest of a sequence.
    pub fn undecided(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// Decodes the event at the start of `bytes` (never empty).
pub(super) fn step(bytes: &[u8], more: bool) -> Step {
    match bytes {
        [ESC] if more => Step::Wait,
        [ESC] => key_step(1, KeyCode::Esc, KeyModifiers::NONE),
        // rxvt and PuTTY send Alt with a key that has a sequence as Esc and that
        // sequence (Alt+Up: `ESC ESC [ A`).
        [ESC, ESC, b'[' | b'O', ..] => with_alt(step(&bytes[1..], more)),
        // Two Esc presses read together are two Esc keys.
        [ESC, ESC, ..] => key_step(1, KeyCode::Esc, KeyModifiers::NONE),
        [ESC, b'[', ..] => csi::step(bytes, more),
        [ESC, b'O', ..] => escape::ss3(bytes, more),
        [ESC, b']', ..] => escape::osc(bytes, more),
        [ESC, rest @ ..] => with_alt(step(rest, more)),
        [first, ..] if *first < 0x20 || *first == 0x7f => control(*first),
        _ => utf8(bytes),
    }
}

/// The step of what follows an Esc, as one more byte, and with Alt if it is a key.
pub(super) fn with_alt(step: Step) -> Step {
    match step {
        Step::Took(n, Some(Event::Key(mut key))) => {
            key.modifiers |= KeyModifiers::ALT;
            Step::Took(n + 1, Some(Event::Key(key)))
        }
        Step::Took(n, other) => Step::Took(n + 1, other),
        Step::Wait => Step::Wait,
    }
}

/// The cursor and edit keys that CSI and SS3 sequences share a final byte for.
pub(super) fn cursor_key(last: u8) -> Option<KeyCode> {
    Some(match last {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        _ => return None,
    })
}

/// The modifiers of xterm's bit mask (the parameter minus one): Shift 1, Alt 2,
/// Ctrl 4, Super 8, Hyper 16, Meta 32.
pub(super) fn modifiers_of(mask: u32) -> KeyModifiers {
    [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ]
    .into_iter()
    .filter(|(bit, _)| mask & bit != 0)
    .fold(KeyModifiers::NONE, |all, (_, flag)| all | flag)
}

/// One key of `n` bytes.
pub(super) fn key_step(n: usize, code: KeyCode, modifiers: KeyModifiers) -> Step {
    Step::Took(n, Some(Event::Key(KeyEvent::new(code, modifiers))))
}

/// A C0 control byte or DEL. In raw mode the terminal sends `\r` for Enter; `\n` is
/// then Ctrl+J, and `0x08` Ctrl+H.
fn control(byte: u8) -> Step {
    let (code, modifiers) = match byte {
        b'\r' => (KeyCode::Enter, KeyModifiers::NONE),
        b'\t' => (KeyCode::Tab, KeyModifiers::NONE),
        0x7f => (KeyCode::Backspace, KeyModifiers::NONE),
        0 => (KeyCode::Char(' '), KeyModifiers::CONTROL),
        0x01..=0x1a => (
            KeyCode::Char((b'a' + byte - 1) as char),
            KeyModifiers::CONTROL,
        ),
        _ => (
            KeyCode::Char((b'4' + byte - 0x1c) as char),
            KeyModifiers::CONTROL,
        ),
    };
    key_step(1, code, modifiers)
}

/// One UTF-8 character; an uppercase letter carries Shift, as crossterm's do. A byte
/// that cannot start or continue a character is skipped.
fn utf8(bytes: &[u8]) -> Step {
    let len = match bytes[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Step::Took(1, None),
    };
    // A byte that cannot continue the character ends it at once, rather than holding
    // the keys after it back until enough bytes came.
    if bytes[1..len.min(bytes.len())]
        .iter()
        .any(|b| !(0x80..=0xbf).contains(b))
    {
        return Step::Took(1, None);
    }
    if bytes.len() < len {
        return Step::Wait;
    }
    let Some(c) = std::str::from_utf8(&bytes[..len])
        .ok()
        .and_then(|s| s.chars().next())
    else {
        return Step::Took(1, None);
    };
    let modifiers = if c.is_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    key_step(len, KeyCode::Char(c), modifiers)
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
