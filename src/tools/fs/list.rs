//! `list_dir`: the entries of a directory, optionally several levels deep.

use super::{MAX_LIST_ENTRIES, human_size, io_failure, resolve_then};
use crate::agent::{Tool, ToolResult, ToolUpdates};
use crate::tools::Workspace;
use crate::tools::args::{optional_str, optional_u64_min};
use async_trait::async_trait;
use ignore::WalkBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde_json::{Value, json};
use std::io;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Lists directories inside the workspace.
pub struct ListDirTool {
    workspace: Arc<Workspace>,
}

impl ListDirTool {
    /// The tool over `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self { workspace }
    }
}

#[async_trait]
impl Tool for ListDirTool {
    fn name(&self) -> &str {
        "list_dir"
    }

    fn label(&self) -> &str {
        "List directory"
    }

    fn description(&self) -> &str {
        "List a directory (default: the workspace). Each entry is prefixed [folder] or \
         [file] (with its size); paths are relative to the listed directory. depth > 1 \
         lists subdirectories too and skips what .gitignore excludes. At most 1000 entries."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: the workspace)"},
                "depth": {"type": "integer", "minimum": 1, "description": "Levels to descend (default 1)"}
            }
        })
    }

    async fn execute(
        &self,
        _call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let parsed = optional_str(&args, "path").and_then(|p| {
            let depth = optional_u64_min(&args, "depth", 1)?.unwrap_or(1);
            Ok((p.unwrap_or(".").to_owned(), depth))
        });
        let (shown, depth) = match parsed {
            Ok(p) => p,
            Err(e) => return ToolResult::error(e),
        };
        let depth = usize::try_from(depth).unwrap_or(usize::MAX);
        let root = self.workspace.root().to_path_buf();
        let target = shown.clone();
        resolve_then(&self.workspace, &target, move |dir| {
            list(&dir, &root, &shown, depth, &cancel)
        })
        .await
    }
}

fn list(
    dir: &Path,
    root: &Path,
    shown: &str,
    depth: usize,
    cancel: &CancellationToken,
) -> ToolResult {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            return ToolResult::error(format!(
                "Error: {shown} is a file, not a directory. Use read_file to read it."
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return ToolResult::error(format!(
                "Error: Directory not found: {shown}. List its parent to see what exists."
            ));
        }
        Err(e) => return ToolResult::error(io_failure("list", shown, &e)),
    }

    let mut walk = WalkBuilder::new(dir);
    walk.max_depth(Some(depth))
        .follow_links(false)
        .standard_filters(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    if depth > 1 {
        // Deep listings of a project would drown in build output and dependencies. Rules
        // above the listed directory count only up to the workspace root: a stray
        // ~/.gitignore must not hide a workspace's files.
        let inherited = inherited_rules(root, dir);
        walk.git_ignore(true)
            .git_exclude(true)
            .ignore(true)
            .require_git(false)
            .filter_entry(move |e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                e.file_name() != ".git"
                    && !inherited.iter().any(|rules| {
                        e.path().starts_with(rules.path())
                            && rules
                                .matched_path_or_any_parents(e.path(), is_dir)
                                .is_ignore()
                    })
            });
    }

    let mut lines = Vec::new();
    let mut unreadable = Vec::new();
    let mut more = false;
    for entry in walk.build() {
        if cancel.is_cancelled() {
            return ToolResult::error("Cancelled: the listing was aborted.");
        }
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                unreadable.push(e.to_string());
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if lines.len() == MAX_LIST_ENTRIES {
            more = true;
            break;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        lines.push(describe(entry.path(), &rel.display().to_string()));
    }

    let count = lines.len();
    let mut out = if lines.is_empty() {
        format!("[{shown} is empty.]")
    } else {
        lines.join("\n")
    };
    if more {
        out.push_str(&format!(
            "\n\n[Showing the first {MAX_LIST_ENTRIES} entries; more exist. List a \
             subdirectory or use a smaller depth to see the rest.]"
        ));
    }
    if let Some(first) = unreadable.first() {
        out.push_str(&format!(
            "\n\n[{} entries could not be read, e.g. {first}]",
            unreadable.len()
        ));
    }
    ToolResult::text(out).with_details(json!({
        "path": dir.to_string_lossy(),
        "entries": count,
        "truncated": more,
    }))
}

/// The ignore rules of the directories from the workspace `root` down to (not including)
/// `dir`; none when `dir` is outside the workspace.
fn inherited_rules(root: &Path, dir: &Path) -> Vec<Gitignore> {
    let Ok(rel) = dir.strip_prefix(root) else {
        return Vec::new();
    };
    let mut rules = Vec::new();
    let mut ancestor = root.to_path_buf();
    for component in rel.components() {
        for name in [".gitignore", ".ignore"] {
            let file = ancestor.join(name);
            if !file.is_file() {
                continue;
            }
            let mut builder = GitignoreBuilder::new(&ancestor);
            // A broken line is skipped, as git does; the rest of the file still counts.
            let _ = builder.add(&file);
            if let Ok(matcher) = builder.build() {
                rules.push(matcher);
            }
        }
        ancestor.push(component);
    }
    rules
}

/// One line for the entry at `path`: `[folder] name/` or `[file] name (size)`; a
/// symlink is described by what it points at, plus its target.
fn describe(path: &Path, rel: &str) -> String {
    let link = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_symlink())
        .and_then(|_| std::fs::read_link(path).ok())
        .map(|target| format!(" -> {}", target.display()))
        .unwrap_or_default();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => format!("[folder] {rel}/{link}"),
        Ok(meta) => format!("[file] {rel}{link} ({})", human_size(meta.len())),
        // A dangling symlink or an entry that vanished meanwhile.
        Err(_) => format!("[file] {rel}{link} (unreadable)"),
    }
}
