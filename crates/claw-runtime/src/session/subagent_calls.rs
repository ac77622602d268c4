//! The tool calls of a session's subagents, kept beside the session file (`.subagents`,
//! one JSON line per finished call): the session records only the main agent's
//! messages, so this is what puts a subagent's calls back under its `spawn` call in the
//! tool tree when the session is opened again. Appended without the session's lock (a
//! subagent may outlive its session being on screen), through a shared [`SideLog`]:
//! each write takes the file's own lock, a torn last line is cut aside first, and a
//! failed write holds its line, and every later one, until there is room, reporting
//! into the `SaveStatus` of the session on screen. Reading keeps every readable line:
//! a damaged one (torn, not UTF-8, not a call) loses only itself, and is said.

use super::side_log::SideLog;
use super::sink::SideLogReport;
use crate::agent::ToolResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
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

/// Writes the subagents' calls beside their sessions, from one thread.
#[derive(Default)]
pub struct SubagentCallWriter {
    logs: HashMap<PathBuf, SideLog>,
}

impl SubagentCallWriter {
    /// A writer with nothing written yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `call` to the subagents' calls of the session file `session`, after
    /// whatever still waits for it; how writing goes is said into `report` (the
    /// session on screen).
    pub fn record(&mut self, session: &Path, call: &SubagentCall, report: &SideLogReport) {
        let mut line = match serde_json::to_string(call) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!("a subagent's call cannot be encoded, so it is not kept: {e}");
                return;
            }
        };
        line.push('\n');
        let log = self
            .logs
            .entry(subagent_calls_path(session))
            .or_insert_with_key(|path| SideLog::shared(path.clone(), SideLogReport::unheard()));
        log.push(line.as_bytes());
        log.flush_into(report.clone());
    }

    /// Whether lines wait because writing failed.
    pub fn is_failing(&self) -> bool {
        self.logs.values().any(SideLog::is_failing)
    }

    /// Tries again to write what waits (a timer while writing fails, and the end),
    /// saying how it goes into `report`.
    pub fn retry(&mut self, report: &SideLogReport) {
        for log in self.logs.values_mut().filter(|log| log.is_failing()) {
            log.flush_into(report.clone());
        }
    }
}

/// The subagents' calls of a session, as far as they could be read.
#[derive(Debug, Default)]
pub struct SubagentCalls {
    /// The calls read, oldest first.
    pub calls: Vec<SubagentCall>,
    /// What could not be read, for the user (damaged lines skipped, a file that
    /// cannot be read).
    pub warnings: Vec<String>,
}

/// The subagents' calls recorded for the session file `session`, oldest first (none
/// when there is no file). Each line is read on its own: a damaged one is skipped and
/// said in the warnings.
pub fn read_subagent_calls(session: &Path) -> SubagentCalls {
    let path = subagent_calls_path(session);
    let shown = path.display();
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return SubagentCalls::default(),
        Err(e) => {
            return SubagentCalls {
                calls: Vec::new(),
                warnings: vec![format!(
                    "cannot read {shown} ({e}): the subagents' calls are not shown"
                )],
            };
        }
    };
    let mut read = SubagentCalls::default();
    let (mut damaged, mut first_problem, mut torn) = (Vec::new(), None, 0);
    for (number, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let (text, ended) = match line.strip_suffix(b"\n") {
            Some(text) => (text, true),
            None => (line, false),
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<SubagentCall>(text) {
            Ok(call) => read.calls.push(call),
            Err(_) if !ended => torn = text.len(),
            Err(e) => {
                damaged.push((number + 1).to_string());
                first_problem.get_or_insert(e.to_string());
            }
        }
    }
    if let Some(problem) = first_problem {
        let count = damaged.len();
        if count > 5 {
            damaged.truncate(5);
            damaged.push(format!("and {} more", count - 5));
        }
        read.warnings.push(format!(
            "{shown}: skipped {count} damaged line{} ({}); every other subagent call was read \
             (first problem: {problem})",
            if count == 1 { "" } else { "s" },
            damaged.join(", "),
        ));
    }
    if torn > 0 {
        read.warnings.push(format!(
            "{shown}: the last line is incomplete (claw-tui stopped while writing it); its \
             {torn} bytes were skipped"
        ));
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn call(id: &str) -> SubagentCall {
        SubagentCall {
            parent_call_id: "spawn-1".into(),
            subagent_id: "subagent-1".into(),
            call_id: id.into(),
            tool_name: "exec".into(),
            args: serde_json::json!({"command": "wc -l"}),
            result: ToolResult::text("12"),
        }
    }

    fn ids(read: &SubagentCalls) -> Vec<&str> {
        read.calls.iter().map(|c| c.call_id.as_str()).collect()
    }

    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn a_torn_line_is_cut_aside_before_the_next_call_is_appended() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_s1.jsonl");
        assert!(read_subagent_calls(&session).calls.is_empty());
        let mut writer = SubagentCallWriter::new();
        writer.record(&session, &call("a"), &SideLogReport::unheard());
        let path = subagent_calls_path(&session);
        append(&path, b"{\"torn\":");
        writer.record(&session, &call("b"), &SideLogReport::unheard());
        let read = read_subagent_calls(&session);
        assert_eq!(ids(&read), ["a", "b"]);
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let damaged = std::fs::read_to_string(dir.path().join("2026_s1.subagents.damaged"));
        assert!(damaged.unwrap().ends_with("\n{\"torn\":\n"));
    }

    #[test]
    fn each_damaged_line_loses_only_itself_and_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_s1.jsonl");
        let mut writer = SubagentCallWriter::new();
        writer.record(&session, &call("a"), &SideLogReport::unheard());
        let path = subagent_calls_path(&session);
        // Not UTF-8, then not a call, then a line another writer tore mid-file.
        append(&path, b"{\"call_id\":\"\xff\xfe\"}\n");
        append(&path, b"garbage\n");
        append(&path, b"{\"parent_call_id\":\"spa\n");
        let mut line = serde_json::to_vec(&call("b")).unwrap();
        line.push(b'\n');
        append(&path, &line);
        let tail = b"{\"parent_call_id\":";
        append(&path, tail);
        let read = read_subagent_calls(&session);
        assert_eq!(ids(&read), ["a", "b"]);
        assert_eq!(read.warnings.len(), 2, "{:?}", read.warnings);
        assert!(
            read.warnings[0].contains("skipped 3 damaged lines (2, 3, 4)"),
            "{}",
            read.warnings[0]
        );
        assert!(
            read.warnings[1].contains("last line is incomplete")
                && read.warnings[1].contains(&format!("its {} bytes", tail.len())),
            "{}",
            read.warnings[1]
        );
    }
}
