//! The checkpoints slice, model side: `/undo` and `/rewind` with their confirmations,
//! `/diff`, and what the runtime answered (see [`crate::checkpoints`]).

use super::App;
use crate::chat::{EntryKind, user_text};
use crate::checkpoints::PendingRewind;
use crate::checkpoints::{self, Msg, Rewound};
use crate::diff;
use crate::msg::Effect;
use crate::overlay::Overlay;
use crate::part::Handled;
use claw_agent::NoticeLevel;
use claw_runtime::checkpoint::{CheckpointError, Conflicts, SessionFile, UndoOutcome};

impl App {
    /// What the runtime answered.
    pub(super) fn checkpoints(&mut self, msg: Msg) -> Handled {
        match msg {
            Msg::Undone(outcome) => self.undone(outcome),
            Msg::Rewound(outcome) => self.rewound(*outcome),
            Msg::Diff(files) => self.show_session_diff(files),
        }
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
        Handled::changed().with(Effect::Checkpoints(checkpoints::Effect::Undo(
            Conflicts::Ask,
        )))
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
            self.focus = crate::layout::Focus::Composer;
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
}
