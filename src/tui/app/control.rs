//! The user's controls (model side): plan mode on and off (`/plan`, Shift+Tab in the
//! composer) and "Implement this plan?", `/undo` and `/rewind` with their
//! confirmations, `/diff`, and a prompt a hook refused.

use super::App;
use crate::agent::NoticeLevel;
use crate::checkpoint::{CheckpointError, SessionFile, UndoOutcome};
use crate::runtime::AgentMode;
use crate::tui::chat::{EntryKind, user_text};
use crate::tui::diff;
use crate::tui::msg::{Effect, Rewound};
use crate::tui::overlay::{Overlay, PendingRewind};
use crate::tui::part::Handled;

impl App {
    /// Switches default → plan → default.
    pub(super) fn cycle_mode(&mut self) -> Handled {
        let mode = self.status.mode().next();
        self.status.set_mode(mode);
        self.plan_ready = false;
        let running = self.status.running();
        let text = match mode {
            AgentMode::Plan => format!(
                "Plan mode{}: the agent reads and plans, and changes nothing (no edits, \
                 commands, jobs or subagents). Shift+Tab or /plan switches back.",
                if running {
                    " (this run's calls that would change anything are refused from now on)"
                } else {
                    ""
                }
            ),
            AgentMode::Default => format!(
                "Plan mode off{}: every tool is back.",
                if running {
                    " from the next prompt on"
                } else {
                    ""
                }
            ),
        };
        self.chat
            .notice(NoticeLevel::Info, text)
            .with(Effect::SetMode(mode))
    }

    /// Enter on an empty composer: after a plan in plan mode, offers to implement it.
    pub(super) fn offer_plan(&mut self) -> Handled {
        if !self.plan_ready || self.status.running() || self.status.mode() != AgentMode::Plan {
            return Handled::unchanged();
        }
        match self.chat.last_answer().filter(|a| !a.trim().is_empty()) {
            Some(plan) => self.overlays.push(Overlay::ImplementPlan { plan }),
            None => Handled::unchanged(),
        }
    }

    /// A run ended: in plan mode its answer is a plan to offer.
    pub(super) fn run_ended_in_mode(&mut self) {
        self.plan_ready = self.status.mode() == AgentMode::Plan;
    }

    fn refuse_while_running(&mut self, what: &str) -> Option<Handled> {
        self.status.running().then(|| {
            self.chat.notice(
                NoticeLevel::Warning,
                format!("The agent is working: wait for it to finish or interrupt it (Esc) before {what}."),
            )
        })
    }

    /// `/undo`: asks the runtime; files changed since come back as a question.
    pub(super) fn undo(&mut self) -> Handled {
        if let Some(refused) = self.refuse_while_running("undoing") {
            return refused;
        }
        Handled::changed().with(Effect::Undo(crate::checkpoint::Conflicts::Ask))
    }

    /// What `/undo` did, or the question about files changed since.
    pub(super) fn undone(&mut self, outcome: Result<UndoOutcome, CheckpointError>) -> Handled {
        match outcome {
            Ok(UndoOutcome::Done(report)) => self.chat.notice(NoticeLevel::Info, report.message()),
            Ok(UndoOutcome::Confirm(question)) => self.overlays.replace(Overlay::ConfirmUndo {
                question,
                rewind: None,
            }),
            Err(why) => self
                .chat
                .notice(NoticeLevel::Error, format!("Cannot undo: {why}")),
        }
    }

    /// `/rewind`: the picker of the conversation's prompts.
    pub(super) fn open_rewind(&mut self) -> Handled {
        if let Some(refused) = self.refuse_while_running("rewinding") {
            return refused;
        }
        let prompts: Vec<String> = self
            .chat
            .transcript()
            .entries()
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::User(text) => Some(text.clone()),
                EntryKind::Recorded(r) => r.user().map(|u| user_text(u).into_owned()),
                _ => None,
            })
            .collect();
        if prompts.is_empty() {
            return self
                .chat
                .notice(NoticeLevel::Info, "There is no prompt to rewind to yet.");
        }
        let selected = prompts.len() - 1;
        self.overlays.push(Overlay::Rewind { prompts, selected })
    }

    /// What `/rewind` did: files, conversation, or the question about files first.
    pub(super) fn rewound(&mut self, outcome: Result<Rewound, CheckpointError>) -> Handled {
        let rewound = match outcome {
            Ok(rewound) => rewound,
            Err(why) => {
                return self
                    .chat
                    .notice(NoticeLevel::Error, format!("Cannot rewind: {why}"));
            }
        };
        let mut handled = Handled::changed();
        if let Some(UndoOutcome::Confirm(question)) = rewound.files {
            return self.overlays.replace(Overlay::ConfirmUndo {
                question,
                rewind: Some(PendingRewind {
                    turn: rewound.turn,
                    conversation: rewound.conversation_asked,
                }),
            });
        }
        // The chat is rebuilt first, so what is said about the files stays in it.
        // (A compaction still in force after the cut has no divider in the rebuilt chat.)
        if let Some((messages, _)) = &rewound.conversation {
            handled.absorb(self.show_history(messages.clone(), &[]));
        }
        match &rewound.files {
            Some(UndoOutcome::Done(report)) if report.turns.is_empty() => {
                handled.absorb(self.chat.notice(
                    NoticeLevel::Info,
                    format!("No file was changed since prompt {}.", rewound.turn),
                ));
            }
            Some(UndoOutcome::Done(report)) => {
                handled.absorb(self.chat.notice(NoticeLevel::Info, report.message()));
            }
            _ => {}
        }
        if let Some((_, prompt)) = rewound.conversation {
            handled.absorb(self.chat.notice(
                NoticeLevel::Info,
                format!(
                    "Rewound the conversation to before prompt {}; the model's history went \
                     back too. The prompt is in the composer.",
                    rewound.turn
                ),
            ));
            self.composer.set_text(&prompt);
            self.focus = crate::tui::layout::Focus::Composer;
            self.plan_ready = false;
        }
        handled
    }

    /// `/diff` arrived: the overlay, with the files' highlights asked for.
    pub(super) fn show_session_diff(
        &mut self,
        files: Result<Vec<SessionFile>, CheckpointError>,
    ) -> Handled {
        let files = match files {
            Ok(files) => files,
            Err(why) => {
                return self
                    .chat
                    .notice(NoticeLevel::Error, format!("Cannot show the diff: {why}"));
            }
        };
        if files.is_empty() {
            return self.chat.notice(
                NoticeLevel::Info,
                "The agent changed no file in this session (or every change was undone).",
            );
        }
        let requests: Vec<_> = files
            .iter()
            .filter_map(|f| diff::highlight_request(&f.change, &self.theme))
            .collect();
        let mut handled = self
            .overlays
            .replace(Overlay::SessionDiff { files, scroll: 0 });
        for request in requests {
            if let Some(effect) = self.highlights.request(request) {
                handled = handled.with(effect);
            }
        }
        handled
    }

    /// A prompt hook refused `text`: said in the chat, the text back in the composer.
    pub(super) fn prompt_blocked(&mut self, text: String, reason: String) -> Handled {
        let said = self.chat.notice(
            NoticeLevel::Warning,
            format!("⛔ A prompt hook blocked your message: {reason}"),
        );
        said.and(self.restore_to_composer(vec![crate::tui::msg::QueuedText::follow_up(text)]))
    }
}
