//! The page's way around: the outline of turns (each user message, one line, linking
//! to its `#turn-N`), the steer and follow-up badges, and the times (UTC, so that the
//! page reads the same wherever it is opened).

use super::super::markdown::escape;
use crate::agent::{Message, QueueKind};
use crate::text::one_line;
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use pulldown_cmark::{Event, Parser, TagEnd};
use std::collections::HashMap;
use std::fmt::Write;

/// Characters of a prompt the outline shows.
const OUTLINE_CHARS: usize = 90;

/// The badge of a queued user message, as the composer marks it while it waits.
pub(super) fn badge(kind: Option<QueueKind>) -> &'static str {
    match kind {
        Some(QueueKind::Steering) => "<span class=\"badge steer\">steer</span>",
        Some(QueueKind::FollowUp) => "<span class=\"badge follow-up\">follow-up</span>",
        None => "",
    }
}

/// The outline of the conversation's turns: one entry per user message, numbered as
/// the sections' `turn-N` ids are.
pub(super) fn outline(out: &mut String, messages: &[Message], kinds: &HashMap<usize, QueueKind>) {
    let mut entries = String::new();
    let mut number = 0;
    for (i, message) in messages.iter().enumerate() {
        let Message::User(user) = message else {
            continue;
        };
        number += 1;
        let mut text = one_line(&plain_text(&user.content), OUTLINE_CHARS);
        if text.is_empty() {
            text = "(no text)".to_owned();
        }
        let kind = kinds.get(&i).copied();
        let _ = writeln!(
            entries,
            "<li>{} <a href=\"#turn-{number}\">{}</a></li>",
            badge(kind),
            escape(&text)
        );
    }
    if number == 0 {
        return;
    }
    let _ = write!(
        out,
        "<nav class=\"outline\" aria-label=\"Turns\"><h2>Turns</h2>\n<ol>\n{entries}</ol>\n</nav>\n"
    );
}

/// The words of Markdown text without its markup (`**a**` reads `a`), for one line.
fn plain_text(markdown: &str) -> String {
    let mut text = String::new();
    for event in Parser::new(markdown) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                text.push_str(&t);
            }
            // Blocks end with a space, inline markup with nothing: `**a**,` reads `a,`.
            Event::SoftBreak
            | Event::HardBreak
            | Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::HtmlBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::TableCell,
            ) => text.push(' '),
            _ => {}
        }
    }
    text
}

/// A moment as `<time>`: the time of day, with the date when it is not the day of the
/// moment shown before (the first shows it); nothing for a message without a time.
#[derive(Default)]
pub(super) struct Clock {
    day: Option<NaiveDate>,
}

impl Clock {
    /// `ms` (since the epoch) as a `<time>` element, or `""` when unknown (0).
    pub(super) fn stamp(&mut self, ms: u64) -> String {
        let Some(at) = moment(ms) else {
            return String::new();
        };
        let day = at.date_naive();
        let format = if self.day == Some(day) {
            "%H:%M:%S UTC"
        } else {
            "%Y-%m-%d %H:%M:%S UTC"
        };
        self.day = Some(day);
        time_element(at, format)
    }
}

/// `ms` as a `<time>` element with the date, or `""` when unknown (0).
pub(super) fn full_stamp(ms: u64) -> String {
    moment(ms).map_or_else(String::new, |at| time_element(at, "%Y-%m-%d %H:%M:%S UTC"))
}

/// `ms` as the words of a tooltip, date and time, or `""` when unknown (0).
pub(super) fn full_text(ms: u64) -> String {
    moment(ms).map_or_else(String::new, |at| {
        at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
    })
}

fn moment(ms: u64) -> Option<DateTime<Utc>> {
    if ms == 0 {
        return None;
    }
    DateTime::from_timestamp_millis(i64::try_from(ms).ok()?)
}

fn time_element(at: DateTime<Utc>, format: &str) -> String {
    format!(
        "<time datetime=\"{}\">{}</time>",
        at.to_rfc3339_opts(SecondsFormat::Millis, true),
        at.format(format)
    )
}
