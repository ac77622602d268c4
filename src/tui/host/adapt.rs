//! The background runtime's reports as `Msg`s, its controls as a [`Background`], and the
//! question at start about what runs outside the sandbox.

use super::background::Background;
use crate::agent::NoticeLevel;
use crate::config::Settings;
use crate::mcp::McpManager;
use crate::mcp::launch::remember_trust;
use crate::mcp::trust::TrustDecision;
use crate::runtime::cron::{CronJobInfo, CronService, RunStatus};
use crate::runtime::{RuntimeEvent, SubagentInfo, SubagentManager};
use crate::trust::{Trust, TrustRequest};
use crate::tui::background::BackgroundError;
use crate::tui::msg::{CronRow, CronRunStatus, Msg};
use crate::tui::subagents::{self, SubagentRow};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

impl From<&SubagentInfo> for SubagentRow {
    fn from(info: &SubagentInfo) -> Self {
        SubagentRow {
            id: info.id.clone(),
            label: info.label.clone(),
            status: info.status,
            turns: info.turns,
            tokens: info.tokens,
            elapsed: Duration::from_millis(info.elapsed_ms),
            current_tool: info.current_tool.clone(),
        }
    }
}

impl From<&CronJobInfo> for CronRow {
    fn from(job: &CronJobInfo) -> Self {
        CronRow {
            id: job.id.clone(),
            name: job.name.clone(),
            schedule: job.schedule.clone(),
            next_fire: job.next_fire.map(SystemTime::from),
            paused: job.paused,
            done: job.done,
            last_status: match job.last_status {
                None => CronRunStatus::Never,
                Some(RunStatus::Firing) => CronRunStatus::Firing,
                Some(RunStatus::Fired) => CronRunStatus::Ok,
                Some(RunStatus::Missed) => CronRunStatus::Missed,
                Some(RunStatus::Failed) => CronRunStatus::Failed,
            },
        }
    }
}

impl From<RuntimeEvent> for Msg {
    fn from(event: RuntimeEvent) -> Self {
        match event {
            RuntimeEvent::SubagentEvent {
                subagent_id,
                parent_tool_call_id,
                event,
            } => Msg::Subagents(subagents::Msg::Event {
                subagent_id,
                parent_call_id: parent_tool_call_id,
                event,
            }),
            RuntimeEvent::SubagentUpdate { info } => {
                Msg::Subagents(subagents::Msg::Update(SubagentRow::from(&info)))
            }
            RuntimeEvent::PendingNotifications { count } => Msg::PendingNotifications(count),
            RuntimeEvent::McpServerUpdate { server } => Msg::McpServer(server),
            RuntimeEvent::NotificationParked {
                session_id,
                summary,
            } => Msg::Parked {
                session_id,
                summary,
            },
            RuntimeEvent::NotificationDeferred { summary } => Msg::Notice(
                NoticeLevel::Info,
                format!("{summary} · the model hears of it with your next message"),
            ),
            RuntimeEvent::CronStatus { ok, message } => {
                let level = if ok {
                    NoticeLevel::Info
                } else {
                    NoticeLevel::Error
                };
                Msg::Notice(level, message)
            }
            RuntimeEvent::HookWarning { message, .. } => Msg::Notice(NoticeLevel::Warning, message),
            RuntimeEvent::OutboundMessage { message } => Msg::Outbound(message),
            RuntimeEvent::TrustRequest { request } => Msg::AskTrust(request),
        }
    }
}

/// The cron jobs as dashboard rows.
pub fn cron_rows(jobs: &[CronJobInfo]) -> Msg {
    Msg::CronJobs(jobs.iter().map(CronRow::from).collect())
}

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
