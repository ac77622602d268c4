//! The demo model's phrases, parsed: a job done with one tool call (which a subagent can
//! do too), or one of the main agent's own commands (spawn, message, schedule, stop).
//!
//! Phrases are matched with ASCII case folding on the text as typed, so that a path or
//! command keeps its case and no slice can fall inside a character.

use serde_json::{Value, json};

/// A job the demo model does with one tool call, as the main agent or as a subagent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Work {
    /// `list files [in DIR]`, `ls`: `list_dir`, the result quoted.
    ListFiles { path: String },
    /// `count the files [in DIR]`: `list_dir`, answered with the counts.
    CountFiles { path: String },
    /// `count the lines in PATH`: `read_file`, answered with the line count.
    CountLines { path: String },
    /// `read PATH`: `read_file`, the result quoted.
    Read { path: String },
    /// `run COMMAND`: `exec`, the result quoted.
    Run { command: String },
}

/// What the user's words ask of the demo model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Command {
    /// A job with one tool call.
    Work(Work),
    /// `spawn TASK`: a subagent does `TASK`.
    Spawn { task: String },
    /// `message TEXT`: `TEXT` goes to the user through the `message` tool.
    Message { content: String },
    /// `every N seconds TEXT`: a `cron` job delivering `TEXT`.
    Every { seconds: u64, message: String },
    /// `stop JOB`: the `cron` job `JOB` is removed.
    Stop { id: String },
}

impl Work {
    /// The tool that does the job.
    pub(super) fn tool(&self) -> &'static str {
        match self {
            Work::ListFiles { .. } | Work::CountFiles { .. } => "list_dir",
            Work::CountLines { .. } | Work::Read { .. } => "read_file",
            Work::Run { .. } => "exec",
        }
    }

    fn args(&self) -> Value {
        match self {
            Work::ListFiles { path }
            | Work::CountFiles { path }
            | Work::CountLines { path }
            | Work::Read { path } => json!({"path": path}),
            Work::Run { command } => json!({"command": command}),
        }
    }
}

impl Command {
    /// The command `text` asks for, if it is one of the demo's phrases.
    pub(super) fn parse(text: &str) -> Option<Command> {
        // After an interrupted answer the agent puts a note before the next prompt:
        // the prompt is what follows it.
        let text = text.trim();
        let text = match text.strip_prefix(claw_agent::convert::UNANSWERED_NOTE_START) {
            Some(noted) => noted
                .split_once(".]")
                .map_or(text, |(_, prompt)| prompt.trim()),
            None => text,
        };
        let rest = |prefix: &str| {
            after(text, prefix)
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty())
        };
        if let Some(path) = rest("read ") {
            let path = unmention(&path);
            return Some(Command::Work(Work::Read { path }));
        }
        if let Some(command) = rest("run ") {
            return Some(Command::Work(Work::Run { command }));
        }
        if let Some(task) = rest("spawn ") {
            return Some(Command::Spawn { task });
        }
        if let Some(content) = rest("message ") {
            return Some(Command::Message { content });
        }
        if let Some(id) = rest("stop ") {
            return Some(Command::Stop { id });
        }
        every(text)
            .or_else(|| count_lines(text))
            .or_else(|| count_files(text))
            .or_else(|| list_files(text))
    }

    /// The tool the command calls.
    pub(super) fn tool(&self) -> &'static str {
        match self {
            Command::Work(work) => work.tool(),
            Command::Spawn { .. } => "spawn",
            Command::Message { .. } => "message",
            Command::Every { .. } | Command::Stop { .. } => "cron",
        }
    }

    /// The tool call that carries the command out.
    pub(super) fn call(&self) -> (String, Value) {
        let args = match self {
            Command::Work(work) => work.args(),
            Command::Spawn { task } => json!({"task": task}),
            Command::Message { content } => json!({"content": content}),
            Command::Every { seconds, message } => {
                json!({"action": "add", "every_seconds": seconds, "message": message})
            }
            Command::Stop { id } => json!({"action": "remove", "id": id}),
        };
        (self.tool().to_owned(), args)
    }
}

/// `text` after `prefix` (matched with ASCII case folding), when it starts with it.
fn after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `text` after the first of `prefixes` it starts with, the prefix ending a word.
fn after_word<'a>(text: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|prefix| {
        after(text, prefix).filter(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
    })
}

/// The place a question or request ends with, without its question mark.
fn place(text: &str) -> String {
    unmention(text.trim().trim_end_matches(['?', '!']).trim_end())
}

/// A path as the client's `@` completion writes it (`@README.md`), without the `@`.
fn unmention(path: &str) -> String {
    path.strip_prefix('@').unwrap_or(path).to_owned()
}

/// `count the lines in PATH`, `how many lines are in PATH`.
fn count_lines(text: &str) -> Option<Command> {
    let rest =
        after_word(text, &["count the lines", "count lines", "how many lines"])?.trim_start();
    let path = after_word(rest, &["in", "of", "are in", "are there in"]).map(place)?;
    (!path.is_empty()).then_some(Command::Work(Work::CountLines { path }))
}

/// `count the files [in DIR]`, `how many files are there [in DIR]`.
fn count_files(text: &str) -> Option<Command> {
    let rest = place(after_word(
        text,
        &["count the files", "count files", "how many files"],
    )?);
    let rest = after_word(&rest, &["are there", "are"]).map_or(rest.as_str(), str::trim_start);
    let path = match after_word(rest, &["in"]).map(place) {
        Some(dir) if !dir.is_empty() => dir,
        _ => ".".to_owned(),
    };
    Some(Command::Work(Work::CountFiles { path }))
}

/// `list files in DIR`; anything saying `list files`, and `ls`, lists the workspace.
fn list_files(text: &str) -> Option<Command> {
    if let Some(dir) = after_word(text, &["list files in", "list the files in"]).map(place)
        && !dir.is_empty()
    {
        return Some(Command::Work(Work::ListFiles { path: dir }));
    }
    let lower = text.to_lowercase();
    (lower.contains("list files") || lower == "ls").then(|| {
        Command::Work(Work::ListFiles {
            path: ".".to_owned(),
        })
    })
}

/// `every N seconds TEXT` (or `every N second TEXT`).
fn every(text: &str) -> Option<Command> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if let [every, n, unit, message @ ..] = words.as_slice()
        && every.eq_ignore_ascii_case("every")
        && unit.to_lowercase().starts_with("second")
        && !message.is_empty()
        && let Ok(seconds) = n.parse::<u64>()
    {
        return Some(Command::Every {
            seconds,
            message: message.join(" "),
        });
    }
    None
}
