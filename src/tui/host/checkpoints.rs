//! The checkpoints slice's runner: `/undo`, `/rewind` and `/diff` do their file work
//! off the UI thread and answer with a [`Msg`].

use super::MsgSender;
use crate::checkpoint::{Checkpoints, UndoOutcome};
use crate::tui::checkpoints::{Effect, Msg, Rewound};

/// Carries out `effect` on `checkpoints`; the file work runs on a blocking thread and
/// its answer comes back through `tx`.
pub(super) fn run(checkpoints: &Checkpoints, effect: Effect, tx: &MsgSender) {
    let checkpoints = checkpoints.clone();
    let tx = tx.clone();
    let answer = move |msg: Msg| {
        let _ = tx.send(crate::tui::Msg::Checkpoints(msg));
    };
    match effect {
        Effect::Undo(conflicts) => {
            tokio::task::spawn_blocking(move || answer(Msg::Undone(checkpoints.undo(conflicts))));
        }
        Effect::Rewind {
            turn,
            files,
            conversation,
            conflicts,
        } => {
            tokio::task::spawn_blocking(move || {
                let rewound = (|| {
                    let mut done = Rewound {
                        turn,
                        conversation_asked: conversation,
                        files: None,
                        conversation: None,
                    };
                    if files {
                        let outcome = checkpoints.rewind_files(turn, conflicts)?;
                        let confirm = matches!(outcome, UndoOutcome::Confirm(_));
                        done.files = Some(outcome);
                        // The conversation waits for the user's answer about the files.
                        if confirm {
                            return Ok(done);
                        }
                    }
                    if conversation {
                        let cut = checkpoints.rewind_conversation(turn)?;
                        done.conversation = Some((cut.messages, cut.prompt));
                    }
                    Ok(done)
                })();
                answer(Msg::Rewound(Box::new(rewound)));
            });
        }
        Effect::Diff => {
            tokio::task::spawn_blocking(move || answer(Msg::Diff(checkpoints.session_diff())));
        }
    }
}
