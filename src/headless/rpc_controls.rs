//! The RPC commands of the user's controls: the answer to an input the prompt hooks
//! blocked, and `undo`, `rewind` and `diff` over the checkpoints (their
//! file work off the async runtime).

use super::rpc::{Command, failure, success};
use crate::checkpoint::{CheckpointError, UndoOutcome};
use crate::runtime::supervisor::PromptBlocked;
use crate::setup::Controls;
use serde_json::{Value, json};

/// The response refusing an input the prompt hooks blocked.
pub(super) fn refused(name: &str, blocked: &PromptBlocked) -> Value {
    json!({
        "type": "response", "command": name, "ok": false, "blocked": true,
        "error": blocked.to_string(),
    })
}

/// Why a checkpoint command did nothing; its text is the response's `error`.
#[derive(Debug, thiserror::Error)]
enum CheckpointTaskError {
    /// The checkpoints refused or failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The thread doing the work died (it panicked).
    #[error("the operation stopped unexpectedly: {0}")]
    Stopped(#[source] tokio::task::JoinError),
}

/// Runs checkpoint work off the async runtime (it reads and writes files).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointTaskError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => Ok(done?),
        Err(e) => Err(CheckpointTaskError::Stopped(e)),
    }
}

/// An undo or file rewind as response fields.
fn undo_fields(outcome: &UndoOutcome) -> Value {
    match outcome {
        UndoOutcome::Done(report) => json!({
            "done": true, "report": report, "message": report.message(),
        }),
        UndoOutcome::Confirm(question) => json!({
            "done": false, "confirm": question, "message": format!(
                "{} Nothing was changed; send it again with \"conflicts\": \"overwrite\" \
                 or \"skip\".", question.message()
            ),
        }),
    }
}

/// Runs `undo`, `rewind` and `diff`.
pub(super) async fn checkpoint_command(controls: &Controls, name: &str, command: Command) -> Value {
    let checkpoints = controls.checkpoints.clone();
    let outcome = match command {
        Command::Undo { conflicts } => {
            blocking(move || checkpoints.undo(conflicts).map(|o| undo_fields(&o))).await
        }
        Command::Rewind {
            turn,
            files,
            conversation,
            conflicts,
        } => {
            if !files && !conversation {
                return failure(
                    Some(name),
                    "say what to rewind: \"files\": true, \"conversation\": true, or both".into(),
                );
            }
            blocking(move || {
                let mut fields = json!({});
                if files {
                    let outcome = checkpoints.rewind_files(turn, conflicts)?;
                    let confirm = matches!(outcome, UndoOutcome::Confirm(_));
                    fields["files"] = undo_fields(&outcome);
                    if confirm {
                        return Ok(fields);
                    }
                }
                if conversation {
                    let rewound = checkpoints.rewind_conversation(turn)?;
                    fields["conversation"] = json!({
                        "prompt": rewound.prompt,
                        "message_count": rewound.messages.len(),
                    });
                }
                Ok(fields)
            })
            .await
        }
        Command::Diff => blocking(move || checkpoints.session_diff())
            .await
            .map(|files| {
                let files: Vec<Value> = files
                    .iter()
                    .map(|f| json!({"change": f.change, "changed_outside": f.changed_outside}))
                    .collect();
                json!({ "files": files })
            }),
        _ => return failure(Some(name), "not a checkpoint command".into()),
    };
    match outcome {
        Ok(fields) => success(name, fields),
        Err(e) => failure(Some(name), e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn checkpoint_work_reports_its_refusal_or_its_death() {
        let refused = blocking(|| Err::<(), _>(CheckpointError::NoAgent))
            .await
            .unwrap_err();
        assert!(
            matches!(refused, CheckpointTaskError::Checkpoint(_)),
            "{refused:?}"
        );
        assert_eq!(refused.to_string(), "no agent to rewind");
        let died = blocking(|| -> Result<(), CheckpointError> { panic!("disk on fire") })
            .await
            .unwrap_err();
        assert!(matches!(died, CheckpointTaskError::Stopped(_)), "{died:?}");
        assert!(
            died.to_string()
                .starts_with("the operation stopped unexpectedly: "),
            "{died}"
        );
    }
}
