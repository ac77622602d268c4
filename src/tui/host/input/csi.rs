//! `ESC [ …` sequences: keys with modifiers, xterm's modifyOtherKeys, the kitty
//! keyboard protocol, mouse reports, focus and bracketed paste.

use super::decode::{Step, cursor_key, key_step, modifiers_of};
use super::{kitty, mouse};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};

/// The longest sequence waited for (a paste excepted): past it, the bytes were not a
/// sequence after all and are skipped rather than held forever.
const LONGEST: usize = 64;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// Decodes the sequence at the start of `bytes`, which start with `ESC [`.
pub(super) fn step(bytes: &[u8], more: bool) -> Step {
    match bytes {
        [_, _] if more => Step::Wait,
        // Nothing follows: the user typed Alt+[.
        [_, _] => key_step(2, KeyCode::Char('['), KeyModifiers::ALT),
        // The Linux console's F1–F5: `ESC [ [ A` to `ESC [ [ E`.
        [_, _, b'['] => Step::Wait,
        [_, _, b'[', f @ b'A'..=b'E', ..] => {
            key_step(4, KeyCode::F(f - b'A' + 1), KeyModifiers::NONE)
        }
        [_, _, b'[', ..] => Step::Took(3, None),
        // X10 mouse: three bytes follow the `M`.
        [_, _, b'M', rest @ ..] if rest.len() < 3 => Step::Wait,
        [_, _, b'M', b, x, y, ..] => Step::Took(6, mouse::x10(*b, *x, *y)),
        _ => sequence(bytes),
    }
}

/// A complete `CSI params intermediates final`, or a wait for its end.
fn sequence(bytes: &[u8]) -> Step {
    let body = &bytes[2..];
    let Some(end) = body.iter().position(|b| !(0x20..=0x3f).contains(b)) else {
        return if bytes.len() > LONGEST {
            Step::Took(bytes.len(), None)
        } else {
            Step::Wait
        };
    };
    let last = body[end];
    if !(0x40..=0x7e).contains(&last) {
        // Not a sequence: skip what was read of it and decode the rest afresh.
        return Step::Took(2 + end, None);
    }
    let taken = 2 + end + 1;
    let params = &body[..end];
    if params.iter().any(|b| (0x20..=0x2f).contains(b)) {
        // An intermediate byte (`$` in `CSI ? 2026 ; 2 $ y`): a terminal's report.
        return Step::Took(taken, None);
    }
    Step::Took(taken, decode(params, last))
}

/// Where a bracketed paste stands.
pub(super) enum Paste {
    /// Complete: its length in bytes, markers included, and the pasted text.
    Done(usize, Event),
    /// The end has not arrived; the text up to this many bytes holds no end marker.
    Open(usize),
}

/// A bracketed paste at the start of `bytes`, if they start one.
pub(super) fn starts_paste(bytes: &[u8]) -> bool {
    bytes.starts_with(PASTE_START)
}

/// The paste at the start of `bytes`: its text between `ESC [200~` and `ESC [201~`.
/// `searched` bytes of the text were looked through before, so a paste arriving in
/// many reads is searched once, not once per read.
pub(super) fn paste(bytes: &[u8], searched: usize) -> Paste {
    let text = &bytes[PASTE_START.len()..];
    let from = searched.saturating_sub(PASTE_END.len() - 1);
    match text[from..]
        .windows(PASTE_END.len())
        .position(|w| w == PASTE_END)
    {
        Some(at) => {
            let end = from + at;
            let pasted = String::from_utf8_lossy(&text[..end]).into_owned();
            Paste::Done(
                PASTE_START.len() + end + PASTE_END.len(),
                Event::Paste(pasted),
            )
        }
        None => Paste::Open(text.len()),
    }
}

/// The parameters of a sequence: `;`-separated fields of `:`-separated numbers.
struct Params<'a>(Vec<&'a [u8]>);

impl<'a> Params<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self(bytes.split(|b| *b == b';').collect())
    }

    /// Sub-parameter `sub` of field `field`, when present and a number.
    fn get(&self, field: usize, sub: usize) -> Option<u32> {
        let field = self.0.get(field)?;
        let part = field.split(|b| *b == b':').nth(sub)?;
        std::str::from_utf8(part).ok()?.parse().ok()
    }

    /// The modifiers and the event kind of field `field` (`mods:kind`, mods being one
    /// more than the bit mask).
    fn modifiers(&self, field: usize) -> (KeyModifiers, KeyEventKind, KeyEventState) {
        let mask = self.get(field, 0).unwrap_or(1).saturating_sub(1);
        let modifiers = modifiers_of(mask);
        let mut state = KeyEventState::NONE;
        if mask & 64 != 0 {
            state |= KeyEventState::CAPS_LOCK;
        }
        if mask & 128 != 0 {
            state |= KeyEventState::NUM_LOCK;
        }
        let kind = match self.get(field, 1) {
            Some(2) => KeyEventKind::Repeat,
            Some(3) => KeyEventKind::Release,
            _ => KeyEventKind::Press,
        };
        (modifiers, kind, state)
    }
}

/// What a complete sequence means; `None` for a report or a form not known here.
fn decode(params: &[u8], last: u8) -> Option<Event> {
    if let Some(&marker) = params.first().filter(|b| b"<=>?".contains(b)) {
        return match (marker, last) {
            (b'<', b'M' | b'm') => mouse::sgr(&Params::new(&params[1..]).numbers(), last == b'm'),
            // The keyboard flags (`?…u`), device attributes (`?…c`) and other answers.
            _ => None,
        };
    }
    let p = Params::new(params);
    let code = match last {
        last if let Some(code) = cursor_key(last) => code,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'S' => KeyCode::F(4),
        // `CSI R` is F3; with numbers it is a cursor position report.
        b'R' if params.is_empty() => KeyCode::F(3),
        b'Z' => return key(KeyCode::BackTab, KeyModifiers::SHIFT),
        b'I' => return Some(Event::FocusGained),
        b'O' => return Some(Event::FocusLost),
        b'~' => return tilde(&p),
        b'u' => return kitty_key(&p),
        b'M' => return mouse::urxvt(&p.numbers()),
        _ => return None,
    };
    with_modifiers(code, &p, 1, KeyEventState::NONE)
}

impl Params<'_> {
    /// Every field's first number (0 where it is not one).
    fn numbers(&self) -> Vec<u32> {
        (0..self.0.len())
            .map(|i| self.get(i, 0).unwrap_or(0))
            .collect()
    }
}

/// `CSI n ; mods ~`: the editing and function keys, and xterm's modifyOtherKeys form
/// `CSI 27 ; mods ; code ~` (Shift+Enter is `CSI 27;2;13~`).
fn tilde(p: &Params) -> Option<Event> {
    let code = match p.get(0, 0)? {
        27 => {
            let (code, _) = from_codepoint(p.get(2, 0)?)?;
            return with_modifiers(code, p, 1, KeyEventState::NONE).map(shift_tab);
        }
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        n @ 11..=15 => KeyCode::F(n as u8 - 10),
        n @ 17..=21 => KeyCode::F(n as u8 - 11),
        n @ 23..=26 => KeyCode::F(n as u8 - 12),
        n @ 28..=29 => KeyCode::F(n as u8 - 15),
        n @ 31..=34 => KeyCode::F(n as u8 - 17),
        _ => return None,
    };
    with_modifiers(code, p, 1, KeyEventState::NONE)
}

/// `CSI code[:shifted] ; mods[:kind] u`, the kitty keyboard protocol's (and fixterms')
/// form. With Shift and the shifted key reported, the key is the shifted character.
fn kitty_key(p: &Params) -> Option<Event> {
    let (code, state) = from_codepoint(p.get(0, 0)?)?;
    let Event::Key(mut key) = with_modifiers(code, p, 1, state)? else {
        return None;
    };
    if let KeyCode::Modifier(held) = key.code {
        key.modifiers |= kitty::modifier_flag(held);
    }
    if key.modifiers.contains(KeyModifiers::SHIFT)
        && let Some(shifted) = p.get(0, 1).and_then(char::from_u32)
    {
        key.code = KeyCode::Char(shifted);
        key.modifiers.remove(KeyModifiers::SHIFT);
    }
    Some(shift_tab(Event::Key(key)))
}

/// The key a code point names: the kitty protocol's private-use keys, the C0 keys, or
/// a character.
fn from_codepoint(codepoint: u32) -> Option<(KeyCode, KeyEventState)> {
    if let Some(found) = kitty::functional(codepoint) {
        return Some(found);
    }
    let code = match codepoint {
        27 => KeyCode::Esc,
        13 => KeyCode::Enter,
        9 => KeyCode::Tab,
        8 | 127 => KeyCode::Backspace,
        c => KeyCode::Char(char::from_u32(c)?),
    };
    Some((code, KeyEventState::NONE))
}

/// Shift+Tab is BackTab, as the legacy `CSI Z` says it.
fn shift_tab(event: Event) -> Event {
    match event {
        Event::Key(mut key)
            if key.code == KeyCode::Tab && key.modifiers.contains(KeyModifiers::SHIFT) =>
        {
            key.code = KeyCode::BackTab;
            Event::Key(key)
        }
        other => other,
    }
}

/// `code` with the modifiers, kind and lock state of field `field`.
fn with_modifiers(code: KeyCode, p: &Params, field: usize, state: KeyEventState) -> Option<Event> {
    let (modifiers, kind, locks) = p.modifiers(field);
    Some(Event::Key(KeyEvent::new_with_kind_and_state(
        code,
        modifiers,
        kind,
        state | locks,
    )))
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Event> {
    Some(Event::Key(KeyEvent::new(code, modifiers)))
}
