//! The kitty keyboard protocol's keys outside Unicode: code points 57358 to 57454 of
//! the private use area name the keypad, lock, media and modifier keys.

use crossterm::event::{KeyCode, KeyEventState, KeyModifiers, MediaKeyCode, ModifierKeyCode};

/// The keypad's keys from 57399 on, in the protocol's order.
const KEYPAD: [KeyCode; 29] = [
    KeyCode::Char('0'),
    KeyCode::Char('1'),
    KeyCode::Char('2'),
    KeyCode::Char('3'),
    KeyCode::Char('4'),
    KeyCode::Char('5'),
    KeyCode::Char('6'),
    KeyCode::Char('7'),
    KeyCode::Char('8'),
    KeyCode::Char('9'),
    KeyCode::Char('.'),
    KeyCode::Char('/'),
    KeyCode::Char('*'),
    KeyCode::Char('-'),
    KeyCode::Char('+'),
    KeyCode::Enter,
    KeyCode::Char('='),
    KeyCode::Char(','),
    KeyCode::Left,
    KeyCode::Right,
    KeyCode::Up,
    KeyCode::Down,
    KeyCode::PageUp,
    KeyCode::PageDown,
    KeyCode::Home,
    KeyCode::End,
    KeyCode::Insert,
    KeyCode::Delete,
    KeyCode::KeypadBegin,
];

/// The lock and system keys from 57358 on.
const SYSTEM: [KeyCode; 6] = [
    KeyCode::CapsLock,
    KeyCode::ScrollLock,
    KeyCode::NumLock,
    KeyCode::PrintScreen,
    KeyCode::Pause,
    KeyCode::Menu,
];

/// The media keys from 57428 on.
const MEDIA: [MediaKeyCode; 13] = [
    MediaKeyCode::Play,
    MediaKeyCode::Pause,
    MediaKeyCode::PlayPause,
    MediaKeyCode::Reverse,
    MediaKeyCode::Stop,
    MediaKeyCode::FastForward,
    MediaKeyCode::Rewind,
    MediaKeyCode::TrackNext,
    MediaKeyCode::TrackPrevious,
    MediaKeyCode::Record,
    MediaKeyCode::LowerVolume,
    MediaKeyCode::RaiseVolume,
    MediaKeyCode::MuteVolume,
];

/// The modifier keys themselves from 57441 on.
const MODIFIERS: [ModifierKeyCode; 14] = [
    ModifierKeyCode::LeftShift,
    ModifierKeyCode::LeftControl,
    ModifierKeyCode::LeftAlt,
    ModifierKeyCode::LeftSuper,
    ModifierKeyCode::LeftHyper,
    ModifierKeyCode::LeftMeta,
    ModifierKeyCode::RightShift,
    ModifierKeyCode::RightControl,
    ModifierKeyCode::RightAlt,
    ModifierKeyCode::RightSuper,
    ModifierKeyCode::RightHyper,
    ModifierKeyCode::RightMeta,
    ModifierKeyCode::IsoLevel3Shift,
    ModifierKeyCode::IsoLevel5Shift,
];

/// The key a private-use code point names, with the keypad state for keypad keys.
pub(super) fn functional(codepoint: u32) -> Option<(KeyCode, KeyEventState)> {
    let from = |first: u32| usize::try_from(codepoint - first).ok();
    let found = match codepoint {
        57399..=57427 => return Some((KEYPAD[from(57399)?], KeyEventState::KEYPAD)),
        57358..=57363 => SYSTEM[from(57358)?],
        57376..=57398 => KeyCode::F(u8::try_from(codepoint - 57376 + 13).ok()?),
        57428..=57440 => KeyCode::Media(MEDIA[from(57428)?]),
        57441..=57454 => KeyCode::Modifier(MODIFIERS[from(57441)?]),
        _ => return None,
    };
    Some((found, KeyEventState::NONE))
}

/// The modifier a modifier key adds while it is the key reported.
pub(super) fn modifier_flag(key: ModifierKeyCode) -> KeyModifiers {
    use ModifierKeyCode as M;
    match key {
        M::LeftShift | M::RightShift => KeyModifiers::SHIFT,
        M::LeftControl | M::RightControl => KeyModifiers::CONTROL,
        M::LeftAlt | M::RightAlt => KeyModifiers::ALT,
        M::LeftSuper | M::RightSuper => KeyModifiers::SUPER,
        M::LeftHyper | M::RightHyper => KeyModifiers::HYPER,
        M::LeftMeta | M::RightMeta => KeyModifiers::META,
        M::IsoLevel3Shift | M::IsoLevel5Shift => KeyModifiers::NONE,
    }
}
