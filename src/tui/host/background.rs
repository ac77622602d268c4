//! The dashboard's controls over the background runtime: the host carries out the
//! dashboard's effects through a [`Background`]; how one fails is the model's
//! [`BackgroundError`].

use crate::trust::TrustRequest;
use crate::tui::background::BackgroundError;

/// Controls the background runtime (subagents, cron) from the dashboard. The calls may
/// block on file I/O: the client makes them off its UI thread.
pub trait Background: Send + Sync {
    /// The first frame is on the screen: work that must not delay it starts now (the
    /// MCP servers).
    fn first_frame(&self) {}
    /// Cancels a subagent.
    fn cancel_subagent(&self, id: &str) -> Result<(), BackgroundError>;
    /// Pauses a cron job.
    fn pause_cron(&self, id: &str) -> Result<(), BackgroundError>;
    /// Resumes a paused cron job.
    fn resume_cron(&self, id: &str) -> Result<(), BackgroundError>;
    /// Deletes a cron job.
    fn delete_cron(&self, id: &str) -> Result<(), BackgroundError>;
    /// Remembers the user's answer to `request` and, when trusted, starts what waited
    /// for it.
    fn answer_trust(&self, trusted: bool, request: &TrustRequest) -> Result<(), BackgroundError> {
        let _ = (trusted, request);
        Err(BackgroundError::NoMcp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_mcp_servers_the_trust_answer_is_refused() {
        struct Nothing;
        impl Background for Nothing {
            fn cancel_subagent(&self, _: &str) -> Result<(), BackgroundError> {
                Err(BackgroundError::NoSubagents)
            }
            fn pause_cron(&self, _: &str) -> Result<(), BackgroundError> {
                Err(BackgroundError::NoCron)
            }
            fn resume_cron(&self, _: &str) -> Result<(), BackgroundError> {
                Err(BackgroundError::NoCron)
            }
            fn delete_cron(&self, _: &str) -> Result<(), BackgroundError> {
                Err(BackgroundError::NoCron)
            }
        }
        let refused = Nothing
            .answer_trust(true, &TrustRequest::default())
            .unwrap_err();
        assert!(matches!(refused, BackgroundError::NoMcp));
        assert_eq!(
            refused.to_string(),
            "MCP servers are not available in this session."
        );
    }
}
