//! A tool call's card in the chat: a header line (status, tool, arguments, time) and a
//! body below it. The body of a command is its output (the last lines while it runs
//! and once it ended, all of them when expanded) with a footer for the exit code and
//! the line count; a failed or interrupted call shows why; a file change shows its diff
//! (the first lines, all of them when expanded).

use super::entry::RenderCtx;
use crate::diff;
use crate::msg::HighlightRequest;
use crate::theme::Token;
use crate::tool_tree::{CallNode, CallStatus};
use crate::widgets::{format_duration, spinner};
use crate::wrap::{Anchor, StyledLine, WrapKind, clean, str_width};
use claw_text::{clip, summarize_args};
use claw_tools::fs::FileChange;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Output lines a collapsed card shows.
pub const CARD_LINES: usize = 5;
/// A diff of at most this many lines is shown whole on its card; a longer one is folded
/// to its first [`DIFF_CARD_LINES`].
pub const DIFF_CARD_MAX: usize = 16;
/// Lines a folded diff shows on its card.
pub const DIFF_CARD_LINES: usize = 12;

/// What the chat shows for one tool call's card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardInfo {
    /// Where the call is.
    pub status: CallStatus,
    /// How long it ran, once finished.
    pub duration: Option<Duration>,
    /// When it started, for the live timer.
    pub started: Option<Instant>,
    /// What goes below the header.
    pub body: CardBody,
    /// Lines added and removed, for a call that changed a file (`+3 −1`).
    pub change: Option<(usize, usize)>,
    /// The progress a running call reports (`▰▰▰▱▱▱ 3/6`).
    pub progress: Option<String>,
    /// What a finished call did, where nothing below the header says it: a read's
    /// `17 lines` or `lines 5–9 of 40`, a listing's `12 entries`.
    pub outcome: Option<String>,
}

/// The part of a card below its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CardBody {
    /// Nothing.
    Empty,
    /// A command's output.
    Output {
        /// The lines shown: the last `CARD_LINES`, or all when expanded.
        lines: Vec<String>,
        /// Lines in all (more than `lines` when collapsed).
        total: usize,
        /// The exit code, once the command exited.
        exit_code: Option<i64>,
        /// Whether every line is shown.
        expanded: bool,
    },
    /// Why a call failed or stopped: the first line of its result.
    Reason(String),
    /// What the user must know of a call that succeeded (a file change that cannot
    /// be undone).
    Warning(String),
    /// The change a file tool made, as a diff.
    Diff {
        /// The change (shared with the tree's result, not copied per frame).
        change: Arc<FileChange>,
        /// Whether every line is shown.
        expanded: bool,
        /// What the user must know besides (a change that cannot be undone).
        warning: Option<String>,
    },
}

impl CardInfo {
    /// The card state of a tree node; `expanded` shows all of a command's output.
    pub fn of(node: &CallNode, expanded: bool) -> Self {
        let body = if node.is_mcp() && node.status == CallStatus::Done {
            // An MCP tool's result is its output: its text, and a chip per image.
            let mut all: Vec<String> = node
                .output_lines()
                .iter()
                .map(|l| (*l).to_owned())
                .collect();
            if let Some(result) = &node.result {
                all.extend(result.images().iter().map(claw_agent::ImageData::chip));
            }
            let total = all.len();
            let skip = if expanded {
                0
            } else {
                total.saturating_sub(CARD_LINES)
            };
            all.drain(..skip);
            CardBody::Output {
                lines: all,
                total,
                exit_code: None,
                expanded,
            }
        } else if node.is_command() && node.status != CallStatus::Skipped {
            let all = node.output_lines();
            let skip = if expanded {
                0
            } else {
                all.len().saturating_sub(CARD_LINES)
            };
            CardBody::Output {
                lines: all[skip..].iter().map(|l| (*l).to_owned()).collect(),
                total: node.output_line_count(),
                exit_code: node.exit_code(),
                expanded,
            }
        } else if matches!(node.status, CallStatus::Failed | CallStatus::Interrupted) {
            let first = node
                .result
                .as_ref()
                .and_then(|r| r.content().lines().map(str::trim).find(|l| !l.is_empty()))
                .unwrap_or_default();
            CardBody::Reason(clip(first, 200))
        } else {
            let warning = node.result.as_ref().and_then(|r| {
                r.details()
                    .get(claw_tools::fs::NOT_UNDOABLE)
                    .and_then(serde_json::Value::as_str)
                    .map(|note| clip(note, 200))
            });
            let change = node
                .result
                .as_ref()
                .and_then(|r| FileChange::from_details(r.details()))
                .filter(|c| c.omitted.is_none() && !c.hunks.is_empty());
            match (change, warning) {
                (Some(change), warning) => CardBody::Diff {
                    change: Arc::new(change),
                    expanded,
                    warning,
                },
                (None, Some(note)) => CardBody::Warning(note),
                (None, None) => CardBody::Empty,
            }
        };
        Self {
            status: node.status,
            duration: node.duration,
            started: node.started,
            body,
            change: node
                .result
                .as_ref()
                .and_then(|r| FileChange::from_details(r.details()))
                .filter(|c| c.omitted.is_none())
                .map(|c| (c.added, c.removed)),
            progress: node
                .progress
                .as_ref()
                .map(crate::tool_tree::Progress::label),
            outcome: None,
        }
        .with_outcome(node)
    }

    /// Adds the outcome of a finished call whose card would otherwise say nothing of it.
    fn with_outcome(mut self, node: &CallNode) -> Self {
        let silent = self.body == CardBody::Empty && self.change.is_none();
        if silent && self.status == CallStatus::Done {
            self.outcome = node.outcome();
        }
        self
    }

    /// Whether the card still shows the call queued or running.
    pub fn is_pending(&self) -> bool {
        matches!(self.status, CallStatus::Queued | CallStatus::Running)
    }

    /// Whether the card has output lines that expanding would add.
    pub fn can_expand(&self) -> bool {
        match &self.body {
            CardBody::Output {
                lines,
                total,
                expanded,
                ..
            } => *expanded || *total > lines.len(),
            CardBody::Diff {
                change, expanded, ..
            } => *expanded || diff_rows(change) > DIFF_CARD_MAX,
            _ => false,
        }
    }
}

/// The lines of a change's diff: a header per hunk and its lines.
fn diff_rows(change: &FileChange) -> usize {
    change.hunks.iter().map(|h| 1 + h.lines.len()).sum()
}

/// The lines of the card of call `id`.
pub(super) fn card_lines(
    id: &str,
    name: &str,
    args: &serde_json::Value,
    ctx: &RenderCtx<'_>,
    out: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let theme = ctx.theme;
    let info = ctx.cards.get(id);
    let status = info.map_or(CallStatus::Queued, |i| i.status);
    let (symbol, token) = status.symbol();
    let name = crate::tool_tree::tool_label(name);
    let symbol = if status == CallStatus::Running {
        spinner(ctx.spinner)
    } else {
        symbol
    };
    let elapsed = info.and_then(|i| {
        i.duration
            .or_else(|| i.started.map(|s| ctx.now.saturating_duration_since(s)))
    });
    let mut tail = Vec::new();
    if let Some(word) = status.word().filter(|_| status != CallStatus::Queued) {
        tail.push(word.to_owned());
    }
    if let Some(progress) = info.and_then(|i| i.progress.as_deref()) {
        tail.push(progress.to_owned());
    }
    if let Some(outcome) = info.and_then(|i| i.outcome.as_deref()) {
        tail.push(clean(outcome));
    }
    if let Some(d) = elapsed.filter(|_| status != CallStatus::Skipped) {
        tail.push(format_duration(d));
    }
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!(" · {}", tail.join(" · "))
    };
    let summary = if args.is_null() {
        String::new()
    } else {
        clean(&summarize_args(args))
    };
    let change = info
        .and_then(|i| i.change)
        .map(|(added, removed)| (format!(" +{added}"), format!(" −{removed}")));
    let change_width = change
        .as_ref()
        .map_or(0, |(a, r)| str_width(a) + str_width(r));
    // One row: the arguments give way so the status, the counts and the timer stay in
    // view.
    let fixed = 2 + str_width(symbol) + 1 + str_width(&name) + 1 + change_width + str_width(&tail);
    let room = usize::from(ctx.width).saturating_sub(fixed);
    let summary = if str_width(&summary) > room {
        clip(&summary, room.max(2))
    } else {
        summary
    };
    let mut spans = vec![
        Span::styled(format!("{symbol} "), theme.fg(token)),
        Span::styled(
            name.into_owned(),
            theme.fg(Token::Tool).add_modifier(Modifier::BOLD),
        ),
    ];
    if !summary.is_empty() {
        spans.push(Span::styled(format!(" {summary}"), theme.text()));
    }
    if let Some((added, removed)) = change {
        spans.push(Span::styled(added, theme.fg(Token::Success)));
        spans.push(Span::styled(removed, theme.fg(Token::Error)));
    }
    if !tail.is_empty() {
        let style = if status == CallStatus::Interrupted {
            theme.fg(Token::Warning)
        } else {
            theme.dim()
        };
        spans.push(Span::styled(tail, style));
    }
    let anchor = Some(Anchor::Card(Arc::from(id)));
    out.push(StyledLine {
        spans,
        first_prefix: vec![Span::styled("  ", theme.dim())],
        rest_prefix: vec![Span::styled("    ", theme.dim())],
        anchor: anchor.clone(),
        ..StyledLine::default()
    });
    if let Some(info) = info {
        let start = out.len();
        body_lines(info, ctx, out, missing);
        for line in &mut out[start..] {
            line.anchor = anchor.clone();
        }
    }
}

/// The body of a card, below its header.
fn body_lines(
    info: &CardInfo,
    ctx: &RenderCtx<'_>,
    out: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let theme = ctx.theme;
    let gutter = |text: &str, style: Style| StyledLine {
        spans: vec![Span::styled(clean(text), style)],
        first_prefix: vec![Span::styled("    │ ", theme.dim())],
        rest_prefix: vec![Span::styled("    │ ", theme.dim())],
        wrap: WrapKind::Char,
        ..StyledLine::default()
    };
    match &info.body {
        CardBody::Empty => {}
        CardBody::Reason(why) => {
            let style = if info.status == CallStatus::Failed {
                theme.fg(Token::Error)
            } else {
                theme.dim()
            };
            out.push(StyledLine {
                spans: vec![Span::styled(clean(why), style)],
                first_prefix: vec![Span::styled("    └ ", theme.dim())],
                rest_prefix: vec![Span::raw("      ")],
                ..StyledLine::default()
            });
        }
        CardBody::Warning(note) => out.push(warning_line(note, ctx)),
        CardBody::Diff {
            change,
            expanded,
            warning,
        } => {
            diff_body(change, *expanded, ctx, out, missing);
            if let Some(note) = warning {
                out.push(warning_line(note, ctx));
            }
        }
        CardBody::Output {
            lines,
            total,
            exit_code,
            expanded,
        } => {
            let text = theme.text().add_modifier(Modifier::DIM);
            for line in lines {
                let style = if line.starts_with("! ") {
                    theme.fg(Token::Warning)
                } else {
                    text
                };
                out.push(gutter(line, style));
            }
            let mut footer = Vec::new();
            if let Some(code) = exit_code {
                footer.push(format!("exit {code}"));
            }
            let hidden = total.saturating_sub(lines.len());
            match (*total, hidden) {
                (0, _) if !info.is_pending() => footer.push("no output".to_owned()),
                (0, _) => {}
                (1, _) => footer.push("1 line".to_owned()),
                (n, 0) => footer.push(format!("{n} lines")),
                (n, h) => footer.push(format!("{n} lines, {h} above")),
            }
            if hidden > 0 {
                footer.push(format!("{}: show all", ctx.expand_key));
            } else if *expanded && *total > CARD_LINES {
                footer.push(format!("{}: collapse", ctx.expand_key));
            }
            if info.is_pending() && footer.len() <= 1 {
                return;
            }
            let style = match exit_code {
                Some(0) | None => theme.dim(),
                Some(_) => theme.fg(Token::Error),
            };
            out.push(StyledLine {
                spans: vec![Span::styled(footer.join(" · "), style)],
                first_prefix: vec![Span::styled("    └ ", theme.dim())],
                rest_prefix: vec![Span::raw("      ")],
                ..StyledLine::default()
            });
        }
    }
}

/// The line under a card that says what the user must know of a change.
fn warning_line(note: &str, ctx: &RenderCtx<'_>) -> StyledLine {
    StyledLine {
        spans: vec![Span::styled(clean(note), ctx.theme.fg(Token::Warning))],
        first_prefix: vec![Span::styled("    └ ", ctx.theme.dim())],
        rest_prefix: vec![Span::raw("      ")],
        ..StyledLine::default()
    }
}

/// A change's diff under its card, as `/diff` draws it (line numbers, signs, colours,
/// the file's highlighting once it arrived); a long one folded to its first lines with
/// the key that shows the rest.
fn diff_body(
    change: &FileChange,
    expanded: bool,
    ctx: &RenderCtx<'_>,
    out: &mut Vec<StyledLine>,
    missing: &mut Vec<HighlightRequest>,
) {
    let theme = ctx.theme;
    let highlighted = diff::highlighted(change, theme, ctx.highlights);
    if highlighted.is_none()
        && let Some(request) = diff::highlight_request(change, theme)
    {
        missing.push(request);
    }
    let lines = diff::diff_lines(change, theme, highlighted, false);
    let total = lines.len();
    let shown = if expanded || total <= DIFF_CARD_MAX {
        total
    } else {
        DIFF_CARD_LINES
    };
    let indent = [Span::raw("    ")];
    out.extend(
        lines
            .into_iter()
            .take(shown)
            .map(|line| line.nested(&indent, &indent)),
    );
    let footer = if shown < total {
        format!(
            "{} more lines · {}: show all",
            total - shown,
            ctx.expand_key
        )
    } else if total > DIFF_CARD_MAX {
        format!("{}: fold", ctx.expand_key)
    } else {
        return;
    };
    out.push(StyledLine {
        spans: vec![Span::styled(footer, theme.dim())],
        first_prefix: vec![Span::styled("    └ ", theme.dim())],
        rest_prefix: vec![Span::raw("      ")],
        ..StyledLine::default()
    });
}
