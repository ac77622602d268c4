//! A path [`super::Workspace::locate`] found: the held-open tree to open it beneath, and
//! the last check before a write lands.

use super::Refusal;
use crate::protected::Protected;
use cap_std::fs::Dir;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A path found by [`Workspace::locate`]: a held-open tree and the path inside it.
#[derive(Clone, Debug)]
pub struct Located {
    pub(super) dir: Arc<Dir>,
    pub(super) rel: PathBuf,
    pub(super) path: PathBuf,
    pub(super) tree: PathBuf,
    pub(super) workspace: PathBuf,
    pub(super) protected: Arc<Protected>,
}

impl Located {
    /// Where the path leads, absolute, for messages and details.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The handle of the tree the path is in; open [`Self::rel`] beneath it.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// The path inside the tree (`.` for the tree itself), never absolute and without `..`.
    pub fn rel(&self) -> &Path {
        if self.rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.rel
        }
    }

    /// The directory holding the path (relative to the tree, `.` for its top) and the
    /// path's own name; `None` for the tree itself.
    pub fn parent_and_name(&self) -> Option<(&Path, &OsStr)> {
        let name = self.rel.file_name()?;
        let parent = self.rel.parent().filter(|p| !p.as_os_str().is_empty());
        Some((parent.unwrap_or(Path::new(".")), name))
    }

    /// The top of the tree the path is in: the workspace, or another tree the tools may
    /// reach.
    pub fn tree(&self) -> &Path {
        &self.tree
    }

    /// The workspace directory, for messages.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Checks the path again as [`Workspace::locate`] did: what other writes made
    /// since may have made it protected (a directory now shaped like a git directory).
    pub fn check_again(&self) -> Result<(), Refusal> {
        self.protected
            .check(&self.path)
            .map_err(|refused| Refusal::Protected(refused.to_string()))
    }

    /// Checks again, on the directory handle a write goes through, that `name` in it is
    /// not protected. [`Workspace::locate`] looked at the path's text and the links on
    /// disk; a command running meanwhile may have swapped a directory on the way for a
    /// symlink into `.git` since, and the handle is where the write really lands.
    pub fn check_held(&self, dir: &Dir, name: &OsStr) -> Result<(), Refusal> {
        use std::os::fd::{AsFd, AsRawFd};
        let fd = dir.as_fd().as_raw_fd();
        let held = match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(held) => held,
            // Without /proc the handle cannot be named; the check on the path stands.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(Refusal::Unresolvable(format!(
                    "Cannot tell where {} leads ({e}); nothing was written.",
                    self.path.display()
                )));
            }
        };
        self.protected
            .check(&held.join(name))
            .map_err(|refused| Refusal::Protected(refused.to_string()))
    }
}
