//! Mouse reports in the three encodings a terminal may pick: SGR (`CSI < b;x;y M`,
//! `m` on release), X10 (`CSI M` and three bytes) and urxvt (`CSI b;x;y M`).

use crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

/// An SGR report: `numbers` are button code, column and row (from 1).
pub(super) fn sgr(numbers: &[u32], released: bool) -> Option<Event> {
    let [code, x, y] = numbers else {
        return None;
    };
    event(*code, *x, *y, released)
}

/// An X10 report: each of the three bytes is its number plus 32.
pub(super) fn x10(code: u8, x: u8, y: u8) -> Option<Event> {
    let [code, x, y] = [code, x, y].map(|b| b.checked_sub(32).map(u32::from));
    event(code?, x?, y?, false)
}

/// A urxvt report: the button code plus 32, then column and row.
pub(super) fn urxvt(numbers: &[u32]) -> Option<Event> {
    let [code, x, y] = numbers else {
        return None;
    };
    event(code.checked_sub(32)?, *x, *y, false)
}

/// The event a button code stands for at column `x`, row `y` (both from 1). Without
/// SGR's separate release, button bits 3 mean "released" (which button is not said).
fn event(code: u32, x: u32, y: u32, released: bool) -> Option<Event> {
    let button = match code & 0b11 {
        0 => MouseButton::Left,
        1 => MouseButton::Middle,
        2 => MouseButton::Right,
        _ => MouseButton::Left,
    };
    let kind = if code & 64 != 0 {
        match code & 0b11 {
            0 => MouseEventKind::ScrollUp,
            1 => MouseEventKind::ScrollDown,
            2 => MouseEventKind::ScrollLeft,
            _ => MouseEventKind::ScrollRight,
        }
    } else if code & 128 != 0 {
        // The extra buttons 8 to 11 have no name in the events the client reads.
        return None;
    } else if code & 32 != 0 {
        if code & 0b11 == 3 {
            MouseEventKind::Moved
        } else {
            MouseEventKind::Drag(button)
        }
    } else if released || code & 0b11 == 3 {
        MouseEventKind::Up(button)
    } else {
        MouseEventKind::Down(button)
    };
    let mut modifiers = KeyModifiers::NONE;
    for (bit, flag) in [
        (4, KeyModifiers::SHIFT),
        (8, KeyModifiers::ALT),
        (16, KeyModifiers::CONTROL),
    ] {
        if code & bit != 0 {
            modifiers |= flag;
        }
    }
    Some(Event::Mouse(MouseEvent {
        kind,
        column: u16::try_from(x.saturating_sub(1)).ok()?,
        row: u16::try_from(y.saturating_sub(1)).ok()?,
        modifiers,
    }))
}
