//! The runtime side of the user's controls in the client: plan mode, `/undo`,
//! `/rewind` and `/diff` (their file work off the UI thread, answered as `Msg`s), and
//! the gate that runs the prompt hooks before a prompt reaches the agent.

use super::MsgSender;
use super::msg::{Effect, Msg, Rewound};
use super::runtime::PromptKind;
use crate::agent::UserMessage;
use crate::checkpoint::UndoOutcome;
use crate::hooks::{Hooks, PromptDecision};
use crate::runtime::Supervisor;
use crate::setup::Controls;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

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

/// A queue of prompts that pass the prompt hooks one after another (so they keep their
/// order), then go to the supervisor; a blocked one comes back as `Msg::PromptBlocked`.
/// The hooks see and extend a message's text; its images go as they are.
pub(super) fn prompt_gate(
    hooks: Hooks,
    supervisor: Supervisor,
    tx: MsgSender,
) -> UnboundedSender<(PromptKind, UserMessage)> {
    let (gate, mut waiting) = unbounded_channel::<(PromptKind, UserMessage)>();
    tokio::spawn(async move {
        while let Some((kind, message)) = waiting.recv().await {
            match hooks.prompt(&message.content).await {
                PromptDecision::Send(content) => {
                    match kind {
                        PromptKind::Submit => {
                            supervisor.submit_message(UserMessage { content, ..message })
                        }
                        PromptKind::Steer => supervisor.steer(content),
                    };
                }
                PromptDecision::Block(reason) => {
                    let text = message.content;
                    if tx.send(Msg::PromptBlocked { text, reason }).is_err() {
                        return;
                    }
                }
            }
        }
    });
    gate
}
