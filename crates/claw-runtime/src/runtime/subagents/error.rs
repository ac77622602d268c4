//! Why a subagent cannot be started or cancelled. The `spawn` tool hands the text to the
//! model and the dashboard shows it to the user, so each message says what to do.

use super::SubagentStatus;

/// A refused spawn or cancel; nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubagentError {
    /// The task is blank.
    #[error("The task is empty; describe what the subagent should do.")]
    EmptyTask,
    /// Spawned outside a Tokio runtime, where its loop could not run.
    #[error("Subagents need a Tokio runtime; spawn them from inside one.")]
    NoRuntime,
    /// The app is quitting and takes no new work.
    #[error("claw-tui is shutting down; no new subagents can start.")]
    ShuttingDown,
    /// No subagent has this id.
    #[error("No subagent has the id {id}; the subagent list shows the ids.")]
    UnknownId {
        /// The id asked for.
        id: String,
    },
    /// Cancelling a subagent that has already ended.
    #[error(
        "Subagent {id} has already ended ({}); there is nothing to cancel.",
        .status.as_str()
    )]
    AlreadyEnded {
        /// The subagent.
        id: String,
        /// How it ended.
        status: SubagentStatus,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_refusal_names_the_subagent_and_how_it_ended() {
        let ended = SubagentError::AlreadyEnded {
            id: "subagent-3".into(),
            status: SubagentStatus::TurnLimit,
        };
        assert_eq!(
            ended.to_string(),
            "Subagent subagent-3 has already ended (turn_limit); there is nothing to cancel."
        );
        let unknown = SubagentError::UnknownId {
            id: "subagent-9".into(),
        };
        assert_eq!(
            unknown.to_string(),
            "No subagent has the id subagent-9; the subagent list shows the ids."
        );
    }
}
