//! The terminal's input as events: its bytes read from `/dev/tty` and decoded here
//! (see `decode` for why not by crossterm), and its size changes (SIGWINCH).
//!
//! Bytes are read only while [`TermInput::next`] is awaited, so while another program
//! has the terminal (the shell, the editor) and the loop does not ask, every key goes
//! to that program.

mod csi;
mod decode;
mod escape;
mod kitty;
mod mouse;

pub use decode::Decoder;

use crossterm::event::Event;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::time::{Instant, sleep_until};

/// How long the rest of a sequence may take after its Esc before the Esc is taken for
/// the key: a terminal writes a sequence at once, but a slow link may split it.
const SEQUENCE_GAP: Duration = Duration::from_millis(25);

/// The controlling terminal's keys, mouse, pastes, focus changes and resizes.
pub struct TermInput {
    tty: AsyncFd<File>,
    decoder: Decoder,
    ready: VecDeque<Event>,
    resized: Signal,
    /// When bytes held for the rest of a sequence are decoded as they are.
    flush_at: Option<Instant>,
}

impl TermInput {
    /// Opens the terminal for reading, on an open file of its own (so that reading
    /// without blocking does not make writes to the shared one fail): the controlling
    /// terminal, or else standard input when that is a terminal (a process started
    /// without one, by `setsid`). A failure is said as such, never as a hang-up, so the
    /// terminal's modes are still given back.
    pub fn open() -> io::Result<Self> {
        let open = |path: &str| {
            OpenOptions::new()
                .read(true)
                .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
                .open(path)
        };
        let tty = open("/dev/tty")
            .or_else(|e| {
                if std::io::stdin().is_terminal() {
                    open("/proc/self/fd/0")
                } else {
                    Err(e)
                }
            })
            .map_err(|e| {
                io::Error::other(format!(
                    "cannot read the terminal ({e}): the client needs one; for a run \
                     without it, use -p \"PROMPT\" or --mode json"
                ))
            })?;
        // SAFETY: a `File` owns its descriptor and gives the same one for its whole
        // life, which the `AsyncFd` holding it bounds.
        let tty = unsafe { AsyncFd::register_with_interest(tty, Interest::READABLE) }?;
        Ok(Self {
            tty,
            decoder: Decoder::default(),
            ready: VecDeque::new(),
            resized: signal(SignalKind::window_change())?,
            flush_at: None,
        })
    }

    /// The next event; `None` once the terminal's input has ended (it was hung up).
    /// Cancel-safe: bytes read are decoded at once and kept until asked for.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            // A deadline kept across calls: the loop drops this future whenever another
            // of its branches wins (every streamed token), and a timer started afresh
            // each time would never run out while an answer streams.
            let flush_at = self.flush_at;
            tokio::select! {
                guard = self.tty.readable() => {
                    let mut guard = match guard {
                        Ok(guard) => guard,
                        Err(e) => return Some(Err(e)),
                    };
                    let mut buf = [0u8; 4096];
                    match guard.try_io(|tty| tty.get_ref().read(&mut buf)) {
                        Err(_would_block) => continue,
                        Ok(Ok(0)) => return None,
                        Ok(Ok(n)) => {
                            self.ready.extend(self.decoder.feed(&buf[..n], true));
                            self.flush_at = self
                                .decoder
                                .undecided()
                                .then(|| Instant::now() + SEQUENCE_GAP);
                        }
                        Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                        // A hung-up terminal reads as EIO: its input has ended.
                        Ok(Err(e)) if super::terminal::is_hangup(&e) => return None,
                        Ok(Err(e)) => return Some(Err(e)),
                    }
                }
                Some(()) = self.resized.recv() => match crossterm::terminal::size() {
                    Ok((cols, rows)) => self.ready.push_back(Event::Resize(cols, rows)),
                    Err(e) => tracing::debug!("the new terminal size is unknown: {e}"),
                },
                // Nothing more came: a lone Esc is the key, `ESC [` Alt+[.
                () = sleep_until(flush_at.unwrap_or_else(Instant::now)), if flush_at.is_some() => {
                    self.ready.extend(self.decoder.feed(&[], false));
                    // Still undecided (a long paste under way): wait for its bytes.
                    self.flush_at = None;
                }
            }
        }
    }
}
