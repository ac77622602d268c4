//! The `ESC` sequences other than CSI: SS3 keys (`ESC O x`) and the terminal's string
//! answers (`ESC ] … BEL`), which must not be typed into the composer.

use super::decode::{ESC, Step, cursor_key, key_step, modifiers_of, with_alt};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventState, KeyModifiers};

/// The longest SS3 sequence waited for.
const SS3_LONGEST: usize = 16;
/// The longest string answer waited for; past it the bytes are dropped rather than
/// held while the user's keys queue behind them.
const OSC_LONGEST: usize = 4096;
const BEL: u8 = 0x07;

/// `ESC O [mods] x`: the cursor keys in application mode, F1–F4, urxvt's Ctrl+arrows
/// (`ESC O a` to `d`) and the keypad in application mode.
pub(super) fn ss3(bytes: &[u8], more: bool) -> Step {
    let body = &bytes[2..];
    let Some(end) = body
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';'))
    else {
        return match (body.is_empty(), more) {
            // Nothing follows: the user typed Alt+O.
            (true, false) => key_step(
                2,
                KeyCode::Char('O'),
                KeyModifiers::ALT | KeyModifiers::SHIFT,
            ),
            _ if bytes.len() > SS3_LONGEST => Step::Took(bytes.len(), None),
            _ => Step::Wait,
        };
    };
    let taken = 2 + end + 1;
    // A modifier, where a terminal sends one, is the last number (`ESC O 5 C`).
    let mask = std::str::from_utf8(&body[..end])
        .ok()
        .and_then(|p| p.rsplit(';').next()?.parse::<u32>().ok())
        .map_or(0, |m| m.saturating_sub(1));
    let mut modifiers = modifiers_of(mask);
    let keypad = |code| {
        Step::Took(
            taken,
            Some(Event::Key(KeyEvent::new_with_kind_and_state(
                code,
                modifiers,
                crossterm::event::KeyEventKind::Press,
                KeyEventState::KEYPAD,
            ))),
        )
    };
    let code = match body[end] {
        last if let Some(code) = cursor_key(last) => code,
        f @ b'P'..=b'S' => KeyCode::F(f - b'P' + 1),
        f @ b'a'..=b'd' => {
            modifiers |= KeyModifiers::CONTROL;
            [KeyCode::Up, KeyCode::Down, KeyCode::Right, KeyCode::Left][usize::from(f - b'a')]
        }
        b'M' => return keypad(KeyCode::Enter),
        b'X' => return keypad(KeyCode::Char('=')),
        f @ b'j'..=b'y' => {
            return keypad(KeyCode::Char(char::from(
                b"*+,-./0123456789"[usize::from(f - b'j')],
            )));
        }
        // Not an SS3 key after all: Alt+O, and the rest decoded afresh.
        _ if end == 0 => return with_alt(key_step(1, KeyCode::Char('O'), KeyModifiers::SHIFT)),
        _ => return Step::Took(taken, None),
    };
    key_step(taken, code, modifiers)
}

/// `ESC ] … BEL` or `ESC ] … ESC \`: an answer such as the background colour's
/// (OSC 11) arriving after its question gave up waiting. Skipped whole.
pub(super) fn osc(bytes: &[u8], more: bool) -> Step {
    if bytes.len() == 2 && !more {
        // Nothing follows: the user typed Alt+].
        return key_step(2, KeyCode::Char(']'), KeyModifiers::ALT);
    }
    let body = &bytes[2..];
    let bel = body.iter().position(|b| *b == BEL).map(|at| at + 1);
    let st = body
        .windows(2)
        .position(|w| w == [ESC, b'\\'])
        .map(|at| at + 2);
    match [bel, st].into_iter().flatten().min() {
        Some(len) => Step::Took(2 + len, None),
        None if bytes.len() > OSC_LONGEST => Step::Took(bytes.len(), None),
        None => Step::Wait,
    }
}
