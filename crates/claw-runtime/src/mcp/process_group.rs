//! The process group of a stdio server: what the server started (`npx` → `node`) lives
//! in it, so stopping the server stops the whole group, also when the handshake never
//! finished (rmcp stops only the process it started).

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// A stdio server's process group, stopped when dropped unless handed over with
/// [`Self::disarm`].
#[derive(Debug)]
pub struct GroupGuard {
    group: Option<i32>,
}

impl GroupGuard {
    /// Guards the group led by process `leader` (the server was started with
    /// `process_group(0)`, so its id is the group's).
    pub fn new(leader: Option<u32>) -> Self {
        Self {
            group: leader.and_then(|id| i32::try_from(id).ok()),
        }
    }

    /// The group id; the guard no longer stops it when dropped.
    pub fn disarm(mut self) -> Option<i32> {
        self.group.take()
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            stop(group);
        }
    }
}

/// Sends SIGTERM to every process of `group`; one already gone is no error.
pub fn stop(group: i32) {
    let _ = killpg(Pid::from_raw(group), Signal::SIGTERM);
}
