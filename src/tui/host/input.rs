//! The terminal's input as events: its bytes read from `/dev/tty` and decoded here
//! (see `decode` for why not by crossterm), and its size changes (SIGWINCH).
//!
//! Bytes are read only while [`TermInput::next`] is awaited, so while another program
//! has the terminal (the shell, the editor) and the loop does not ask, every key goes
//! to that program.

mod csi;
mod decode;
mod kitty;
mod mouse;

pub use decode::Decoder;

use crossterm::event::Event;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// The controlling terminal's keys, mouse, pastes, focus changes and resizes.
pub struct TermInput {
    tty: AsyncFd<File>,
    decoder: Decoder,
    ready: VecDeque<Event>,
    resized: Signal,
}

impl TermInput {
    /// Opens the controlling terminal for reading, on its own open file (so that
    /// reading without blocking does not make writes to the shared one fail).
    pub fn open() -> io::Result<Self> {
        let tty = OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
            .open("/dev/tty")?;
        // SAFETY: a `File` owns its descriptor and gives the same one for its whole
        // life, which the `AsyncFd` holding it bounds.
        let tty = unsafe { AsyncFd::register_with_interest(tty, Interest::READABLE) }?;
        Ok(Self {
            tty,
            decoder: Decoder::default(),
            ready: VecDeque::new(),
            resized: signal(SignalKind::window_change())?,
        })
    }

    /// The next event; `None` once the terminal's input has ended (it was hung up).
    /// Cancel-safe: bytes read are decoded at once and kept until asked for.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
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
                            let more = waiting(self.tty.get_ref());
                            self.ready.extend(self.decoder.feed(&buf[..n], more));
                        }
                        Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                        // A hung-up terminal reads as EIO: its input has ended.
                        Ok(Err(e)) if super::terminal::is_hangup(&e) => return None,
                        Ok(Err(e)) => return Some(Err(e)),
                    }
                }
                _ = self.resized.recv() => match crossterm::terminal::size() {
                    Ok((cols, rows)) => self.ready.push_back(Event::Resize(cols, rows)),
                    Err(e) => tracing::debug!("the new terminal size is unknown: {e}"),
                },
            }
        }
    }
}

/// Whether more input is already waiting to be read (an Esc followed at once by more
/// bytes starts a sequence; an Esc alone is the key).
fn waiting(tty: &File) -> bool {
    let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::ZERO).is_ok_and(|n| n > 0)
}
