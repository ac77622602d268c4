//! Agent events as `session/update`s: text and reasoning as message and thought chunks;
//! each tool call as a `tool_call` when the model starts writing it, then
//! `tool_call_update`s as it runs (live command output) and when it ends (its result,
//! diffs of the files it changed); notices, retries and compactions as the user would
//! read them in the client; the mode as `current_mode_update`; how full the context is
//! as `usage_update`. A subagent's tool calls are shown too, named after it.

use super::terminal::TERMINAL_ID;
use super::tools::{CallView, view};
use super::usage::usage;
use crate::agent::{AgentEvent, CompactionResult, ImageData, Message, MessageDelta, ToolResult};
use crate::runtime::mode::MODE_SETTING;
use crate::tools::Workspace;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, ImageContent, SessionUpdate, Terminal,
    TextContent, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use base64::Engine;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Most characters of a tool's output or result shown in one update (the model's copy
/// and the session file keep it all).
pub const MAX_SHOWN_CHARS: usize = 64 * 1024;

/// A call the editor knows of.
#[derive(Default)]
struct Call {
    args: Value,
    /// The end of the command output streamed so far (exec): at most twice what is
    /// shown, so a chatty command does not grow it without bound.
    output: String,
    /// Characters of output no longer kept.
    dropped: usize,
    /// The editor's terminal the command runs in (`[acp] editor_terminal`).
    terminal: Option<String>,
}

impl Call {
    /// Adds streamed output, dropping the oldest beyond what is kept.
    fn stream(&mut self, text: &str) {
        self.output.push_str(text);
        if !text.ends_with('\n') {
            self.output.push('\n');
        }
        let kept = self.output.chars().count();
        if kept > 2 * MAX_SHOWN_CHARS {
            let cut = kept - MAX_SHOWN_CHARS;
            let at = self
                .output
                .char_indices()
                .nth(cut)
                .map_or(self.output.len(), |(i, _)| i);
            self.output.drain(..at);
            self.dropped += cut;
        }
    }

    /// What the editor shows of the output now: its end, and how much came before.
    fn shown(&self) -> String {
        let count = self.output.chars().count();
        let kept = count.min(MAX_SHOWN_CHARS);
        let skipped = self.dropped + (count - kept);
        let end: String = self.output.chars().skip(count - kept).collect();
        fenced(&if skipped > 0 {
            format!("[… {skipped} earlier characters not shown]\n{end}")
        } else {
            end
        })
    }
}

/// Turns events into updates; one per session, fed in event order.
pub struct Presenter {
    /// The session's workspace: its root names the calls' files, and the diffs read
    /// files back through it.
    workspace: Arc<Workspace>,
    /// The calls announced, by their ACP id.
    calls: HashMap<String, Call>,
}

impl Presenter {
    /// A presenter for a session in `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self {
            workspace,
            calls: HashMap::new(),
        }
    }

    /// The updates for one event of the main agent.
    pub async fn agent(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        self.event(event, None).await
    }

    /// The updates for one event of the subagent `label` (`subagent-N`): only its tool
    /// calls, under ids of their own, titled with its name.
    pub async fn subagent(&mut self, label: &str, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. } => self.event(event, Some(label)).await,
            _ => Vec::new(),
        }
    }

    async fn event(&mut self, event: &AgentEvent, subagent: Option<&str>) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::MessageUpdate { delta } => self.delta(delta),
            AgentEvent::MessageEnd { message } => message_end(message),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                let id = call_id(subagent, tool_call_id);
                vec![self.start(id, tool_name, args, subagent)]
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial,
                ..
            } => self
                .progress(&call_id(subagent, tool_call_id), partial)
                .into_iter()
                .collect(),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                ..
            } => {
                let id = call_id(subagent, tool_call_id);
                vec![self.end(id, tool_name, result).await]
            }
            AgentEvent::TurnEnd { context_usage, .. } => vec![usage(context_usage, None)],
            AgentEvent::SettingUpdate { key, value } if key == MODE_SETTING => value
                .as_str()
                .map(|mode| {
                    SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.to_owned()))
                })
                .into_iter()
                .collect(),
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => vec![thought(format!(
                "The request failed ({reason}); retry {attempt}/{max_attempts} in {:.1} s.\n",
                *delay_ms as f64 / 1000.0
            ))],
            AgentEvent::CompactionStart { tokens_before, .. } => vec![thought(format!(
                "Compacting the history ({tokens_before} tokens)…\n"
            ))],
            AgentEvent::CompactionEnd(end) => vec![thought(match end.outcome {
                CompactionResult::Compacted => format!(
                    "Compacted: {} → {} tokens.\n",
                    end.tokens_before, end.tokens_after
                ),
                CompactionResult::Aborted => "Compaction cancelled; nothing changed.\n".into(),
                CompactionResult::Failed | CompactionResult::NothingToCompact => format!(
                    "The history was not compacted: {}\n",
                    end.error.as_deref().unwrap_or("no reason was given")
                ),
            })],
            _ => Vec::new(),
        }
    }

    fn delta(&mut self, delta: &MessageDelta) -> Vec<SessionUpdate> {
        match delta {
            MessageDelta::Text { text, .. } => vec![SessionUpdate::AgentMessageChunk(
                ContentChunk::new(ContentBlock::from(text.clone())),
            )],
            MessageDelta::Thinking { text, .. } => vec![thought(text.clone())],
            // Shown as soon as the model starts writing it, before its arguments.
            MessageDelta::ToolCallStart { id, name, .. } => {
                let view = view(name, &Value::Null, self.workspace.root());
                self.calls.insert(id.clone(), Call::default());
                vec![SessionUpdate::ToolCall(
                    ToolCall::new(id.clone(), view.title)
                        .kind(view.kind)
                        .status(ToolCallStatus::Pending),
                )]
            }
            MessageDelta::ToolCallArgs { .. } => Vec::new(),
        }
    }

    /// The call starts running: announced now if it was not yet, else brought up to
    /// date with its arguments.
    fn start(
        &mut self,
        id: String,
        name: &str,
        args: &Value,
        subagent: Option<&str>,
    ) -> SessionUpdate {
        let view = self.view(name, args, subagent);
        let known = self.calls.contains_key(&id);
        self.calls.insert(
            id.clone(),
            Call {
                args: args.clone(),
                ..Call::default()
            },
        );
        if known {
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id,
                fields(&view)
                    .status(ToolCallStatus::InProgress)
                    .raw_input(args.clone()),
            ))
        } else {
            SessionUpdate::ToolCall(
                ToolCall::new(id, view.title)
                    .kind(view.kind)
                    .status(ToolCallStatus::InProgress)
                    .locations(view.locations)
                    .raw_input(args.clone()),
            )
        }
    }

    /// The announcement of a call that waits for the user's permission before the
    /// editor heard of it (a subagent's), and the fields the request shows.
    pub fn announce(
        &mut self,
        id: &str,
        name: &str,
        args: &Value,
        subagent: Option<&str>,
    ) -> (Option<SessionUpdate>, ToolCallUpdateFields) {
        let view = self.view(name, args, subagent);
        let fields = fields(&view).raw_input(args.clone());
        if self.calls.contains_key(id) {
            return (None, fields);
        }
        self.calls.insert(
            id.to_owned(),
            Call {
                args: args.clone(),
                ..Call::default()
            },
        );
        let call = ToolCall::new(id.to_owned(), view.title)
            .kind(view.kind)
            .status(ToolCallStatus::Pending)
            .locations(view.locations)
            .raw_input(args.clone());
        (Some(SessionUpdate::ToolCall(call)), fields)
    }

    fn view(&self, name: &str, args: &Value, subagent: Option<&str>) -> CallView {
        let mut view = view(name, args, self.workspace.root());
        if let Some(label) = subagent {
            view.title = format!("{label} · {}", view.title);
        }
        view
    }

    /// Partial output: a command's lines so far, or an MCP tool's progress.
    fn progress(&mut self, id: &str, partial: &Value) -> Option<SessionUpdate> {
        let call = self.calls.get_mut(id)?;
        if let Some(terminal) = partial.get(TERMINAL_ID).and_then(Value::as_str) {
            // The editor shows the command's output in its own terminal, embedded here.
            call.terminal = Some(terminal.to_owned());
            return Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.to_owned(),
                ToolCallUpdateFields::new().content(vec![ToolCallContent::Terminal(
                    Terminal::new(terminal.to_owned()),
                )]),
            )));
        }
        let streams = ["stdout", "stderr"].map(|k| partial.get(k).and_then(Value::as_str));
        let shown = if streams.iter().any(Option::is_some) {
            for text in streams.into_iter().flatten() {
                call.stream(text);
            }
            call.shown()
        } else {
            progress_line(partial)?
        };
        Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_owned(),
            ToolCallUpdateFields::new().content(vec![ToolCallContent::from(shown)]),
        )))
    }

    /// The call ended: its status, what it returned, and its diffs.
    async fn end(&mut self, id: String, name: &str, result: &ToolResult) -> SessionUpdate {
        let (args, terminal) = self
            .calls
            .remove(&id)
            .map_or((Value::Null, None), |c| (c.args, c.terminal));
        // The terminal stays shown: the editor keeps a released terminal's output.
        let mut content: Vec<ToolCallContent> = terminal
            .map(|t| ToolCallContent::Terminal(Terminal::new(t)))
            .into_iter()
            .collect();
        if !result.is_error {
            content.extend(
                super::diff::diffs(name, &args, &result.details, Some(&self.workspace))
                    .into_iter()
                    .map(ToolCallContent::from),
            );
        }
        content.extend(result_content(name, &result.content, &result.images));
        let mut update = ToolCallUpdateFields::new()
            .status(if result.is_error {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            })
            .content(content);
        if let Some(line) = result
            .details
            .get("first_changed_line")
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok())
        {
            let view = view(name, &args, self.workspace.root());
            let located: Vec<_> = view.locations.into_iter().map(|l| l.line(line)).collect();
            update = update.locations(located);
        }
        let mut done = ToolCallUpdate::new(id, update);
        if !result.details.is_null() {
            let mut meta = serde_json::Map::new();
            meta.insert(DETAILS_META.to_owned(), result.details.clone());
            done = done.meta(meta);
        }
        SessionUpdate::ToolCallUpdate(done)
    }
}

/// The `_meta` key under which a finished call's structured details go (the diff's
/// hunks, a command's exit code and sandbox report...).
pub const DETAILS_META: &str = "clawTuiDetails";

/// The fields of a call's view, for an update.
fn fields(view: &CallView) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .title(view.title.clone())
        .kind(view.kind)
        .locations(view.locations.clone())
}

/// A subagent's call ids are only unique within it: `subagent-N/ID`.
pub fn call_id(subagent: Option<&str>, id: &str) -> String {
    match subagent {
        Some(label) => format!("{label}/{id}"),
        None => id.to_owned(),
    }
}

/// What a finished message shows that the deltas did not: a notice (the turn limit, a
/// failure) and a background result delivered to the agent.
pub fn message_end(message: &Message) -> Vec<SessionUpdate> {
    match message {
        Message::Notice(notice) => vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(format!("\n\n> {}\n", notice.text.replace('\n', "\n> "))),
        ))],
        Message::Notification(n) => vec![thought(format!(
            "Background result ({}):\n{}\n",
            n.source,
            tail(&n.content, MAX_SHOWN_CHARS)
        ))],
        Message::Assistant(a) if a.is_failed() => {
            let why = a.error_message.as_deref().unwrap_or("the request failed");
            vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::from(format!("\n\n> {why}\n")),
            ))]
        }
        _ => Vec::new(),
    }
}

/// A result as the editor shows it: the text the model got (commands' output fenced),
/// and its images.
pub fn result_content(name: &str, text: &str, images: &[ImageData]) -> Vec<ToolCallContent> {
    let mut content = Vec::new();
    if !text.is_empty() {
        let shown = tail(text, MAX_SHOWN_CHARS);
        content.push(ToolCallContent::from(if name == "exec" {
            fenced(&shown)
        } else {
            shown
        }));
    }
    content.extend(
        images
            .iter()
            .filter(|i| i.is_loaded())
            .map(|image| ToolCallContent::from(ContentBlock::Image(image_content(image)))),
    );
    content
}

/// An image as an ACP content block.
pub fn image_content(image: &ImageData) -> ImageContent {
    ImageContent::new(
        base64::engine::general_purpose::STANDARD.encode(&image.data),
        image.mime.clone(),
    )
}

/// A thought chunk.
pub fn thought(text: String) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// An MCP tool's progress (`progress`, `total`, `message`) as one line.
fn progress_line(partial: &Value) -> Option<String> {
    let progress = partial.get("progress").and_then(Value::as_f64);
    let total = partial.get("total").and_then(Value::as_f64);
    let message = partial.get("message").and_then(Value::as_str);
    let count = match (progress, total) {
        (Some(p), Some(t)) => Some(format!("{p}/{t}")),
        (Some(p), None) => Some(p.to_string()),
        _ => None,
    };
    match (count, message) {
        (None, None) => None,
        (Some(c), None) => Some(format!("progress {c}")),
        (None, Some(m)) => Some(m.to_owned()),
        (Some(c), Some(m)) => Some(format!("progress {c}: {m}")),
    }
}

/// The last `max` characters of `text`, with a line saying what was left out.
pub fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let skip = count - max;
    let kept: String = text.chars().skip(skip).collect();
    format!("[… {skip} earlier characters not shown]\n{kept}")
}

/// Text in a code block whose fence no line of it can close.
pub fn fenced(text: &str) -> String {
    let longest = text
        .lines()
        .map(|l| l.trim_start().chars().take_while(|c| *c == '`').count())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outlast_the_backticks_inside() {
        assert_eq!(fenced("a\n"), "```\na\n```");
        assert_eq!(fenced("```rust\nx\n```"), "````\n```rust\nx\n```\n````");
    }

    #[test]
    fn long_output_keeps_its_end() {
        let text = "x".repeat(10) + "END";
        assert_eq!(tail(&text, 5), "[… 8 earlier characters not shown]\nxxEND");
        assert_eq!(tail("short", 5), "short");
    }

    #[test]
    fn streamed_output_keeps_its_end_and_counts_what_it_dropped() {
        let mut call = Call::default();
        call.stream("first");
        assert_eq!(call.shown(), "```\nfirst\n```");
        let line = "x".repeat(99);
        for _ in 0..2_000 {
            call.stream(&line);
        }
        // 6 + 2,000 lines of 100 characters (with their newline), a bounded part kept.
        assert!(call.output.chars().count() <= 2 * MAX_SHOWN_CHARS);
        let shown = call.shown();
        let skipped = 6 + 200_000 - MAX_SHOWN_CHARS;
        let note = format!("```\n[… {skipped} earlier characters not shown]\n");
        assert!(shown.starts_with(&note), "{}", &shown[..80]);
        assert!(!shown.contains("first"));
        assert_eq!(
            shown.chars().count(),
            note.chars().count() + MAX_SHOWN_CHARS - 1 + 4
        );
    }

    #[test]
    fn progress_reads_like_a_line() {
        let line = progress_line(&serde_json::json!({"progress": 2.0, "total": 3.0}));
        assert_eq!(line.as_deref(), Some("progress 2/3"));
        assert_eq!(progress_line(&serde_json::json!({})), None);
    }
}
