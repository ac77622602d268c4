//! The tool calls of a session's subagents, kept beside the session file (`.subagents`,
//! one JSON line per finished call): the session records only the main agent's
//! messages, so this is what puts a subagent's calls back under its `spawn` call in the
//! tool tree when the session is opened again. Appended like the inbox, without the
//! session's lock (one whole line per write).

use super::SessionError;
use crate::agent::ToolResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One finished call of a subagent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubagentCall {
    /// The main agent's `spawn` call that started the subagent.
    pub parent_call_id: String,
    /// The subagent, e.g. `subagent-2`.
    pub subagent_id: String,
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// Its arguments.
    pub args: Value,
    /// Its result.
    pub result: ToolResult,
}

/// The file of the subagents' calls of the session file `session`.
pub fn subagent_calls_path(session: &Path) -> PathBuf {
    session.with_extension("subagents")
}

/// Appends `call` to the subagents' calls of the session file `session`.
pub fn record_subagent_call(session: &Path, call: &SubagentCall) -> Result<(), SessionError> {
    let path = subagent_calls_path(session);
    let io = |e| SessionError::io(&path, e);
    let mut line = serde_json::to_string(call).map_err(|e| io(std::io::Error::other(e)))?;
    line.push('\n');
    let mut file = crate::private_fs::open(
        &path,
        OpenOptions::new().create(true).append(true).read(true),
    )
    .map_err(io)?;
    // A line torn by a crash gets its end, so it does not swallow this one.
    if !ends_with_newline(&mut file).map_err(io)? {
        line.insert(0, '\n');
    }
    file.write_all(line.as_bytes()).map_err(io)
}

/// Whether the file is empty or its last byte ends a line.
fn ends_with_newline(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The subagents' calls recorded for the session file `session`, oldest first (none
/// when there is no file; unreadable lines are skipped).
pub fn read_subagent_calls(session: &Path) -> Vec<SubagentCall> {
    let Ok(text) = std::fs::read_to_string(subagent_calls_path(session)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_appended_and_read_back_skipping_torn_lines() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_s1.jsonl");
        assert!(read_subagent_calls(&session).is_empty());
        let call = |id: &str| SubagentCall {
            parent_call_id: "spawn-1".into(),
            subagent_id: "subagent-1".into(),
            call_id: id.into(),
            tool_name: "exec".into(),
            args: serde_json::json!({"command": "wc -l"}),
            result: ToolResult::text("12"),
        };
        record_subagent_call(&session, &call("a")).unwrap();
        let path = subagent_calls_path(&session);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"torn\":")
            .unwrap();
        record_subagent_call(&session, &call("b")).unwrap();
        let ids: Vec<String> = read_subagent_calls(&session)
            .into_iter()
            .map(|c| c.call_id)
            .collect();
        assert_eq!(
            ids,
            ["a", "b"],
            "a torn line is skipped, the next one is kept"
        );
    }
}
