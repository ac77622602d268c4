//! The file tools: `read_file`, `write_file`, `edit_file` and `list_dir`, all confined
//! to a [`Workspace`].

mod edit;
mod list;
mod read;
mod write;

pub use edit::EditFileTool;
pub use list::ListDirTool;
pub use read::ReadFileTool;
pub use write::WriteFileTool;

use super::Workspace;
use crate::agent::{Tool, ToolResult};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most lines `read_file` returns per call.
pub const MAX_READ_LINES: usize = 2_000;
/// Most bytes of text `read_file` returns per call.
pub const MAX_READ_BYTES: usize = 50 * 1024;
/// Most entries `list_dir` returns.
pub const MAX_LIST_ENTRIES: usize = 1_000;

/// The four file tools over one workspace.
pub fn file_tools(workspace: Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFileTool::new(workspace.clone())),
        Arc::new(WriteFileTool::new(workspace.clone())),
        Arc::new(EditFileTool::new(workspace.clone())),
        Arc::new(ListDirTool::new(workspace)),
    ]
}

/// Writes `bytes` to `path` all at once: a temp file in the same directory, flushed,
/// then renamed over the target, so readers never see a half-written file. An existing
/// file keeps its permissions.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("the path has no parent directory"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path does not name a file"))?;
    let prefix = format!(".{}.", name.to_string_lossy());
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if existing.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // The temp file default is 0600; a new file should get the usual mode (umask applies).
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if let Some(permissions) = existing {
        tmp.as_file().set_permissions(permissions)?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Resolves `shown` in `workspace`, then runs `work` on the real path; both off the
/// async runtime, since resolving follows symlinks on disk.
async fn resolve_then<F>(workspace: &Arc<Workspace>, shown: &str, work: F) -> ToolResult
where
    F: FnOnce(PathBuf) -> ToolResult + Send + 'static,
{
    let workspace = workspace.clone();
    let shown = shown.to_owned();
    blocking(move || match workspace.resolve(&shown) {
        Ok(path) => work(path),
        Err(e) => ToolResult::error(e),
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

/// A message for a failed file operation, worded by what went wrong.
fn io_failure(action: &str, shown: &str, e: &io::Error) -> String {
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

/// A byte count for people: `512 B`, `1.5 KB`, `3.0 MB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MB");
    }
}
