//! The runtime side of the user's controls in the client: plan mode, `/undo`,
//! `/rewind` and `/diff` (their file work off the UI thread, answered as `Msg`s).

use super::MsgSender;
use super::msg::{Effect, Msg, Rewound};
use crate::checkpoint::UndoOutcome;
use crate::setup::Controls;

/// Carries out a control effect; the file work runs on a blocking thread.
pub(super) fn execute(controls: &Controls, effect: Effect, tx: &MsgSender) {
    let checkpoints = controls.checkpoints.clone();
    let tx = tx.clone();
    match effect {
        Effect::SetMode(mode) => {
            controls.modes.set(mode);
        }
        Effect::Undo(conflicts) => {
            tokio::task::spawn_blocking(move || {
                let _ = tx.send(Msg::Undone(checkpoints.undo(conflicts)));
            });
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
                let _ = tx.send(Msg::Rewound(Box::new(rewound)));
            });
        }
        Effect::SessionDiff => {
            tokio::task::spawn_blocking(move || {
                let _ = tx.send(Msg::SessionDiff(checkpoints.session_diff()));
            });
        }
        _ => {}
    }
}
