//! Whether the terminal speaks the kitty keyboard protocol, asked with a bounded wait.
//!
//! crossterm's own question waits two seconds for a terminal that answers nothing, and
//! the client cannot start before it knows; this one waits at most `PROBE_TIMEOUT`.
//! The question is the protocol's flags query followed by a DA1 request: a terminal
//! that answers at all answers DA1, and answers it last, so the wait usually ends after
//! one round trip.

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// The longest wait for an answer. A round trip over SSH takes tens of milliseconds;
/// a terminal that says nothing costs this once at start (the keys line then offers
/// Alt+Enter for a newline, which every terminal sends).
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

/// What the terminal said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// The protocol's flags: it speaks the protocol.
    Flags,
    /// DA1 without the flags before it: it does not.
    Attributes,
}

/// Whether the terminal answers the kitty keyboard protocol's query. `false` when it
/// does not, when no terminal can be opened, or when no answer came in time. Bytes the
/// user typed during the wait are read with the answer and lost (as with any probe).
pub fn kitty_keyboard() -> bool {
    match ask() {
        Ok(answer) => answer == Some(Answer::Flags),
        Err(e) => {
            tracing::debug!("the keyboard protocol probe failed: {e}");
            false
        }
    }
}

fn ask() -> std::io::Result<Option<Answer>> {
    let mut tty = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
    // The answer must arrive unechoed and unbuffered by lines.
    let was_raw = crossterm::terminal::is_raw_mode_enabled()?;
    if !was_raw {
        crossterm::terminal::enable_raw_mode()?;
    }
    let answer = (|| {
        tty.write_all(b"\x1b[?u\x1b[c")?;
        tty.flush()?;
        read_answer(&mut tty)
    })();
    if !was_raw {
        crossterm::terminal::disable_raw_mode()?;
    }
    answer
}

fn read_answer(tty: &mut std::fs::File) -> std::io::Result<Option<Answer>> {
    let deadline = Instant::now() + PROBE_TIMEOUT;
    let mut seen = Vec::new();
    loop {
        if let Some(answer) = scan(&seen) {
            return Ok(Some(answer));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let mut chunk = [0u8; 256];
        match tty.read(&mut chunk)? {
            0 => return Ok(None),
            n => seen.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The first answer in `bytes`: `CSI ? flags u` or `CSI ? … c`, whichever comes first.
fn scan(bytes: &[u8]) -> Option<Answer> {
    let mut rest = bytes;
    while let Some(start) = rest.windows(3).position(|w| w == b"\x1b[?") {
        let body = &rest[start + 3..];
        let end = body
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
        match body[end] {
            b'u' => return Some(Answer::Flags),
            b'c' => return Some(Answer::Attributes),
            _ => rest = &body[end..],
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_before_da1_mean_the_protocol() {
        assert_eq!(scan(b"\x1b[?1u\x1b[?62;22c"), Some(Answer::Flags));
        assert_eq!(scan(b"\x1b[?0u"), Some(Answer::Flags));
    }

    #[test]
    fn da1_alone_means_no_protocol() {
        assert_eq!(scan(b"\x1b[?62;22c"), Some(Answer::Attributes));
        assert_eq!(scan(b"\x1b[?6c"), Some(Answer::Attributes));
    }

    #[test]
    fn partial_or_foreign_bytes_wait_for_more() {
        assert_eq!(scan(b""), None);
        assert_eq!(scan(b"\x1b[?62;2"), None);
        // A typed key and an unrelated report before the answer are skipped.
        assert_eq!(scan(b"x\x1b[?1049h\x1b[?1u"), Some(Answer::Flags));
    }
}
