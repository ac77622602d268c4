//! `list_dir`: the entries of a directory, optionally several levels deep.

use super::walk::{Found, RuleStack, Stop, Walk, inherited_rules};
use super::{MAX_LIST_ENTRIES, io_failure, located_then};
use crate::Workspace;
use crate::args;
use crate::workspace::{Access, Located, Refusal, is_escape};
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::io;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::sync::LazyLock;
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

/// The arguments of `list_dir`.
#[derive(Deserialize, JsonSchema)]
pub struct ListDirArgs {
    /// Directory to list (default: the workspace)
    path: Option<String>,
    /// Levels to descend (default 1)
    #[schemars(range(min = 1))]
    depth: Option<u64>,
}

#[async_trait]
impl TypedTool for ListDirTool {
    type Args = ListDirArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "list_dir",
                "List directory",
                "List a directory (default: the workspace). Each entry is prefixed [folder] or \
         [file] (with its size); paths are relative to the listed directory. depth > 1 \
         lists subdirectories too and skips what .gitignore excludes. A symlink leading out of \
         the workspace shows as [link]. At most 1000 entries.",
                args::schema::<ListDirArgs>(),
            )
            .read_only()
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: ListDirArgs,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let ListDirArgs { path, depth } = args;
        let shown = path.unwrap_or_else(|| ".".to_owned());
        let depth = usize::try_from(depth.unwrap_or(1)).unwrap_or(usize::MAX);
        let workspace = self.workspace.clone();
        let target = shown.clone();
        located_then(&self.workspace, &target, Access::Read, move |located| {
            list(&workspace, &located, &shown, depth, &cancel)
        })
        .await
    }
}

fn list(
    workspace: &Workspace,
    located: &Located,
    shown: &str,
    depth: usize,
    cancel: &CancellationToken,
) -> ToolResult {
    let opened = match located.dir().metadata(located.rel()) {
        Ok(meta) if !meta.is_dir() => {
            return ToolResult::error(format!(
                "Error: {shown} is a file, not a directory. Use read_file to read it."
            ));
        }
        Ok(_) => located.dir().open_dir(located.rel()),
        Err(e) => Err(e),
    };
    let dir = match opened {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return ToolResult::error(format!(
                "Error: Directory not found: {shown}. List its parent to see what exists."
            ));
        }
        Err(e) => return ToolResult::error(io_failure("list", shown, located, &e)),
    };

    // Deep listings of a project would drown in build output and dependencies. Rules
    // above the listed directory count only up to the workspace root: a stray
    // ~/.gitignore must not hide a workspace's files.
    let filtered = depth > 1;
    let inherited = if filtered && located.tree() == located.workspace() {
        inherited_rules(located.dir(), located.tree(), located.rel())
    } else {
        RuleStack::default()
    };
    let mut walk = Walk {
        max_depth: depth,
        filtered,
        skip_hidden: false,
        cancel,
        unreadable: Vec::new(),
    };
    let mut lines = Vec::new();
    let mut more = false;
    let flow = walk.run(&dir, located.path(), &inherited, &mut |found| {
        if lines.len() == MAX_LIST_ENTRIES {
            more = true;
            return ControlFlow::Break(Stop::Done);
        }
        lines.push(describe(workspace, located.path(), found));
        ControlFlow::Continue(())
    });
    if let ControlFlow::Break(Stop::Cancelled) = flow {
        return ToolResult::error("Cancelled: the listing was aborted.");
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
    if let Some(first) = walk.unreadable.first() {
        out.push_str(&format!(
            "\n\n[{} entries could not be read, e.g. {first}]",
            walk.unreadable.len()
        ));
    }
    ToolResult::text(out).with_details(json!({
        "path": located.path().to_string_lossy(),
        "entries": count,
        "truncated": more,
    }))
}

/// The files and directories of the workspace at `root` for the client's `@path`
/// completion (relative, `/`-separated, directories with a trailing `/`), sorted, at
/// most `max`: the ignore rules applied, hidden entries skipped, and walked like
/// `list_dir` walks, through held-open handles (a symlinked directory is not entered;
/// a rule file that is a FIFO or a link to a device is not read).
pub fn workspace_files(root: &Path, max: usize) -> Vec<String> {
    let Ok(dir) = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority()) else {
        return Vec::new();
    };
    let cancel = CancellationToken::new();
    let mut walk = Walk {
        max_depth: usize::MAX,
        filtered: true,
        skip_hidden: true,
        cancel: &cancel,
        unreadable: Vec::new(),
    };
    let mut out = Vec::new();
    let _ = walk.run(&dir, root, &RuleStack::default(), &mut |found| {
        let mut text = found.rel.to_string_lossy().into_owned();
        if found.file_type.is_dir() {
            text.push('/');
        }
        out.push(text);
        if out.len() >= max {
            return ControlFlow::Break(Stop::Done);
        }
        ControlFlow::Continue(())
    });
    out.sort();
    out
}

/// One line for an entry: `[folder] name/` or `[file] name (size)`; a symlink is
/// described by what it points at, plus its target, and one leading out of the
/// workspace as `[link]`, without looking at what is there.
fn describe(workspace: &Workspace, listed: &Path, found: &Found<'_>) -> String {
    let rel = found.rel.display();
    if !found.file_type.is_symlink() {
        return if found.file_type.is_dir() {
            format!("[folder] {rel}/")
        } else {
            match found.dir.symlink_metadata(found.name) {
                Ok(meta) => format!("[file] {rel} ({})", claw_text::byte_size(meta.len())),
                // It vanished meanwhile.
                Err(_) => format!("[file] {rel} (unreadable)"),
            }
        };
    }
    let target = found
        .dir
        .read_link_contents(found.name)
        .map(|t| format!(" -> {}", t.display()))
        .unwrap_or_default();
    // The link's target is located like any tool path: outside the workspace stays unseen.
    let meta = match workspace.locate(listed.join(found.rel), Access::Read) {
        Ok(to) => to.dir().metadata(to.rel()).map_err(|e| is_escape(&e)),
        Err(Refusal::Outside(_) | Refusal::ReadOnly(_)) => Err(true),
        Err(_) => Err(false),
    };
    match meta {
        Ok(meta) if meta.is_dir() => format!("[folder] {rel}/{target}"),
        Ok(meta) => format!(
            "[file] {rel}{target} ({})",
            claw_text::byte_size(meta.len())
        ),
        Err(true) => format!("[link] {rel}{target} (outside the workspace)"),
        // A dangling symlink or an entry that vanished meanwhile.
        Err(false) => format!("[file] {rel}{target} (unreadable)"),
    }
}
