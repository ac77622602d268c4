//! Key bindings: named actions, their default keys, and overrides from a `[keys]` table
//! (`submit = "enter"`, `newline = ["shift+enter", "ctrl+j"]`).

mod chord;
mod error;

pub use chord::{ChordError, KeyChord, parse_chord};
pub use error::KeymapError;

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
    /// Show or hide the tool tree and the dashboard beside the chat.
    TogglePanes,
}

/// Every action with its config name and a description for the help overlay.
pub const ACTIONS: [(Action, &str, &str); 21] = [
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
        "mouse capture on/off (off: the terminal selects text)",
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
    (
        Action::TogglePanes,
        "toggle_panes",
        "show/hide the tool calls and dashboard panes",
    ),
];

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
            (Action::TogglePanes, vec![c(K::F(4), NONE)]),
        ];
        Self { bindings }
    }
}

impl KeyMap {
    /// The defaults with the overrides of a `[keys]` table applied; errors name the key.
    pub fn from_table(table: &toml::Table) -> Result<KeyMap, KeymapError> {
        let mut map = KeyMap::default();
        for (name, value) in table {
            let action = ACTIONS
                .iter()
                .find(|(_, n, _)| n == name)
                .map(|(a, _, _)| *a)
                .ok_or_else(|| KeymapError::UnknownAction { name: name.clone() })?;
            let texts: Vec<&str> = match value {
                toml::Value::String(s) => vec![s.as_str()],
                toml::Value::Array(items) => items
                    .iter()
                    .map(|v| {
                        v.as_str().ok_or_else(|| KeymapError::NotAString {
                            action: name.clone(),
                        })
                    })
                    .collect::<Result<_, _>>()?,
                _ => {
                    return Err(KeymapError::NotAKey {
                        action: name.clone(),
                    });
                }
            };
            let chords = texts
                .iter()
                .map(|t| {
                    let chord = parse_chord(t).map_err(|source| KeymapError::BadChord {
                        action: name.clone(),
                        source,
                    })?;
                    if chord.types_text() {
                        return Err(KeymapError::TypingKey {
                            action: name.clone(),
                            key: (*t).to_owned(),
                        });
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
    fn check_conflicts(&self) -> Result<(), KeymapError> {
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
                    return Err(KeymapError::Conflict {
                        chord: *chord,
                        first: name(*first),
                        second: name(*second),
                    });
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
        let err = KeyMap::from_table(&bad).unwrap_err();
        assert!(err.to_string().contains("`sumbit`"), "{err}");
        assert!(err.names_entry("sumbit") && !err.names_entry("submit"));
        let bad: toml::Table = toml::from_str("submit = \"ctrl+nope\"").unwrap();
        let err = KeyMap::from_table(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "[keys] `submit`: unknown key \"nope\" in \"ctrl+nope\""
        );
        assert!(std::error::Error::source(&err).is_some());
        let bad: toml::Table = toml::from_str("submit = 5").unwrap();
        assert_eq!(
            KeyMap::from_table(&bad).unwrap_err().to_string(),
            "[keys] `submit`: give a key like \"ctrl+g\" or a list of keys"
        );
        let bad: toml::Table = toml::from_str("submit = [\"ctrl+s\", 5]").unwrap();
        assert_eq!(
            KeyMap::from_table(&bad).unwrap_err().to_string(),
            "[keys] `submit`: every key must be a string"
        );
    }

    #[test]
    fn a_key_for_two_actions_or_a_typing_key_is_refused() {
        let clash: toml::Table = toml::from_str("newline = \"enter\"").unwrap();
        let err = KeyMap::from_table(&clash).unwrap_err();
        assert!(err.names_entry("submit") && err.names_entry("newline"));
        let err = err.to_string();
        assert!(
            err.contains("Enter") && err.contains("`submit`") && err.contains("`newline`"),
            "{err}"
        );
        let clash: toml::Table = toml::from_str("help = \"ctrl+t\"").unwrap();
        let err = KeyMap::from_table(&clash).unwrap_err().to_string();
        assert!(
            err.contains("`toggle_thinking`") && err.contains("`help`"),
            "{err}"
        );
        let typing: toml::Table = toml::from_str("help = \"h\"").unwrap();
        let err = KeyMap::from_table(&typing).unwrap_err().to_string();
        assert!(err.contains("`help`") && err.contains("ctrl+h"), "{err}");
        let unbound: toml::Table = toml::from_str("help = []").unwrap();
        let map = KeyMap::from_table(&unbound).unwrap();
        assert_eq!(map.label(Action::Help), "unbound");
        assert_eq!(map.action(&key(KeyCode::F(1), KeyModifiers::NONE)), None);
    }
}
