//! Copying to the user's clipboard through the terminal (OSC 52), which works over SSH.
//! Whether it arrived cannot be known: a terminal may not take OSC 52 at all, and tmux
//! with its default `set-clipboard external` drops it. The client therefore says it
//! *sent* the text, and inside tmux says once what tmux needs to let it through; the
//! text also goes in tmux's passthrough form, for a tmux with `allow-passthrough on`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use std::io::{self, Write};

/// What is said once per process inside tmux.
pub const TMUX_HINT: &str = "inside tmux the copy reaches your clipboard only if tmux lets \
     it through: add `set -g set-clipboard on` (or `set -g allow-passthrough on`) to \
     ~/.tmux.conf";

/// Whether the tmux hint was given.
#[derive(Debug, Default)]
pub struct Clipboard {
    told: bool,
}

impl Clipboard {
    /// Writes `text` as OSC 52 (and in tmux's passthrough form when `in_tmux`); returns
    /// the hint to show the first time in tmux.
    pub fn copy(
        &mut self,
        out: &mut impl Write,
        text: &str,
        in_tmux: bool,
    ) -> io::Result<Option<&'static str>> {
        let sequence = format!("\u{1b}]52;c;{}\u{7}", STANDARD.encode(text));
        out.write_all(sequence.as_bytes())?;
        if in_tmux {
            // DCS tmux; … ST, each ESC inside doubled.
            let wrapped = sequence.replace('\u{1b}', "\u{1b}\u{1b}");
            write!(out, "\u{1b}Ptmux;{wrapped}\u{1b}\\")?;
        }
        out.flush()?;
        Ok((in_tmux && !std::mem::replace(&mut self.told, true)).then_some(TMUX_HINT))
    }
}

/// Whether this process runs inside tmux.
pub fn in_tmux() -> bool {
    std::env::var_os("TMUX").is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc_52_plain_and_through_tmux_with_the_hint_once() {
        let mut clipboard = Clipboard::default();
        let mut out = Vec::new();
        assert_eq!(clipboard.copy(&mut out, "hi", false).unwrap(), None);
        assert_eq!(out, b"\x1b]52;c;aGk=\x07");
        let mut out = Vec::new();
        assert_eq!(
            clipboard.copy(&mut out, "hi", true).unwrap(),
            Some(TMUX_HINT)
        );
        assert_eq!(
            out,
            b"\x1b]52;c;aGk=\x07\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\".to_vec()
        );
        assert_eq!(clipboard.copy(&mut Vec::new(), "hi", true).unwrap(), None);
    }
}
