//! How claw-tui opens the project's files it reads for itself: the instructions files,
//! the memory file, skills and custom commands.
//!
//! The model can write the workspace (file tools, commands), so a file there may be a
//! symlink it planted to a file outside, which `read_file` would refuse. Each such file
//! is opened like `read_file` opens it, beneath a held-open directory
//! ([`OwnTree`]): a file in the workspace beneath the workspace; a file in a directory
//! above it, up to the git root (the user's own tree, which the model cannot write),
//! beneath the git root, so no symlink leads out of the repository. A symlink that leads
//! out is skipped with a warning the user sees. Files outside both (the config dir, the
//! home directory's skills and commands) are the user's own and read as they are. Every
//! read takes a regular file only (a FIFO or a device is refused, never waited on), and
//! at most the bytes asked for.

use crate::tools::fs::own::{Capped, OwnFileError, OwnTree, read_outside};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The trees the project's files are opened beneath.
#[derive(Debug)]
pub struct ProjectFiles {
    /// The workspace as given, when its real path differs (a path under it is taken to
    /// be under the real one).
    given: Option<PathBuf>,
    /// The workspace.
    workspace: Result<OwnTree, PathBuf>,
    /// The git root, when it is above the workspace.
    top: Option<Result<OwnTree, PathBuf>>,
}

impl ProjectFiles {
    /// The trees of `workspace` (and of its git root above it, if any).
    pub fn open(workspace: &Path) -> Self {
        let chain = super::project_chain(workspace);
        let root = chain
            .last()
            .cloned()
            .unwrap_or_else(|| workspace.to_path_buf());
        let open = |dir: PathBuf| OwnTree::open(&dir).map_err(|_| dir);
        let top = chain.first().filter(|top| **top != root).cloned().map(open);
        Self {
            given: (workspace != root).then(|| workspace.to_path_buf()),
            workspace: open(root),
            top,
        }
    }

    /// `path` with the workspace as given replaced by its real path.
    fn real<'a>(&self, path: &'a Path) -> std::borrow::Cow<'a, Path> {
        let real_root = match &self.workspace {
            Ok(tree) => tree.root(),
            Err(dir) => dir.as_path(),
        };
        match self.given.as_deref().map(|given| path.strip_prefix(given)) {
            Some(Ok(rel)) => std::borrow::Cow::Owned(real_root.join(rel)),
            _ => std::borrow::Cow::Borrowed(path),
        }
    }

    /// The tree `path` must be opened beneath, when it is in the workspace or the
    /// project above it: `Some(Err(dir))` when that tree could not be opened.
    fn tree_for(&self, path: &Path) -> Option<Result<&OwnTree, &Path>> {
        within(&self.workspace, path)
            .or_else(|| self.top.as_ref().and_then(|top| within(top, path)))
    }

    /// Whether `path` (absolute, without `..`) is in the workspace or the project above
    /// it (up to the git root), opened beneath its tree.
    pub fn holds(&self, path: &Path) -> bool {
        self.tree_for(&self.real(path)).is_some()
    }

    /// Whether `path` (absolute, without `..`) is in the workspace itself: a file the
    /// model may have written.
    pub fn in_workspace(&self, path: &Path) -> bool {
        within(&self.workspace, &self.real(path)).is_some()
    }

    /// The first `max` bytes of the file at `path` (absolute) and its size; `Ok(None)`
    /// when there is none. Refused when it leads out of its tree or is not a regular
    /// file.
    pub fn read(&self, path: &Path, max: u64) -> Result<Option<Capped>, OwnFileError> {
        let path = self.real(path);
        match self.tree_for(&path) {
            Some(Ok(tree)) => tree.read(&path, max),
            Some(Err(dir)) => Err(unavailable(&path, dir)),
            None => read_outside(&path, max),
        }
    }

    /// The names in the directory at `path` (absolute), sorted; `Ok(None)` when there is
    /// no directory there.
    pub fn entries(&self, path: &Path) -> Result<Option<Vec<OsString>>, OwnFileError> {
        let path = self.real(path);
        match self.tree_for(&path) {
            Some(Ok(tree)) => tree.entries(&path),
            Some(Err(dir)) => Err(unavailable(&path, dir)),
            None => outside_entries(&path),
        }
    }
}

/// `tree` when `path` is in it (or the directory it failed to open, when it is there).
fn within<'a>(
    tree: &'a Result<OwnTree, PathBuf>,
    path: &Path,
) -> Option<Result<&'a OwnTree, &'a Path>> {
    match tree {
        Ok(tree) => tree.holds(path).then_some(Ok(tree)),
        Err(dir) => path.starts_with(dir).then_some(Err(dir.as_path())),
    }
}

/// The error for a file in a tree that could not be opened.
fn unavailable(path: &Path, dir: &Path) -> OwnFileError {
    OwnFileError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!("{} cannot be opened", dir.display())),
    }
}

/// The names in the directory at `path` outside the project, sorted.
fn outside_entries(path: &Path) -> Result<Option<Vec<OsString>>, OwnFileError> {
    let io = |source| OwnFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let listing = match std::fs::read_dir(path) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut names = Vec::new();
    for entry in listing {
        names.push(entry.map_err(io)?.file_name());
    }
    names.sort();
    Ok(Some(names))
}

/// A file's bytes as text: invalid UTF-8 replaced, a character cut at the end of a
/// capped read dropped (that is the cap's doing, not the file's).
pub fn text_of(capped: Capped) -> String {
    match String::from_utf8(capped.bytes) {
        Ok(text) => text,
        Err(e) => {
            let utf8 = e.utf8_error();
            let mut bytes = e.into_bytes();
            if utf8.error_len().is_none() {
                bytes.truncate(utf8.valid_up_to());
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}
