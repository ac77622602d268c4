//! The file tools: `read_file`, `write_file`, `edit_file` and `list_dir`, all confined
//! to a [`Workspace`]: every path is opened beneath a held-open directory handle.

mod buffers;
mod change;
mod edit;
mod list;
pub mod own;
mod read;
mod restore;
mod walk;
mod write;

pub use buffers::{Buffers, EditorAccess, EditorBuffers};
pub use change::{ChangeKind, DiffLine, FileChange, Hunk, LineKind};
pub use edit::EditFileTool;
pub use list::{ListDirTool, workspace_files};
pub use read::ReadFileTool;
pub use restore::{read_current, restore_file};
pub use write::WriteFileTool;

use super::Workspace;
use super::workspace::{Access, Located, is_escape};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};
use claw_agent::{Tool, ToolResult};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

/// Most lines `read_file` returns per call.
pub const MAX_READ_LINES: usize = 2_000;
/// Most bytes of text `read_file` returns per call.
pub const MAX_READ_BYTES: usize = 50 * 1024;
/// Most entries `list_dir` returns.
pub const MAX_LIST_ENTRIES: usize = 1_000;
/// The largest file whose content is kept before a change (for undo and the diff).
pub const MAX_KEPT_BYTES: u64 = 32 * 1024 * 1024;

/// What a file held just before a tool changed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prior<'a> {
    /// It did not exist.
    Absent,
    /// This content.
    Content(&'a [u8]),
    /// It existed, but its content was not kept (more than [`MAX_KEPT_BYTES`], or not
    /// a readable regular file): the change cannot be undone.
    NotKept,
}

/// The key of a file tool's result details that holds, when the change cannot be
/// undone, the note saying why (the chat shows it on the call's card).
pub const NOT_UNDOABLE: &str = "not_undoable";

/// What a file held before a change could not be kept, so the change could not be
/// undone (see [`ChangeObserver::before_change`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unkept {
    /// Why, in words (a full disk's error, the file's size).
    pub reason: String,
    /// The change must not be made then (the user's setting).
    pub refuse: bool,
}

/// Told about every change the file tools make, just before and just after it (the
/// checkpoint store listens, to make the change undoable). Called off the async runtime.
pub trait ChangeObserver: Send + Sync {
    /// The file at `path` (absolute) is about to change; `prior` is what it holds now.
    /// `Err` when that could not be kept: the tool says so before it changes the file,
    /// or, when `refuse` is set, leaves the file alone.
    fn before_change(&self, path: &Path, prior: Prior<'_>) -> Result<(), Unkept>;
    /// The file at `path` now holds `after`.
    fn after_change(&self, path: &Path, after: &[u8]);
}

/// Tells `observer` that the file at `located` (`shown` to the model) is about to
/// change from `prior`. `Ok` to go on, with a note for the tool's result when the
/// change cannot be undone; `Err` with the tool's result when it must not be made.
fn before_change(
    observer: &Observer,
    located: &Located,
    shown: &str,
    prior: Prior<'_>,
    verb: &str,
) -> Result<Option<String>, claw_agent::ToolResult> {
    let Some(observer) = observer else {
        return Ok(None);
    };
    match observer.before_change(located.path(), prior) {
        Ok(()) => Ok(None),
        Err(Unkept {
            reason,
            refuse: true,
        }) => Err(claw_agent::ToolResult::error(format!(
            "Error: {shown} was not {verb}: its current content cannot be kept for /undo \
             ({reason}), and [session] checkpoint_failure = \"refuse\" leaves a file \
             unchanged then. Nothing was changed."
        ))),
        Err(Unkept { reason, .. }) => Ok(Some(format!(
            "Note: the content {shown} had before this change could not be kept for /undo \
             ({reason}): this change cannot be undone."
        ))),
    }
}

/// The observer of a tool's changes, if any.
pub type Observer = Option<Arc<dyn ChangeObserver>>;

/// The four file tools over one workspace.
pub fn file_tools(workspace: Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    file_tools_observed(workspace, None)
}

/// The four file tools, with `observer` told about every change `write_file` and
/// `edit_file` make.
pub fn file_tools_observed(workspace: Arc<Workspace>, observer: Observer) -> Vec<Arc<dyn Tool>> {
    file_tools_in(workspace, observer, None)
}

/// The four file tools, with `observer` told about every change, reading and writing
/// text through `buffers` (an editor's) when given.
pub fn file_tools_in(
    workspace: Arc<Workspace>,
    observer: Observer,
    buffers: Buffers,
) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFileTool::new(workspace.clone()).with_buffers(buffers.clone())),
        Arc::new(
            WriteFileTool::new(workspace.clone())
                .observed(observer.clone())
                .with_buffers(buffers.clone()),
        ),
        Arc::new(
            EditFileTool::new(workspace.clone())
                .observed(observer)
                .with_buffers(buffers),
        ),
        Arc::new(ListDirTool::new(workspace)),
    ]
}

/// The content of the regular file `name` in `dir` (at most [`MAX_KEPT_BYTES`]; a
/// larger one is reported by size) and its mode; `None` when it is something else.
/// Opened without blocking, so a pipe cannot hang the call.
fn read_regular(dir: &Dir, name: &OsStr) -> io::Result<Option<(Kept, u32)>> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt as _;
    let file = open_nonblocking(dir, Path::new(name))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    let mode = meta.permissions().mode() & 0o7777;
    if meta.len() > MAX_KEPT_BYTES {
        return Ok(Some((Kept::TooLarge(meta.len()), mode)));
    }
    let mut bytes = Vec::new();
    file.take(MAX_KEPT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_KEPT_BYTES {
        return Ok(Some((Kept::TooLarge(bytes.len() as u64), mode)));
    }
    Ok(Some((Kept::Bytes(bytes), mode)))
}

/// A file's content as read before a change.
enum Kept {
    /// All of it.
    Bytes(Vec<u8>),
    /// Too large to keep: its size.
    TooLarge(u64),
}

impl Kept {
    fn prior(&self) -> Prior<'_> {
        match self {
            Kept::Bytes(bytes) => Prior::Content(bytes),
            Kept::TooLarge(_) => Prior::NotKept,
        }
    }
}

/// Replaces the file `name` in `dir` all at once: a temp file beside it, flushed, then
/// renamed over it, so readers never see a half-written file; both happen in the same
/// held-open directory. `mode` is the replaced file's (kept exactly); a new file gets
/// the usual 0666 less the umask.
fn replace_file(dir: &Dir, name: &OsStr, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    // Keep the temp name within NAME_MAX however long the target's name is.
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    let mut options = OpenOptions::new();
    options
        .write(true)
        .create_new(true)
        .mode(mode.unwrap_or(0o666));
    let mut attempts = 0;
    let (tmp, file) = loop {
        let tmp = format!(".{stem}.{:08x}.tmp", fastrand::u32(..));
        match dir.open_with(&tmp, &options) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => attempts += 1,
            Err(e) => return Err(e),
        }
    };
    let written = fill(file, bytes, mode).and_then(|()| dir.rename(&tmp, dir, name));
    if written.is_err() {
        // Best effort: the temp file is ours and useless now.
        let _ = dir.remove_file(&tmp);
    }
    written
}

/// Gives the new `file` its exact `mode` (the umask applied at creation), its content,
/// and syncs it.
fn fill(mut file: cap_std::fs::File, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    if let Some(mode) = mode {
        file.set_permissions(Permissions::from_mode(mode))?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

/// Opens the file at `path` in `dir` for reading without blocking, so a pipe or device
/// in place of a file cannot hang the call; look at its metadata before reading.
fn open_nonblocking(dir: &Dir, path: &Path) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    Ok(dir.open_with(path, &options)?.into_std())
}

/// Locates `shown` in `workspace` for `access`, then runs `work` on it; both off the
/// async runtime, since locating and opening touch the disk.
async fn located_then<F>(
    workspace: &Arc<Workspace>,
    shown: &str,
    access: Access,
    work: F,
) -> ToolResult
where
    F: FnOnce(Located) -> ToolResult + Send + 'static,
{
    let workspace = workspace.clone();
    let shown = shown.to_owned();
    blocking(move || match workspace.locate(&shown, access) {
        Ok(located) => work(located),
        Err(refusal) => ToolResult::error(refusal.to_string()),
    })
    .await
}

/// Runs blocking file work off the async runtime.
async fn blocking<F>(work: F) -> ToolResult
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        ToolResult::error(format!(
            "Error: the file operation stopped unexpectedly ({e}). Try again."
        ))
    })
}

/// A message for a failed file operation at `located`, worded by what went wrong.
fn io_failure(action: &str, shown: &str, located: &Located, e: &io::Error) -> String {
    if is_escape(e) {
        return format!(
            "Access denied: {shown} leads outside the workspace {} through a symlink or \
             `..` (checked as it was opened). Use a path inside the workspace; to allow \
             this, the user can set allow_outside_workspace = true under [tools] in the \
             config.",
            located.workspace().display()
        );
    }
    if e.raw_os_error() == Some(Errno::ELOOP as i32) {
        return format!(
            "Error: could not {action} {shown}: too many levels of symbolic links (a loop, \
             or a /proc link, which the file tools do not follow)."
        );
    }
    match e.kind() {
        io::ErrorKind::NotFound => {
            format!("Error: {shown} not found. Check the path; list_dir shows what exists.")
        }
        io::ErrorKind::PermissionDenied => {
            format!("Error: permission denied while trying to {action} {shown}.")
        }
        _ => format!("Error: could not {action} {shown}: {e}"),
    }
}
