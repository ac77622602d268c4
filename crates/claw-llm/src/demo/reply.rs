//! The main agent's one-line answers where the chat already shows everything: to the
//! receipt of `spawn`, `cron` or `message` (its card shows it), and to a notification (a
//! subagent's report, a cron job's fire), which the client shows as a notification.
//!
//! The texts they read are the runtime's (`[Subagent "LABEL" (ID) VERB]`, `[Cron job
//! "NAME" (ID) fired]`, the spawn receipt); what cannot be read falls back to a line that
//! claims nothing.

use super::command::Command;
use super::report::counted;
use claw_text::one_line;
use serde::Deserialize;

/// The reply templates (`[replies]` in `assets/demo.toml`).
#[derive(Clone, Debug, Deserialize)]
pub(super) struct Replies {
    spawned: String,
    queued: String,
    scheduled: String,
    stopped: String,
    sent: String,
    subagent: String,
    subagent_bare: String,
    cron_fired: String,
    backlog: String,
    notification: String,
}

/// The answer to the successful receipt `content` of `command`'s call, when it is one
/// that is acknowledged rather than shown (`None`: the result is worth quoting).
pub(super) fn receipt(texts: &Replies, command: &Command, content: &str) -> Option<String> {
    match command {
        Command::Spawn { .. } => {
            let id = word_starting(content, "subagent-").unwrap_or("The subagent");
            // The receipt says "Queued subagent …" when the concurrency limit is reached.
            let template = if content.starts_with("Queued") {
                &texts.queued
            } else {
                &texts.spawned
            };
            Some(template.replace("{id}", id))
        }
        Command::Every { seconds, message } => {
            // The id is only in the receipt: `Added cron job "NAME" (cron-1): …`.
            let id = word_starting(content, "(cron-")?.trim_start_matches('(');
            Some(
                texts
                    .scheduled
                    .replace("{every}", &counted_every(*seconds))
                    .replace("{message}", &one_line(message, 60))
                    .replace("{id}", id),
            )
        }
        Command::Stop { id } => Some(texts.stopped.replace("{id}", id)),
        Command::Message { .. } => Some(texts.sent.clone()),
        Command::Work(_) => None,
    }
}

/// `30 seconds`, `1 second`.
fn counted_every(seconds: u64) -> String {
    counted(usize::try_from(seconds).unwrap_or(usize::MAX), "second")
}

/// The first word of `text` that starts with `prefix`, without the punctuation after it.
fn word_starting<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.split_whitespace()
        .find(|w| w.starts_with(prefix))
        .map(|w| w.trim_end_matches(|c: char| !c.is_alphanumeric()))
}

/// Who a notification is from, as its header line says.
#[derive(Debug, PartialEq, Eq)]
enum Source<'a> {
    /// `[Subagent "LABEL" (ID) VERB]`: a subagent ended.
    Subagent {
        label: &'a str,
        id: &'a str,
        verb: &'a str,
    },
    /// `[Cron job "NAME" (ID) fired]`.
    Cron { id: &'a str },
}

impl<'a> Source<'a> {
    /// The source a header line names.
    fn parse(line: &'a str) -> Option<Self> {
        // Read from the end: a label or name may hold quotes and parentheses itself.
        let split = |inner: &'a str| {
            let (head, verb) = inner.rsplit_once(") ")?;
            let (label, id) = head.rsplit_once(" (")?;
            Some((label.strip_suffix('"').unwrap_or(label), id, verb))
        };
        let line = line.trim().strip_suffix(']')?;
        if let Some(inner) = line.strip_prefix("[Subagent \"") {
            let (label, id, verb) = split(inner)?;
            return Some(Source::Subagent { label, id, verb });
        }
        let (_, id, verb) = split(line.strip_prefix("[Cron job \"")?)?;
        (verb == "fired").then_some(Source::Cron { id })
    }

    /// The source in a few words, for a list of several.
    fn summary(&self) -> String {
        match self {
            Source::Subagent { label, id, verb } => format!("{label} ({id}) {verb}"),
            Source::Cron { id } => format!("{id} fired"),
        }
    }
}

/// The answer to a notification whose text (after the notification marker) is `text`.
pub(super) fn notification(texts: &Replies, text: &str) -> String {
    let text = text.trim();
    let (header, body) = text.split_once('\n').unwrap_or((text, ""));
    let body = body.trim();
    match Source::parse(header) {
        Some(Source::Subagent { label, id, verb }) => {
            let fill = |template: &str| {
                template
                    .replace("{label}", label)
                    .replace("{id}", id)
                    .replace("{verb}", verb)
            };
            match body.lines().next() {
                // The report's first line: the demo subagent's report is one line.
                Some(first) => fill(&texts.subagent).replace("{report}", &one_line(first, 240)),
                None => fill(&texts.subagent_bare),
            }
        }
        Some(Source::Cron { id }) => texts
            .cron_fired
            .replace("{message}", &one_line(body, 60))
            .replace("{id}", id),
        None => backlog(texts, text).unwrap_or_else(|| texts.notification.clone()),
    }
}

/// The answer to a backlog of several results delivered as one notification (its items
/// are numbered, `1. [Subagent …]`), or `None` when `text` is no such list.
fn backlog(texts: &Replies, text: &str) -> Option<String> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for line in text.lines() {
        let Some((number, header)) = line.split_once(". ") else {
            continue;
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(source) = Source::parse(header) else {
            continue;
        };
        // A job that fired several times is said once, with the count.
        let summary = source.summary();
        match seen.iter_mut().find(|(s, _)| *s == summary) {
            Some((_, times)) => *times += 1,
            None => seen.push((summary, 1)),
        }
    }
    if seen.len() < 2 && seen.iter().all(|(_, times)| *times < 2) {
        return None;
    }
    let count: usize = seen.iter().map(|(_, times)| times).sum();
    let summary: Vec<String> = seen
        .into_iter()
        .map(|(s, times)| {
            if times == 1 {
                s
            } else {
                format!("{s} ({times}×)")
            }
        })
        .collect();
    Some(
        texts
            .backlog
            .replace("{count}", &count.to_string())
            .replace("{summary}", &summary.join("; ")),
    )
}
