//! What the app says about itself, computed from its parts without changing them: the
//! keys line above the composer (it follows the focused pane) and the rows of `/status`.

use super::App;
use crate::layout::Focus;
use crate::overlay::StatusRow;
use crate::widgets::compact;
use claw_agent::{QueueMode, ToolExecution};
use claw_runtime::keymap::Action;

impl App {
    /// The keys line: what the keys do in the focused pane, now, most important first.
    pub(super) fn key_hint(&self) -> Vec<String> {
        let key = |a: Action| self.keymap.label(a);
        let items: Vec<String> = match self.focus {
            Focus::Composer if self.composer.restored().is_some() => vec![
                "restored from the queues".into(),
                format!("{}: send each as it was", key(Action::Submit)),
                "editing merges them".into(),
            ],
            Focus::Composer if self.status.running() => vec![
                format!("{}: follow-up", key(Action::Submit)),
                format!("{}: steer (empty: interrupt)", key(Action::Interrupt)),
                format!("{}: stop tool", key(Action::InterruptTool)),
                format!("{}: pull back queue", key(Action::PullQueue)),
            ],
            Focus::Composer if self.shells.has_context() => vec![
                format!(
                    "{}: send (the shell output goes with it)",
                    key(Action::Submit)
                ),
                format!("{}: newline", self.newline_key()),
                "!!cmd: shell, output not sent".into(),
            ],
            Focus::Composer => vec![
                format!("{}: send", key(Action::Submit)),
                format!("{}: newline", self.newline_key()),
                "!cmd: shell".into(),
                format!("{}: find", key(Action::Find)),
                format!("{}: {}", key(Action::TogglePanes), self.panes_word()),
            ],
            Focus::Chat if self.viewing_subagent().is_some() => vec![
                "read-only".into(),
                format!("{}: back to the chat", key(Action::Interrupt)),
                "↑↓ scroll".into(),
                format!("{}: find", key(Action::Find)),
            ],
            Focus::Chat if self.chat.has_summaries() => vec![
                "↑↓ scroll".into(),
                if self.chat.summaries_expanded() {
                    "Enter: fold the summaries".into()
                } else {
                    "Enter: show the summaries".into()
                },
                "[ ]: select card or code".into(),
                "End: bottom".into(),
                format!("{}: find", key(Action::Find)),
            ],
            Focus::Chat => vec![
                "↑↓ scroll".into(),
                "[ ]: select card or code".into(),
                "c: copy it".into(),
                "o: expand".into(),
                "End: bottom".into(),
                format!("{}: find", key(Action::Find)),
            ],
            Focus::Tree => vec![
                "↑↓ select a call".into(),
                "Enter: open its arguments and result".into(),
                format!("{}: next pane", key(Action::FocusNext)),
            ],
            Focus::Dashboard => vec![
                "↑↓ select".into(),
                "Enter: open subagent".into(),
                "x: cancel subagent".into(),
                "p: pause/resume job".into(),
                "d: delete job".into(),
            ],
        };
        items
    }

    /// The first newline key the terminal can send: Shift+Enter only where the terminal
    /// tells it from Enter (elsewhere it sends Enter, and the message would go).
    fn newline_key(&self) -> String {
        self.keymap
            .chords(Action::Newline)
            .iter()
            .find(|c| {
                self.shift_enter
                    || !(c.code == crossterm::event::KeyCode::Enter
                        && c.modifiers.contains(crossterm::event::KeyModifiers::SHIFT))
            })
            .map_or_else(|| "unbound".into(), claw_runtime::keymap::KeyChord::label)
    }

    /// What the panes key would do now.
    fn panes_word(&self) -> &'static str {
        if self.side(self.size.width) == crate::layout::Side::Off {
            "show panes"
        } else {
            "hide panes"
        }
    }

    /// The rows of `/status`.
    pub(super) fn status_rows(&self) -> Vec<StatusRow> {
        let s = &self.status;
        let totals = s.totals();
        let usage = &totals.usage;
        let usage_now = s.context_usage();
        fn row(label: &str, value: impl Into<String>) -> StatusRow {
            StatusRow::new(label, value)
        }
        let mut rows = vec![
            row("Config", ""),
            self.config_file_row(),
            row("Model", ""),
            row("provider", s.provider()),
            row("model", s.model()),
            row(
                "base URL",
                self.about
                    .base_url
                    .clone()
                    .unwrap_or_else(|| "the API's default".to_owned()),
            ),
            row("thinking", format!("{:?}", s.thinking()).to_lowercase()),
            row("Context", ""),
            row(
                "window",
                format!(
                    "{} tokens ({})",
                    compact(usage_now.window),
                    if s.window_configured() {
                        "configured"
                    } else {
                        "the built-in table's for the model"
                    }
                ),
            ),
            row(
                "in use",
                format!(
                    "{} tokens ({}%)",
                    compact(usage_now.tokens),
                    usage_now.percent
                ),
            ),
            row("This session", ""),
            row(
                "tokens",
                format!(
                    "{} in ({} from cache) · {} out",
                    compact(usage.input + usage.cache_read + usage.cache_write),
                    compact(usage.cache_read),
                    compact(usage.output)
                ),
            ),
            row(
                "cost",
                if s.cost_known() {
                    format!("${:.4}", usage.cost)
                } else {
                    "n/a: the model's prices are unknown (set prices for the provider)".to_owned()
                },
            ),
            row("turns", {
                let n = s.turn();
                format!("{n} model call{}", if n == 1 { "" } else { "s" })
            }),
            row("Run", ""),
        ];
        let (steering, follow_up) = s.queue_modes();
        let mode = |m: QueueMode| match m {
            QueueMode::OneAtATime => "one at a time",
            QueueMode::All => "all together",
        };
        let (queued_steer, queued_follow) = s.queued();
        rows.push(row(
            "queues",
            format!(
                "steering {} ({} queued) · follow-ups {} ({} queued)",
                mode(steering),
                queued_steer.len(),
                mode(follow_up),
                queued_follow.len()
            ),
        ));
        rows.push(row(
            "tool calls",
            match s.tool_execution() {
                ToolExecution::Parallel => "parallel",
                ToolExecution::Sequential => "sequential",
            },
        ));
        rows.push(row(
            "sandbox",
            if self.about.sandbox.is_empty() {
                "as configured in [exec]".to_owned()
            } else {
                self.about.sandbox.clone()
            },
        ));
        let servers = self.dashboard.mcp_servers();
        if servers.is_empty() {
            rows.push(row("MCP servers", "none configured"));
        } else {
            for (i, server) in servers.iter().enumerate() {
                let label = if i == 0 { "MCP servers" } else { "" };
                rows.push(row(
                    label,
                    format!("{}: {}", server.name, server.status_line()),
                ));
            }
        }
        rows.extend(
            self.user_files_rows()
                .into_iter()
                .map(|(label, value)| row(label, value)),
        );
        let attached = self.dashboard.attached();
        if !attached.is_empty() {
            for (i, client) in attached.iter().enumerate() {
                let label = if i == 0 { "attached" } else { "" };
                rows.push(row(label, client.describe()));
            }
        }
        rows.push(row("Session", ""));
        rows.push(row(
            "id",
            self.session
                .id
                .clone()
                .unwrap_or_else(|| "none (--no-session: nothing is recorded)".to_owned()),
        ));
        if let Some(path) = &self.session.path {
            rows.push(row("file", path.display().to_string()));
        }
        rows
    }
}
