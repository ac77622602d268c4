//! One-line reports of a job done with one tool call: what a demo subagent hands back to
//! the main agent, and the main agent's answer to `count …`.
//!
//! They are read from the tool's result as a model reads it (its text, never the
//! `details` the UI gets), so the demo knows no more than a real model would.

use super::command::Work;
use claw_agent::types::ToolResultMessage;
use claw_text::one_line;
use serde::Deserialize;

/// The report templates (`[reports]` in `assets/demo.toml`).
#[derive(Clone, Debug, Deserialize)]
pub(super) struct Reports {
    lines: String,
    image: String,
    files: String,
    empty_dir: String,
    read: String,
    ran: String,
    ran_silent: String,
    failed: String,
    /// A subagent's task that is none of the jobs: `{task}`.
    pub(super) unknown: String,
    /// A subagent's task that needs a tool it lacks: `{task}`, `{tool}`.
    pub(super) no_tool: String,
}

/// How many names a listing report shows before "and N more".
const SHOWN_NAMES: usize = 6;

/// The one-line report of `work`, whose tool call ended with `result`.
pub(super) fn report(texts: &Reports, work: &Work, result: &ToolResultMessage) -> String {
    // Untrimmed for counting: a file's trailing empty lines are shown as empty lines.
    let whole = result.content.as_str();
    let content = whole.trim_end();
    let failure = |doing: String| {
        texts
            .failed
            .replace("{doing}", &doing)
            .replace("{reason}", &reason(content))
    };
    match work {
        Work::CountLines { path } | Work::Read { path } if result.is_error => {
            let doing = match work {
                Work::CountLines { .. } => format!("count the lines in {path}"),
                _ => format!("read {path}"),
            };
            failure(doing)
        }
        Work::CountLines { path } | Work::Read { path } if !result.images.is_empty() => {
            texts.image.replace("{path}", path)
        }
        Work::CountLines { path } | Work::Read { path } => {
            let total = line_total(whole);
            let first = content.lines().find(|l| !l.trim().is_empty());
            // An empty file has no first line to show: its count is all there is to say.
            let template = match (work, first) {
                (Work::Read { .. }, Some(_)) if total > 0 => &texts.read,
                _ => &texts.lines,
            };
            template
                .replace("{path}", path)
                .replace("{lines}", &counted(total, "line"))
                .replace("{first}", &one_line(first.unwrap_or_default(), 60))
        }
        Work::ListFiles { path } | Work::CountFiles { path } if result.is_error => {
            failure(format!("list {path}"))
        }
        Work::ListFiles { path } | Work::CountFiles { path } => listing(texts, path, content),
        Work::Run { command } => ran(texts, command, content),
    }
}

/// How many lines the file has, from `read_file`'s text: the total its note gives when
/// the text was cut, else the lines shown (an empty file's text is a note of its own).
fn line_total(content: &str) -> usize {
    if content.starts_with('[') && content.ends_with(" is empty.]") && !content.contains('\n') {
        return 0;
    }
    if let Some((shown, note)) = content.rsplit_once("\n\n")
        && (note.starts_with("[Showing lines ") || note.starts_with("[Line "))
    {
        let total = note
            .split_once(" of ")
            .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        return total.unwrap_or_else(|| shown.split('\n').count());
    }
    // `split`, not `lines`: a file's trailing empty lines are lines too.
    content.split('\n').count()
}

/// The report of a `list_dir` of `path`: what it holds, counted by kind, and the first
/// few names.
fn listing(texts: &Reports, path: &str, content: &str) -> String {
    let dir = if path == "." {
        "The workspace".to_owned()
    } else {
        format!("`{path}`")
    };
    let (mut files, mut folders, mut links) = (0, 0, 0);
    let mut names = Vec::new();
    for line in content.lines() {
        let name = if let Some(rest) = line.strip_prefix("[folder] ") {
            folders += 1;
            rest.to_owned()
        } else if let Some(rest) = line.strip_prefix("[file] ") {
            files += 1;
            // Without the size: `notes.txt (5 B)`.
            rest.rsplit_once(" (")
                .map_or(rest, |(name, _)| name)
                .to_owned()
        } else if let Some(rest) = line.strip_prefix("[link] ") {
            links += 1;
            rest.split_once(" -> ")
                .map_or(rest, |(name, _)| name)
                .to_owned()
        } else {
            continue;
        };
        names.push(name);
    }
    if names.is_empty() {
        return texts.empty_dir.replace("{dir}", &dir);
    }
    let counts: Vec<String> = [(files, "file"), (folders, "folder"), (links, "link")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, kind)| counted(n, kind))
        .collect();
    let mut shown = names.iter().take(SHOWN_NAMES).cloned().collect::<Vec<_>>();
    if names.len() > SHOWN_NAMES {
        shown.push(format!("and {} more", names.len() - SHOWN_NAMES));
    }
    texts
        .files
        .replace("{dir}", &dir)
        .replace("{counts}", &and_list(&counts))
        .replace("{names}", &shown.join(", "))
}

/// The report of `exec` running `command`: how it exited and its last line of output,
/// or why it did not run or finish.
fn ran(texts: &Reports, command: &str, content: &str) -> String {
    let command = one_line(command, 60);
    // `exec` ends its text with bracketed notes, one a line; the exit code is one.
    let is_note = |l: &str| l.starts_with('[') && l.ends_with(']');
    let code = content.lines().rev().find_map(|l| {
        l.strip_prefix("[exit code: ")
            .and_then(|rest| rest.strip_suffix(']'))
    });
    let Some(code) = code else {
        // Refused, timed out or killed: the last note says so, or the whole text does.
        let why = content
            .lines()
            .rev()
            .find(|l| is_note(l))
            .map_or_else(|| reason(content), |note| reason(&note[1..note.len() - 1]));
        return texts
            .failed
            .replace("{doing}", &format!("run `{command}`"))
            .replace("{reason}", &why);
    };
    let last = content
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !is_note(l));
    let text = match last {
        Some(last) if last != "(no output)" => texts.ran.replace("{last}", &one_line(last, 60)),
        _ => texts.ran_silent.clone(),
    };
    text.replace("{command}", &command).replace("{code}", code)
}

/// Why a call failed, in one sentence: the first of the error's first line.
fn reason(content: &str) -> String {
    let line = content.lines().next().unwrap_or_default().trim();
    let line = line.strip_prefix("Error: ").unwrap_or(line);
    let sentence = line.find(". ").map_or(line, |end| &line[..=end]);
    let mut sentence = one_line(sentence, 240);
    if !sentence.ends_with(['.', '…']) {
        sentence.push('.');
    }
    sentence
}

/// `n` and `noun`, plural unless `n` is 1: `1 line`, `120 lines`.
pub(super) fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
