//! An editor's buffers as the file tools' text: when an editor drives claw-tui (ACP with
//! the editor's file system switched on), `read_file` and `edit_file` read a file's text
//! as the editor has it, unsaved changes included, and `write_file` and `edit_file`
//! write into the editor, which shows the change in its buffer.
//!
//! The tools still do everything else themselves: the path is resolved beneath the
//! workspace handle and must be a regular file there (or absent, for a write), protected
//! and pinned paths are refused, parent directories are made through the handle, and
//! every change goes to the checkpoints for `/undo`. Only the bytes come from, or go
//! to, the editor, by the path the handle resolved. The editor opens that path itself,
//! following symlinks, so a link swapped in between the check and the editor's open
//! leads it out of the workspace: that is why it is off unless the user turns it on.

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

/// The editor's buffers the file tools use, if any.
pub type Buffers = Option<Arc<dyn EditorBuffers>>;
