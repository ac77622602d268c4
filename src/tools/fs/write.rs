//! `write_file`: creates or replaces a file atomically.

use super::{atomic_write, io_failure, resolve_then};
use crate::agent::{Tool, ToolResult, ToolUpdates};
use crate::tools::Workspace;
use crate::tools::args::required_str;
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Writes whole files inside the workspace.
pub struct WriteFileTool {
    workspace: Arc<Workspace>,
}

impl WriteFileTool {
    /// The tool over `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl Tool for WriteFileTool {
    fn name(&self) -> &str {
        "write_file"
    }

    fn label(&self) -> &str {
        "Write file"
    }

    fn description(&self) -> &str {
        "Write content to a file, creating it (and missing parent directories) or replacing \
         it entirely. Relative paths start at the workspace. To change part of an existing \
         file, use edit_file instead."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to write"},
                "content": {"type": "string", "description": "The complete new file content"}
            },
            "required": ["path", "content"]
        })
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let (shown, content) = match (required_str(&args, "path"), required_str(&args, "content")) {
            (Ok(p), Ok(c)) => (p.to_owned(), c.to_owned()),
            (Err(e), _) | (_, Err(e)) => return ToolResult::error(e),
        };
        // Cancellation is not honoured once started: the write is short and atomic, and
        // stopping halfway would gain nothing.
        let target = shown.clone();
        resolve_then(&self.workspace, &target, move |path| {
            if path.is_dir() {
                return ToolResult::error(format!(
                    "Error: {shown} is a directory; give the path of a file to write."
                ));
            }
            let existed = path.exists();
            if let Some(parent) = path.parent()
                && let Err(e) = std::fs::create_dir_all(parent)
            {
                return ToolResult::error(io_failure(
                    "create the parent directories of",
                    &shown,
                    &e,
                ));
            }
            if let Err(e) = atomic_write(&path, content.as_bytes()) {
                return ToolResult::error(io_failure("write", &shown, &e));
            }
            let bytes = content.len();
            let verb = if existed { "replaced" } else { "created" };
            ToolResult::text(format!("Wrote {bytes} bytes to {shown} ({verb}).")).with_details(
                json!({"path": path.to_string_lossy(), "bytes": bytes, "created": !existed}),
            )
        })
        .await
    }
}
