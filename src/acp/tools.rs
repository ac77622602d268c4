//! How a tool call is shown in the editor: its ACP kind, a title, and the files it
//! touches (with a line where there is one), from the tool's name and arguments alone.

use agent_client_protocol::v1::schema::{ToolCallLocation, ToolKind};
use claw_text::clip;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The separator in MCP tool names: `mcp__SERVER__TOOL`.
const MCP_PREFIX: &str = "mcp__";

/// A tool call as the editor shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallView {
    /// What sort of work it is (the editor picks an icon from it).
    pub kind: ToolKind,
    /// One line saying what it does.
    pub title: String,
    /// The files it reads or changes.
    pub locations: Vec<ToolCallLocation>,
}

/// The kind of the tool `name`: files read, edited, searched; commands executed; the
/// web fetched; a subagent's work is thinking; anything else (MCP tools, messages,
/// cron) is other.
pub fn kind(name: &str) -> ToolKind {
    match name {
        "read_file" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "list_dir" | "web_search" => ToolKind::Search,
        "exec" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        "spawn" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The view of a call of `name` with `args` (which may still be `null` while the model
/// streams them); relative paths are taken from `workspace`.
pub fn view(name: &str, args: &Value, workspace: &Path) -> CallView {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let path = text("path");
    let location = |line: Option<u32>| {
        path.map(|p| {
            let location = ToolCallLocation::new(absolute(p, workspace));
            match line {
                Some(line) => location.line(line),
                None => location,
            }
        })
    };
    let (title, location) = match name {
        "read_file" => {
            let from = args
                .get("offset")
                .and_then(Value::as_u64)
                .filter(|l| *l > 1);
            let line = from.and_then(|l| u32::try_from(l).ok());
            let title = match (path, from) {
                (Some(p), Some(from)) => format!("Read {p} (from line {from})"),
                (Some(p), None) => format!("Read {p}"),
                (None, _) => "Read a file".to_owned(),
            };
            (title, location(line.or(Some(1))))
        }
        "write_file" => (named("Write", path, "a file"), location(None)),
        "edit_file" => (named("Edit", path, "a file"), location(None)),
        "list_dir" => (
            format!("List {}", path.unwrap_or(".")),
            location(None).or_else(|| Some(ToolCallLocation::new(workspace))),
        ),
        "exec" => (
            match text("command") {
                Some(command) => format!("Run: {}", one_line(command)),
                None => "Run a command".to_owned(),
            },
            None,
        ),
        "web_search" => (named("Search the web:", text("query"), "…"), None),
        "web_fetch" => (named("Fetch", text("url"), "a page"), None),
        "spawn" => (
            match (text("label"), text("task")) {
                (Some(label), _) => format!("Subagent {}", one_line(label)),
                (None, Some(task)) => format!("Subagent: {}", one_line(task)),
                (None, None) => "Start a subagent".to_owned(),
            },
            None,
        ),
        "message" => (
            named("Message to", text("channel"), "the user's channel"),
            None,
        ),
        "cron" => (
            named("Cron:", args.get("action").and_then(Value::as_str), "jobs"),
            None,
        ),
        other => (mcp_title(other, args), None),
    };
    CallView {
        kind: kind(name),
        title,
        locations: location.into_iter().collect(),
    }
}

/// `VERB what`, or `VERB fallback` when the argument is not there (yet).
fn named(verb: &str, what: Option<&str>, fallback: &str) -> String {
    format!(
        "{verb} {}",
        what.map_or_else(|| fallback.to_owned(), one_line)
    )
}

/// An MCP tool as `server: tool (its most telling argument)`; any other name as it is.
fn mcp_title(name: &str, args: &Value) -> String {
    let shown = match name
        .strip_prefix(MCP_PREFIX)
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) => format!("{server}: {tool}"),
        None => name.to_owned(),
    };
    let summary = match args {
        Value::Object(map) if !map.is_empty() => claw_text::summarize_args(args),
        _ => String::new(),
    };
    if summary.is_empty() {
        shown
    } else {
        format!("{shown} {summary}")
    }
}

/// The first line of `text`, clipped: a title is one line.
fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    let clipped = clip(first, 120);
    if text.lines().nth(1).is_some() && !clipped.ends_with('…') {
        format!("{clipped} …")
    } else {
        clipped
    }
}

/// `path` as an absolute path: ACP locations are absolute.
pub fn absolute(path: &str, workspace: &Path) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_built_in_tool_has_its_kind_title_and_location() {
        let ws = Path::new("/ws");
        let read = view("read_file", &json!({"path": "src/a.rs", "offset": 40}), ws);
        assert_eq!(read.kind, ToolKind::Read);
        assert_eq!(read.title, "Read src/a.rs (from line 40)");
        assert_eq!(
            read.locations,
            [ToolCallLocation::new("/ws/src/a.rs").line(40)]
        );
        let edit = view("edit_file", &json!({"path": "/abs/b.rs"}), ws);
        assert_eq!(
            (edit.kind, edit.title.as_str()),
            (ToolKind::Edit, "Edit /abs/b.rs")
        );
        assert_eq!(edit.locations, [ToolCallLocation::new("/abs/b.rs")]);
        let run = view("exec", &json!({"command": "cargo test\necho done"}), ws);
        assert_eq!(
            (run.kind, run.title.as_str()),
            (ToolKind::Execute, "Run: cargo test …")
        );
        assert!(run.locations.is_empty());
        assert_eq!(
            view("web_fetch", &json!({"url": "https://x"}), ws).kind,
            ToolKind::Fetch
        );
        assert_eq!(
            view("list_dir", &json!({}), ws).locations,
            [ToolCallLocation::new("/ws")]
        );
        assert_eq!(
            view("spawn", &json!({"task": "t"}), ws).kind,
            ToolKind::Think
        );
        // Arguments still streaming: a title all the same.
        assert_eq!(view("write_file", &Value::Null, ws).title, "Write a file");
    }

    #[test]
    fn mcp_tools_name_their_server() {
        let v = view(
            "mcp__files__read_text",
            &json!({"path": "x.txt"}),
            Path::new("/"),
        );
        assert_eq!(v.kind, ToolKind::Other);
        assert_eq!(v.title, "files: read_text x.txt");
    }
}
