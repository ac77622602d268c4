//! One key with its modifiers: matching it against a key event, writing it for the
//! help, and reading it from config text (`ctrl+g`, `shift+tab`, `f1`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Why a key's text in `[keys]` names no key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChordError {
    /// Nothing but blanks.
    #[error("an empty key")]
    Empty,
    /// A modifier other than ctrl, alt or shift.
    #[error("unknown modifier \"{modifier}\" in \"{text}\" (use ctrl, alt, shift)")]
    UnknownModifier {
        /// The modifier as written (lower case).
        modifier: String,
        /// The whole key as written.
        text: String,
    },
    /// `f` and digits that make no number.
    #[error("\"{text}\": no such function key")]
    NoSuchFunctionKey {
        /// The key as written.
        text: String,
    },
    /// A function key outside f1 to f24.
    #[error("\"{text}\": function keys go from f1 to f24")]
    FunctionKeyRange {
        /// The key as written.
        text: String,
    },
    /// A key name we do not know.
    #[error("unknown key \"{key}\" in \"{text}\"")]
    UnknownKey {
        /// The key part (lower case).
        key: String,
        /// The whole key as written.
        text: String,
    },
}

/// A key with its modifiers, as bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyChord {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt, Shift.
    pub modifiers: KeyModifiers,
}

impl KeyChord {
    /// A chord of `code` with `modifiers`.
    pub const fn new(code: KeyCode, modifiers: KeyModifiers) -> Self {
        Self { code, modifiers }
    }

    /// Whether `key` is this chord. Shift is ignored for printable characters, whose
    /// case already says it.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT;
        let (mut want, mut got) = (self.modifiers & relevant, key.modifiers & relevant);
        if let KeyCode::Char(_) = self.code {
            want.remove(KeyModifiers::SHIFT);
            got.remove(KeyModifiers::SHIFT);
        }
        let code_matches = match (self.code, key.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) => {
                a.eq_ignore_ascii_case(&b) && (a == b || !got.is_empty())
            }
            // Terminals report Shift+Tab as BackTab, sometimes with Shift set.
            (KeyCode::BackTab, KeyCode::BackTab) => {
                want.remove(KeyModifiers::SHIFT);
                got.remove(KeyModifiers::SHIFT);
                true
            }
            (a, b) => a == b,
        };
        code_matches && want == got
    }

    /// Whether the chord is a printable character typed without Ctrl or Alt: bound to an
    /// action, that character could no longer be typed.
    pub fn types_text(&self) -> bool {
        matches!(self.code, KeyCode::Char(_))
            && !self
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    }

    /// How the chord is written in the help and in config files.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            parts.push("Ctrl".into());
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            parts.push("Alt".into());
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) && self.code != KeyCode::BackTab {
            parts.push("Shift".into());
        }
        parts.push(match self.code {
            KeyCode::Char(' ') => "Space".into(),
            KeyCode::Char(c) => c.to_ascii_uppercase().to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift+Tab".into(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::PageUp => "PageUp".into(),
            KeyCode::PageDown => "PageDown".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Delete".into(),
            other => format!("{other:?}"),
        });
        parts.join("+")
    }
}

/// Parses `ctrl+g`, `alt+enter`, `shift+tab`, `f1`, `pageup`, `?`.
pub fn parse_chord(text: &str) -> Result<KeyChord, ChordError> {
    let lower = text.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err(ChordError::Empty);
    }
    // A bare "+" is the plus key, not a separator.
    let (mods, key) = match lower.strip_suffix("++") {
        Some(rest) => (rest, "+"),
        None => match lower.rsplit_once('+') {
            Some((mods, key)) if !key.is_empty() => (mods, key),
            _ => ("", lower.as_str()),
        },
    };
    let mut modifiers = KeyModifiers::NONE;
    for m in mods.split('+').filter(|m| !m.is_empty()) {
        modifiers |= match m {
            "ctrl" | "control" | "c" => KeyModifiers::CONTROL,
            "alt" | "meta" | "option" | "m" => KeyModifiers::ALT,
            "shift" | "s" => KeyModifiers::SHIFT,
            other => {
                return Err(ChordError::UnknownModifier {
                    modifier: other.to_owned(),
                    text: text.to_owned(),
                });
            }
        };
    }
    let code = match key {
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" if modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "space" => KeyCode::Char(' '),
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        k if k.starts_with('f') && k.len() > 1 && k[1..].chars().all(|c| c.is_ascii_digit()) => {
            let n: u8 = k[1..].parse().map_err(|_| ChordError::NoSuchFunctionKey {
                text: text.to_owned(),
            })?;
            if !(1..=24).contains(&n) {
                return Err(ChordError::FunctionKeyRange {
                    text: text.to_owned(),
                });
            }
            KeyCode::F(n)
        }
        k if k.chars().count() == 1 => KeyCode::Char(k.chars().next().unwrap_or(' ')),
        other => {
            return Err(ChordError::UnknownKey {
                key: other.to_owned(),
                text: text.to_owned(),
            });
        }
    };
    Ok(KeyChord::new(code, modifiers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_and_print() {
        let chord = parse_chord("Ctrl+Shift+X").unwrap();
        assert_eq!(chord.modifiers, KeyModifiers::CONTROL | KeyModifiers::SHIFT);
        assert_eq!(parse_chord("shift+tab").unwrap().code, KeyCode::BackTab);
        assert_eq!(parse_chord("f5").unwrap().code, KeyCode::F(5));
        assert_eq!(parse_chord("ctrl++").unwrap().code, KeyCode::Char('+'));
        assert_eq!(parse_chord("ctrl+g").unwrap().label(), "Ctrl+G");
        let err = parse_chord("hyper+x").unwrap_err();
        assert!(
            matches!(&err, ChordError::UnknownModifier { modifier, .. } if modifier == "hyper")
        );
        assert_eq!(
            err.to_string(),
            "unknown modifier \"hyper\" in \"hyper+x\" (use ctrl, alt, shift)"
        );
        assert_eq!(
            parse_chord("f99").unwrap_err().to_string(),
            "\"f99\": function keys go from f1 to f24"
        );
        assert_eq!(
            parse_chord("f999").unwrap_err(),
            ChordError::NoSuchFunctionKey {
                text: "f999".into()
            }
        );
        assert_eq!(parse_chord("  ").unwrap_err().to_string(), "an empty key");
        assert_eq!(
            parse_chord("ctrl+nope").unwrap_err().to_string(),
            "unknown key \"nope\" in \"ctrl+nope\""
        );
    }
}
