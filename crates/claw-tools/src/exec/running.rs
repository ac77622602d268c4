//! The commands one `exec` tool has running, counted from their start until nothing of
//! them is left (a process a command left in the background counts until it is gone),
//! and a lock that keeps new ones from starting. The file tools ask an editor to open a
//! path only while none runs and none can start ([`Running::quiet`]): a command is the
//! only thing the model can use to swap a symlink in after the path was checked.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{OwnedRwLockReadGuard, RwLock};

/// The commands of one `exec` tool; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Running {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    count: AtomicUsize,
    /// Held shared while an editor opens a path; a command takes it alone to start.
    starts: Arc<RwLock<()>>,
}

/// One command, counted until dropped.
#[derive(Debug)]
pub(super) struct Counted(Arc<Inner>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// While held, no command of the tool starts.
#[derive(Debug)]
pub struct Quiet {
    _starts: OwnedRwLockReadGuard<()>,
}

impl Running {
    /// Counts a command about to start, once no [`Quiet`] is held.
    pub(super) async fn start(&self) -> Counted {
        let _starting = self.inner.starts.clone().write_owned().await;
        self.inner.count.fetch_add(1, Ordering::SeqCst);
        Counted(self.inner.clone())
    }

    /// How many commands run now (with what they left behind).
    pub fn count(&self) -> usize {
        self.inner.count.load(Ordering::SeqCst)
    }

    /// `Some` when no command runs: none starts until the guard is dropped. Blocks
    /// while a command is being started; call it off the async runtime.
    pub fn quiet(&self) -> Option<Quiet> {
        let starts = futures::executor::block_on(self.inner.starts.clone().read_owned());
        (self.count() == 0).then_some(Quiet { _starts: starts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn quiet_only_while_nothing_runs_and_nothing_starts_meanwhile() {
        let running = Running::default();
        let quiet = tokio::task::spawn_blocking({
            let running = running.clone();
            move || running.quiet()
        })
        .await
        .unwrap()
        .expect("nothing runs");
        // A start waits for the quiet guard.
        let starting = tokio::spawn({
            let running = running.clone();
            async move { running.start().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!starting.is_finished());
        assert_eq!(running.count(), 0);
        drop(quiet);
        let counted = starting.await.unwrap();
        assert_eq!(running.count(), 1);
        let none = tokio::task::spawn_blocking({
            let running = running.clone();
            move || running.quiet().is_none()
        });
        assert!(none.await.unwrap(), "not quiet while a command runs");
        drop(counted);
        assert_eq!(running.count(), 0);
    }
}
