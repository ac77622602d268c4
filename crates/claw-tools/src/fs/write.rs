//! `write_file`: creates or replaces a file atomically.

use super::change::{ChangeKind, FileChange};
use super::{
    Buffers, Kept, NOT_UNDOABLE, Observer, Prior, before_change, io_failure, located_then,
    read_regular, replace_file,
};
use crate::Workspace;
use crate::args;
use crate::workspace::{Access, Located, is_escape};
use async_trait::async_trait;
use cap_std::fs::PermissionsExt;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::sync::LazyLock;
use tokio_util::sync::CancellationToken;

/// Writes whole files inside the workspace.
pub struct WriteFileTool {
    workspace: Arc<Workspace>,
    observer: Observer,
    buffers: Buffers,
}

impl WriteFileTool {
    /// The tool over `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self {
            workspace,
            observer: None,
            buffers: None,
        }
    }

    /// The same tool, telling `observer` about each change it makes.
    pub fn observed(mut self, observer: Observer) -> Self {
        self.observer = observer;
        self
    }

    /// The same tool, writing into an editor's `buffers` (when given) instead of the
    /// disk, and taking what a file held from them.
    pub fn with_buffers(mut self, buffers: Buffers) -> Self {
        self.buffers = buffers;
        self
    }
}

/// The arguments of `write_file`.
#[derive(Deserialize, JsonSchema)]
pub struct WriteFileArgs {
    /// File to write
    path: String,
    /// The complete new file content
    content: String,
}

#[async_trait]
impl TypedTool for WriteFileTool {
    type Args = WriteFileArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "write_file",
                "Write file",
                "Write content to a file, creating it (and missing parent directories) or replacing \
         it entirely. Relative paths start at the workspace. To change part of an existing \
         file, use edit_file instead.",
                args::schema::<WriteFileArgs>(),
            )
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: WriteFileArgs,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let WriteFileArgs {
            path: shown,
            content,
        } = args;
        // Cancellation is not honoured once started: the write is short and atomic, and
        // stopping halfway would gain nothing.
        let target = shown.clone();
        let observer = self.observer.clone();
        let buffers = self.buffers.clone();
        located_then(&self.workspace, &target, Access::Write, move |located| {
            write(&located, &shown, &content, &observer, &buffers)
        })
        .await
    }
}

fn write(
    located: &Located,
    shown: &str,
    content: &str,
    observer: &Observer,
    buffers: &Buffers,
) -> ToolResult {
    // The editor only while nothing the model started can swap a link in meanwhile.
    let editor = super::buffers::editor_now(buffers, located);
    let buffers = editor.as_ref().map(super::buffers::Editor::buffers);
    let is_dir = || {
        ToolResult::error(format!(
            "Error: {shown} is a directory; give the path of a file to write."
        ))
    };
    let Some((parent, name)) = located.parent_and_name() else {
        return is_dir();
    };
    // Checked again under this guard before anything is made, and once more below on
    // the directory handle the write goes through.
    let _shaping = crate::protected::serialize_git_shaped(located.rel());
    if let Err(refused) = located.check_again() {
        return ToolResult::error(refused.to_string());
    }
    let tree = located.dir();
    if tree.metadata(located.rel()).is_ok_and(|m| m.is_dir()) {
        return is_dir();
    }
    if let Err(e) = tree.create_dir_all(parent) {
        // "Exists" may hide that what exists is a symlink leading out: say that instead.
        let e = match tree.metadata(parent) {
            Err(beneath) if is_escape(&beneath) => beneath,
            _ => e,
        };
        return ToolResult::error(io_failure(
            "create the parent directories of",
            shown,
            located,
            &e,
        ));
    }
    let dir = match tree.open_dir(parent) {
        Ok(dir) => dir,
        Err(e) => return ToolResult::error(io_failure("write", shown, located, &e)),
    };
    if let Err(refused) = located.check_held(&dir, name) {
        return ToolResult::error(refused.to_string());
    }
    // Looked at again in the directory now held open: that is where the rename happens.
    let existing = match dir.metadata(name) {
        Ok(meta) if meta.is_dir() => return is_dir(),
        Ok(meta) => Some(meta.permissions().mode() & 0o7777),
        Err(_) => None,
    };
    // What is replaced, for the diff and for undo; something that is not a regular
    // file (a pipe) is replaced without being read.
    let old = match existing {
        Some(_) => read_regular(&dir, name)
            .ok()
            .flatten()
            .map(|(kept, _)| kept),
        None => None,
    };
    // The editor's text of a file it may have open, unsaved changes included.
    let old = match (buffers, old) {
        (Some(buffers), Some(Kept::Bytes(_))) => buffers
            .read(located.path())
            .ok()
            .map(|text| Kept::Bytes(text.into_bytes())),
        (_, old) => old,
    };
    let prior = match (&old, existing) {
        (Some(kept), _) => kept.prior(),
        (None, None) => Prior::Absent,
        (None, Some(_)) => Prior::NotKept,
    };
    // Before the file changes: a change that cannot be undone is said, or not made.
    let note = match before_change(observer, located, shown, prior, "written") {
        Ok(note) => note,
        Err(refused) => return refused,
    };
    // Only a regular file, or none, is the editor's to write: it would block on a FIFO.
    let regular_or_none = existing.is_none() || old.is_some();
    let written = match buffers.filter(|_| regular_or_none) {
        Some(buffers) => buffers.write(located.path(), content),
        None => replace_file(&dir, name, content.as_bytes(), existing),
    };
    if let Err(e) = written {
        return ToolResult::error(io_failure("write", shown, located, &e));
    }
    if let Some(observer) = observer {
        observer.after_change(located.path(), content.as_bytes());
    }
    let bytes = content.len();
    let created = existing.is_none();
    let change = match (&old, created) {
        (_, true) => FileChange::between(shown, None, Some(content.as_bytes()), true),
        (Some(Kept::Bytes(before)), false) => {
            FileChange::between(shown, Some(before), Some(content.as_bytes()), true)
        }
        (_, false) => FileChange::omitted(
            shown,
            ChangeKind::Overwritten,
            "the replaced content was too large or unreadable to show",
        ),
    };
    let verb = if created { "created" } else { "replaced" };
    let mut text = format!("Wrote {bytes} bytes to {shown} ({verb}).");
    if let Some(note) = &note {
        text = format!("{note}\n{text}");
    }
    let mut details = json!({
        "path": located.path().to_string_lossy(),
        "bytes": bytes,
        "created": created,
        "change": change.to_value(),
    });
    if let Some(note) = note {
        details[NOT_UNDOABLE] = json!(note);
    }
    ToolResult::text(text).with_details(details)
}
