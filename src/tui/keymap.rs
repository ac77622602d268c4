//! Key bindings: named actions, their default keys, and overrides from a `[keys]` table
//! (`submit = "enter"`, `newline = ["shift+enter", "ctrl+j"]`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Something a key can do, whatever has focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Send the composer's text (prompt when idle, follow-up while running).
    Submit,
    /// Insert a line break in the composer.
    Newline,
    /// Close an overlay; steer with text; interrupt without.
    Interrupt,
    /// Interrupt or clear the composer; twice quits.
    Cancel,
    /// Quit when the composer is empty.
    Quit,
    /// Suspend to the shell.
    Suspend,
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Pull queued messages back into the composer.
    PullQueue,
    /// Expand or collapse all thinking blocks.
    ToggleThinking,
    /// Show the key bindings.
    Help,
    /// Edit the composer's text in `$EDITOR`.
    Editor,
    /// Scroll the chat up a page.
    PageUp,
    /// Scroll the chat down a page.
    PageDown,
    /// Turn mouse capture off (to select text) or on (wheel scrolling).
    ToggleMouse,
    /// Stop the tool calls running now (the run goes on) and deliver steering at once.
    InterruptTool,
    /// Show all of a card's output (the selected card, else the newest), or fold it.
    ExpandOutput,
    /// Find in the chat.
    Find,
    /// Jump to the bottom of the chat and follow it again.
    ScrollBottom,
    /// Open the request inspector (the session's LLM requests).
    Inspect,
}

/// Every action with its config name and a description for the help overlay.
pub const ACTIONS: [(Action, &str, &str); 20] = [
    (
        Action::Submit,
        "submit",
        "send; while the agent works: queue a follow-up",
    ),
    (Action::Newline, "newline", "new line in the message"),
    (
        Action::Interrupt,
        "interrupt",
        "close overlay · steer with text · interrupt when empty",
    ),
    (
        Action::Cancel,
        "cancel",
        "interrupt, or clear the message; twice: quit",
    ),
    (Action::Quit, "quit", "quit (empty message)"),
    (Action::Suspend, "suspend", "suspend to the shell"),
    (Action::FocusNext, "focus_next", "next pane"),
    (
        Action::FocusPrev,
        "focus_prev",
        "previous pane; in the message box: plan mode on/off",
    ),
    (
        Action::PullQueue,
        "pull_queue",
        "pull queued messages back for editing",
    ),
    (
        Action::ToggleThinking,
        "toggle_thinking",
        "expand/collapse thinking",
    ),
    (Action::Help, "help", "this help"),
    (Action::Editor, "editor", "edit the message in $EDITOR"),
    (Action::PageUp, "page_up", "scroll the chat up"),
    (Action::PageDown, "page_down", "scroll the chat down"),
    (
        Action::ToggleMouse,
        "toggle_mouse",
        "mouse capture on/off (off: select text)",
    ),
    (
        Action::InterruptTool,
        "interrupt_tool",
        "stop the running tool (the turn goes on); with text: steer now",
    ),
    (
        Action::ExpandOutput,
        "expand_output",
        "show all of a card's output (selected, else newest), or fold it",
    ),
    (Action::Find, "find", "find in the chat"),
    (
        Action::ScrollBottom,
        "scroll_bottom",
        "jump to the bottom of the chat",
    ),
    (
        Action::Inspect,
        "inspect",
        "the request inspector: what each LLM request sent",
    ),
];

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
pub fn parse_chord(text: &str) -> Result<KeyChord, String> {
    let lower = text.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err("an empty key".into());
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
                return Err(format!(
                    "unknown modifier \"{other}\" in \"{text}\" (use ctrl, alt, shift)"
                ));
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
            let n: u8 = k[1..]
                .parse()
                .map_err(|_| format!("\"{text}\": no such function key"))?;
            if !(1..=24).contains(&n) {
                return Err(format!("\"{text}\": function keys go from f1 to f24"));
            }
            KeyCode::F(n)
        }
        k if k.chars().count() == 1 => KeyCode::Char(k.chars().next().unwrap_or(' ')),
        other => return Err(format!("unknown key \"{other}\" in \"{text}\"")),
    };
    Ok(KeyChord::new(code, modifiers))
}

/// The bindings: for each action, the chords that trigger it.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyMap {
    bindings: Vec<(Action, Vec<KeyChord>)>,
}

impl Default for KeyMap {
    fn default() -> Self {
        use KeyCode as K;
        const NONE: KeyModifiers = KeyModifiers::NONE;
        const CTRL: KeyModifiers = KeyModifiers::CONTROL;
        const ALT: KeyModifiers = KeyModifiers::ALT;
        const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
        let c = KeyChord::new;
        let bindings = vec![
            (Action::Submit, vec![c(K::Enter, NONE)]),
            (
                Action::Newline,
                vec![c(K::Enter, SHIFT), c(K::Enter, ALT), c(K::Char('j'), CTRL)],
            ),
            (Action::Interrupt, vec![c(K::Esc, NONE)]),
            (Action::Cancel, vec![c(K::Char('c'), CTRL)]),
            (Action::Quit, vec![c(K::Char('d'), CTRL)]),
            (Action::Suspend, vec![c(K::Char('z'), CTRL)]),
            (Action::FocusNext, vec![c(K::Tab, NONE)]),
            (Action::FocusPrev, vec![c(K::BackTab, SHIFT)]),
            (Action::PullQueue, vec![c(K::Up, ALT)]),
            (Action::ToggleThinking, vec![c(K::Char('t'), CTRL)]),
            (Action::Help, vec![c(K::F(1), NONE)]),
            (Action::Editor, vec![c(K::Char('g'), CTRL)]),
            (Action::PageUp, vec![c(K::PageUp, NONE)]),
            (Action::PageDown, vec![c(K::PageDown, NONE)]),
            (Action::ToggleMouse, vec![c(K::F(12), NONE)]),
            (Action::InterruptTool, vec![c(K::Char('x'), CTRL)]),
            (Action::ExpandOutput, vec![c(K::Char('o'), CTRL)]),
            (Action::Find, vec![c(K::Char('f'), CTRL)]),
            (Action::ScrollBottom, vec![c(K::End, CTRL)]),
            (Action::Inspect, vec![c(K::F(3), NONE)]),
        ];
        Self { bindings }
    }
}

impl KeyMap {
    /// The defaults with the overrides of a `[keys]` table applied; errors name the key.
    pub fn from_table(table: &toml::Table) -> Result<KeyMap, String> {
        let mut map = KeyMap::default();
        for (name, value) in table {
            let action = ACTIONS
                .iter()
                .find(|(_, n, _)| n == name)
                .map(|(a, _, _)| *a)
                .ok_or_else(|| {
                    let names: Vec<&str> = ACTIONS.iter().map(|(_, n, _)| *n).collect();
                    format!(
                        "[keys]: unknown action `{name}`; the actions are {}",
                        names.join(", ")
                    )
                })?;
            let texts: Vec<&str> = match value {
                toml::Value::String(s) => vec![s.as_str()],
                toml::Value::Array(items) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .ok_or_else(|| format!("[keys] `{name}`: every key must be a string"))
                    })
                    .collect::<Result<_, _>>()?,
                _ => {
                    return Err(format!(
                        "[keys] `{name}`: give a key like \"ctrl+g\" or a list of keys"
                    ));
                }
            };
            let chords = texts
                .iter()
                .map(|t| {
                    let chord = parse_chord(t).map_err(|e| format!("[keys] `{name}`: {e}"))?;
                    if chord.types_text() {
                        return Err(format!(
                            "[keys] `{name}`: \"{t}\" is a key you type text with; add a \
                             modifier (e.g. \"ctrl+{t}\") or use a function key"
                        ));
                    }
                    Ok(chord)
                })
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(slot) = map.bindings.iter_mut().find(|(a, _)| *a == action) {
                slot.1 = chords;
            }
        }
        map.check_conflicts()?;
        Ok(map)
    }

    /// Fails when one key would trigger two actions (only the first would ever run).
    fn check_conflicts(&self) -> Result<(), String> {
        let name = |action: Action| {
            ACTIONS
                .iter()
                .find(|(a, _, _)| *a == action)
                .map_or("?", |(_, n, _)| *n)
        };
        for (i, (first, chords)) in self.bindings.iter().enumerate() {
            for (second, others) in &self.bindings[i + 1..] {
                let clash = chords.iter().find(|c| {
                    others.iter().any(|o| {
                        c.matches(&KeyEvent::new(o.code, o.modifiers))
                            || o.matches(&KeyEvent::new(c.code, c.modifiers))
                    })
                });
                if let Some(chord) = clash {
                    return Err(format!(
                        "[keys]: {} is bound to both `{}` and `{}`; give one of them \
                         another key in [keys]",
                        chord.label(),
                        name(*first),
                        name(*second)
                    ));
                }
            }
        }
        Ok(())
    }

    /// The action bound to `key`, if any.
    pub fn action(&self, key: &KeyEvent) -> Option<Action> {
        self.bindings
            .iter()
            .find(|(_, chords)| chords.iter().any(|c| c.matches(key)))
            .map(|(a, _)| *a)
    }

    /// The chords of an action, for the help overlay and hints.
    pub fn chords(&self, action: Action) -> &[KeyChord] {
        self.bindings
            .iter()
            .find(|(a, _)| *a == action)
            .map_or(&[], |(_, c)| c.as_slice())
    }

    /// The first chord of an action as text (`Esc`, `Ctrl+C`), or `unbound`.
    pub fn label(&self, action: Action) -> String {
        self.chords(action)
            .first()
            .map_or_else(|| "unbound".into(), KeyChord::label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn defaults_resolve_the_documented_keys() {
        let map = KeyMap::default();
        assert_eq!(
            map.action(&key(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::Submit)
        );
        assert_eq!(
            map.action(&key(KeyCode::Enter, KeyModifiers::SHIFT)),
            Some(Action::Newline)
        );
        assert_eq!(
            map.action(&key(KeyCode::Char('j'), KeyModifiers::CONTROL)),
            Some(Action::Newline)
        );
        assert_eq!(
            map.action(&key(KeyCode::BackTab, KeyModifiers::NONE)),
            Some(Action::FocusPrev)
        );
        assert_eq!(
            map.action(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Cancel)
        );
        assert_eq!(
            map.action(&key(KeyCode::Char('c'), KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            map.action(&key(KeyCode::Char('C'), KeyModifiers::SHIFT)),
            None
        );
    }

    #[test]
    fn chords_parse_and_print() {
        let chord = parse_chord("Ctrl+Shift+X").unwrap();
        assert_eq!(chord.modifiers, KeyModifiers::CONTROL | KeyModifiers::SHIFT);
        assert_eq!(parse_chord("shift+tab").unwrap().code, KeyCode::BackTab);
        assert_eq!(parse_chord("f5").unwrap().code, KeyCode::F(5));
        assert_eq!(parse_chord("ctrl++").unwrap().code, KeyCode::Char('+'));
        assert_eq!(parse_chord("ctrl+g").unwrap().label(), "Ctrl+G");
        assert!(parse_chord("hyper+x").unwrap_err().contains("hyper"));
        assert!(parse_chord("f99").is_err());
    }

    #[test]
    fn a_keys_table_overrides_and_names_bad_keys() {
        let table: toml::Table =
            toml::from_str("submit = \"ctrl+s\"\nnewline = [\"enter\"]").unwrap();
        let map = KeyMap::from_table(&table).unwrap();
        assert_eq!(
            map.action(&key(KeyCode::Char('s'), KeyModifiers::CONTROL)),
            Some(Action::Submit)
        );
        assert_eq!(
            map.action(&key(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::Newline)
        );
        let bad: toml::Table = toml::from_str("sumbit = \"enter\"").unwrap();
        assert!(KeyMap::from_table(&bad).unwrap_err().contains("`sumbit`"));
        let bad: toml::Table = toml::from_str("submit = \"ctrl+nope\"").unwrap();
        assert!(KeyMap::from_table(&bad).unwrap_err().contains("`submit`"));
    }

    #[test]
    fn a_key_for_two_actions_or_a_typing_key_is_refused() {
        let clash: toml::Table = toml::from_str("newline = \"enter\"").unwrap();
        let err = KeyMap::from_table(&clash).unwrap_err();
        assert!(
            err.contains("Enter") && err.contains("`submit`") && err.contains("`newline`"),
            "{err}"
        );
        let clash: toml::Table = toml::from_str("help = \"ctrl+t\"").unwrap();
        let err = KeyMap::from_table(&clash).unwrap_err();
        assert!(
            err.contains("`toggle_thinking`") && err.contains("`help`"),
            "{err}"
        );
        let typing: toml::Table = toml::from_str("help = \"h\"").unwrap();
        let err = KeyMap::from_table(&typing).unwrap_err();
        assert!(err.contains("`help`") && err.contains("ctrl+h"), "{err}");
        let unbound: toml::Table = toml::from_str("help = []").unwrap();
        let map = KeyMap::from_table(&unbound).unwrap();
        assert_eq!(map.label(Action::Help), "unbound");
        assert_eq!(map.action(&key(KeyCode::F(1), KeyModifiers::NONE)), None);
    }
}
