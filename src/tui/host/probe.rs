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

/// Reads until the DA1 answer, which comes last: reading less would leave it in the
/// input, echoed once raw mode is off and taken for typed keys.
fn read_answer(tty: &mut std::fs::File) -> std::io::Result<Option<Answer>> {
    let deadline = Instant::now() + PROBE_TIMEOUT;
    let mut seen = Vec::new();
    loop {
        let found = scan(&seen);
        if found.da1 {
            return Ok(Some(if found.flags {
                Answer::Flags
            } else {
                Answer::Attributes
            }));
        }
        // Without DA1 by the deadline, the flags alone still say the protocol is there.
        let on_time = found.flags.then_some(Answer::Flags);
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(on_time);
        }
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => return Ok(on_time),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let mut chunk = [0u8; 256];
        match tty.read(&mut chunk)? {
            0 => return Ok(on_time),
            n => seen.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Which answers some bytes hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Found {
    /// The protocol's flags, `CSI ? flags u`.
    flags: bool,
    /// The device attributes, `CSI ? … c`.
    da1: bool,
}

/// The answers in `bytes`; an unfinished sequence at the end is not one yet.
fn scan(bytes: &[u8]) -> Found {
    let mut found = Found::default();
    let mut rest = bytes;
    while let Some(start) = rest.windows(3).position(|w| w == b"\x1b[?") {
        let body = &rest[start + 3..];
        let Some(end) = body
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))
        else {
            break;
        };
        match body[end] {
            b'u' => found.flags = true,
            b'c' => found.da1 = true,
            _ => {}
        }
        rest = &body[end..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Found = Found {
        flags: true,
        da1: true,
    };

    #[test]
    fn the_flags_before_da1_mean_the_protocol() {
        assert_eq!(scan(b"\x1b[?1u\x1b[?62;22c"), BOTH);
        // The flags without DA1 yet: the reading goes on until DA1 (or the deadline).
        let flags_only = scan(b"\x1b[?0u");
        assert!(flags_only.flags && !flags_only.da1);
    }

    #[test]
    fn da1_alone_means_no_protocol() {
        let da1 = Found {
            flags: false,
            da1: true,
        };
        assert_eq!(scan(b"\x1b[?62;22c"), da1);
        assert_eq!(scan(b"\x1b[?6c"), da1);
    }

    #[test]
    fn partial_or_foreign_bytes_wait_for_more() {
        assert_eq!(scan(b""), Found::default());
        assert_eq!(scan(b"\x1b[?62;2"), Found::default());
        let flags = Found {
            flags: true,
            da1: false,
        };
        assert_eq!(scan(b"\x1b[?1u\x1b[?62"), flags);
        // A typed key and an unrelated report before the answers are skipped.
        assert_eq!(scan(b"x\x1b[?1049h\x1b[?1u\x1b[?62;22c"), BOTH);
    }
}
