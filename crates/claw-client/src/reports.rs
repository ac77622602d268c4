//! The background runtime's reports as the model's messages and rows: pure conversions
//! of what the runtime publishes (subagent and cron snapshots, runtime events).

use crate::msg::{CronRow, CronRunStatus, Msg};
use crate::subagents::{self, SubagentRow};
use claw_agent::NoticeLevel;
use claw_runtime::runtime::cron::{CronJobInfo, RunStatus};
use claw_runtime::runtime::{RuntimeEvent, SubagentInfo};
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
