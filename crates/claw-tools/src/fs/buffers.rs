//! An editor's buffers as the file tools' text: when an editor drives claw-tui (ACP with
//! the editor's file system switched on), `read_file` and `edit_file` read a file's text
//! as the editor has it, unsaved changes included, and `write_file` and `edit_file`
//! write into the editor, which shows the change in its buffer.
//!
//! The tools still do everything else themselves: the path is resolved beneath the
//! workspace handle and must be a regular file there (or absent, for a write), protected
//! and pinned paths are refused, parent directories are made through the handle, and
//! every change goes to the checkpoints for `/undo`. Only the bytes come from, or go
//! to, the editor, by the path the handle resolved.
//!
//! The editor opens that path itself, following symlinks, so a link swapped in between
//! the check and the editor's open would lead it out of the workspace. Only a process
//! can do that swap, so the editor is asked only while no command the model started is
//! running (nor a process one left behind), and no command starts until the editor has
//! answered ([`crate::exec::while_no_command_runs`]); otherwise the tool uses the disk
//! through its handle, as without an editor ([`crate::exec::Running::quiet`]). What is
//! left: a program outside the sandbox that the model can drive to change the
//! workspace (an MCP server, a command run in the editor's own terminal) could still
//! race it, which is why it stays off unless the user turns it on.

use crate::workspace::Located;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Where a file's text is read from and written to instead of the disk.
pub trait EditorBuffers: Send + Sync {
    /// The text of the file at `path` (absolute, checked to be a regular file in the
    /// workspace) as the editor has it. Called off the async runtime.
    fn read(&self, path: &Path) -> io::Result<String>;
    /// Makes the file at `path` (absolute, checked) hold `text` in the editor. Called
    /// off the async runtime.
    fn write(&self, path: &Path, text: &str) -> io::Result<()>;
}

/// An editor's buffers, and the commands whose running keeps the file tools from them.
#[derive(Clone)]
pub struct EditorAccess {
    /// The editor.
    pub editor: Arc<dyn EditorBuffers>,
    /// The model's commands (the `exec` tool's): while one runs, the disk is used.
    pub commands: crate::exec::Running,
}

/// The editor's buffers the file tools use, if any.
pub type Buffers = Option<EditorAccess>;

/// The editor for one file operation, and the guard that keeps commands from starting
/// until it is done.
pub(crate) struct Editor {
    editor: Arc<dyn EditorBuffers>,
    _quiet: crate::exec::Quiet,
}

impl Editor {
    /// The editor's buffers.
    pub(crate) fn buffers(&self) -> &dyn EditorBuffers {
        self.editor.as_ref()
    }
}

/// The editor for one operation on the file at `located` when `buffers` are given, the
/// file is in the workspace itself (not one of claw-tui's own read-only trees beside
/// it) and nothing the model started is running; `None`: the disk, through the
/// workspace handle. Blocks while a command is being started; call it off the async
/// runtime.
pub(crate) fn editor_now(buffers: &Buffers, located: &Located) -> Option<Editor> {
    let access = buffers.as_ref()?;
    if !located.path().starts_with(located.workspace()) {
        return None;
    }
    let quiet = access.commands.quiet()?;
    Some(Editor {
        editor: access.editor.clone(),
        _quiet: quiet,
    })
}
