//! The background runtime's controls as a [`Background`], and the question at start
//! about what runs outside the sandbox. (Its reports become `Msg`s in the model's own
//! `reports` module: pure conversions.)

use super::background::Background;
use crate::config::Settings;
use crate::mcp::McpManager;
use crate::mcp::launch::remember_trust;
use crate::mcp::trust::TrustDecision;
use crate::runtime::SubagentManager;
use crate::runtime::cron::CronService;
use crate::trust::{Trust, TrustRequest};
use crate::tui::background::BackgroundError;
use crate::tui::msg::Msg;
use std::path::Path;
use std::sync::Arc;

pub use crate::tui::reports::cron_rows;

/// The dashboard's actions on the runtime's subagent manager and cron service.
#[derive(Clone, Default)]
pub struct RuntimeControls {
    /// Cancels subagents.
    pub subagents: Option<SubagentManager>,
    /// Pauses, resumes and deletes jobs.
    pub cron: Option<CronService>,
    /// The MCP servers, started once the first frame is on the screen.
    pub servers: Option<McpManager>,
    /// Starts the workspace's `.mcp.json` servers once the user trusts them.
    pub mcp: Option<ProjectMcp>,
    /// Trusts the workspace files hooks and servers run.
    pub trust: Option<Trust>,
}

/// The project servers waiting for the user's answer, and where it is remembered.
#[derive(Clone)]
pub struct ProjectMcp {
    /// Starts them.
    pub manager: McpManager,
    /// The data dir and the workspace the answer is remembered for.
    pub settings: Settings,
}

impl RuntimeControls {
    fn cron(&self) -> Result<&CronService, BackgroundError> {
        self.cron.as_ref().ok_or(BackgroundError::NoCron)
    }
}

impl Background for RuntimeControls {
    fn first_frame(&self) {
        if let Some(servers) = &self.servers {
            servers.start();
        }
    }

    fn cancel_subagent(&self, id: &str) -> Result<(), BackgroundError> {
        let manager = self
            .subagents
            .as_ref()
            .ok_or(BackgroundError::NoSubagents)?;
        Ok(manager.cancel(id)?)
    }

    fn pause_cron(&self, id: &str) -> Result<(), BackgroundError> {
        self.cron()?.pause(id)?;
        Ok(())
    }

    fn resume_cron(&self, id: &str) -> Result<(), BackgroundError> {
        self.cron()?.resume(id)?;
        Ok(())
    }

    fn delete_cron(&self, id: &str) -> Result<(), BackgroundError> {
        self.cron()?.remove(id)?;
        Ok(())
    }

    fn answer_trust(&self, trusted: bool, request: &TrustRequest) -> Result<(), BackgroundError> {
        // The files first, as they were shown: what starts next checks them.
        let files = match (&self.trust, trusted) {
            (Some(trust), true) => trust
                .allow(&request.files_trusted_by_yes())
                .map_err(|e| BackgroundError::RememberFiles(Arc::new(e))),
            (None, true) if !request.files.is_empty() => Err(BackgroundError::NoTrust),
            _ => Ok(()),
        };
        if request.servers.is_empty() {
            return files;
        }
        let Some(project) = &self.mcp else {
            return Err(BackgroundError::NoProjectMcp);
        };
        let decision = if trusted {
            TrustDecision::Trusted
        } else {
            TrustDecision::Declined
        };
        // A failure to save still starts them for this session.
        let saved = remember_trust(&project.settings, &request.servers, decision);
        if trusted {
            project.manager.start_untrusted();
        }
        saved
            .map_err(|e| BackgroundError::RememberTrust(Arc::new(e)))
            .and(files)
    }
}

/// The workspace with the home directory shortened to `~`.
pub(super) fn display_path(path: &Path) -> String {
    if let Some(dirs) = directories::BaseDirs::new()
        && let Ok(rest) = path.strip_prefix(dirs.home_dir())
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

/// The question about what runs outside the sandbox: the workspace's `.mcp.json`
/// servers, when it was never answered for the entries the file has now, and the
/// workspace files hooks and servers run whose content is not trusted.
pub(super) fn trust_question(
    plan: &crate::mcp::launch::McpPlan,
    trust: &crate::trust::Trust,
) -> Vec<Msg> {
    let mut request = crate::trust::TrustRequest {
        workspace: trust.workspace().to_path_buf(),
        files: trust.pending(),
        ..Default::default()
    };
    if plan.ask_trust {
        request.project_file = Some(display_path(&plan.project_file));
        request.servers = plan.entries.clone();
    }
    if request.is_empty() {
        return Vec::new();
    }
    vec![Msg::AskTrust(request)]
}
