//! How one of the dashboard's controls over the background runtime fails (the controls
//! themselves are the host's `Background`): the typed error travels to the app as
//! `Msg::BackgroundFailed`, which words it only when it writes the chat line.

use claw_runtime::mcp::launch::RememberTrustError;
use claw_runtime::runtime::SubagentError;
use claw_runtime::runtime::cron::CronError;
use std::sync::Arc;

/// Why a dashboard action did nothing (or, for the MCP answer, was not remembered).
#[derive(Clone, Debug, thiserror::Error)]
pub enum BackgroundError {
    /// This session runs no subagent manager.
    #[error("subagents are not available in this session.")]
    NoSubagents,
    /// This session has no cron service (its store could not be opened).
    #[error("cron jobs are not available in this session.")]
    NoCron,
    /// This session runs no MCP servers.
    #[error("MCP servers are not available in this session.")]
    NoMcp,
    /// This session keeps no trust in workspace files.
    #[error("this session cannot trust workspace files.")]
    NoTrust,
    /// The workspace's `.mcp.json` declares no servers waiting for an answer.
    #[error("this workspace has no project MCP servers to start.")]
    NoProjectMcp,
    /// The subagent manager refused.
    #[error(transparent)]
    Subagent(#[from] SubagentError),
    /// The cron service refused or its jobs file failed.
    #[error(transparent)]
    Cron(#[from] CronError),
    /// The answer about the project's MCP servers could not be saved (they still start
    /// for this session when trusted). Shared, so the error can travel in a `Msg`.
    #[error(transparent)]
    RememberTrust(Arc<RememberTrustError>),
    /// The trusted files could not be remembered (they are trusted for this session).
    #[error("cannot remember the trusted files: {0}")]
    RememberFiles(Arc<std::io::Error>),
}

/// Which dashboard action failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackgroundAction {
    /// Cancelling a subagent.
    CancelSubagent,
    /// Pausing a cron job.
    PauseCron,
    /// Resuming a cron job.
    ResumeCron,
    /// Deleting a cron job.
    DeleteCron,
    /// Answering whether what runs outside the sandbox may run.
    AnswerTrust,
}

impl BackgroundAction {
    /// The action as the failure line names it, after "cannot".
    pub fn describe(self) -> &'static str {
        match self {
            Self::CancelSubagent => "cancel the subagent",
            Self::PauseCron => "pause the job",
            Self::ResumeCron => "resume the job",
            Self::DeleteCron => "delete the job",
            Self::AnswerTrust => "answer about what runs outside the sandbox",
        }
    }
}

/// A dashboard action that failed: the line the chat shows, e.g. `cannot pause the
/// job: No cron job with id …`.
#[derive(Clone, Debug, thiserror::Error)]
#[error("cannot {}: {error}", .action.describe())]
pub struct BackgroundFailure {
    /// What was tried.
    pub action: BackgroundAction,
    /// Why it failed.
    #[source]
    pub error: BackgroundError,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_failure_line_names_the_action_and_the_reason() {
        let failure = BackgroundFailure {
            action: BackgroundAction::PauseCron,
            error: CronError::UnknownJob {
                id: "cron-4".into(),
            }
            .into(),
        };
        assert_eq!(
            failure.to_string(),
            "cannot pause the job: No cron job with id \"cron-4\" in this workspace. \
             action=list shows the job ids."
        );
        assert!(failure.source().is_some());
        let failure = BackgroundFailure {
            action: BackgroundAction::CancelSubagent,
            error: BackgroundError::NoSubagents,
        };
        assert_eq!(
            failure.to_string(),
            "cannot cancel the subagent: subagents are not available in this session."
        );
    }
}
