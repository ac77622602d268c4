//! The dashboard part: subagents, cron jobs, MCP servers and pending notifications, as
//! the background runtime reports them; keys cancel a subagent and pause, resume or
//! delete a job.

mod draw;
pub(crate) mod mcp;

use super::msg::{CronRow, Effect};
use super::overlay::kind::Overlay;
use super::part::{Handled, Intent};
use super::subagents::SubagentRow;
use claw_runtime::runtime::SubagentStatus;
use crossterm::event::{KeyCode, KeyEvent};
use std::time::{Duration, Instant, SystemTime};

/// Subagents, cron jobs and the selected row (subagents first, then jobs).
#[derive(Clone, Debug)]
pub struct Dashboard {
    subagents: Vec<SubagentRow>,
    /// When each subagent row arrived (its elapsed time counts on from there).
    seen: Vec<Instant>,
    cron: Vec<CronRow>,
    /// MCP servers in configuration order, as last reported.
    mcp: Vec<claw_runtime::mcp::McpServerInfo>,
    /// Servers whose failure to start the chat was told about (once each).
    mcp_failures_told: Vec<String>,
    pending_notifications: usize,
    /// Results recorded in other sessions since start: session id and how many.
    elsewhere: Vec<(String, usize)>,
    /// Who is attached to this session from other terminals or scripts (empty: nobody
    /// can be, or nobody is).
    attached: Vec<crate::attach::ClientInfo>,
    selected: usize,
    /// Time zone for clock times; `None`: the system's local time.
    time_zone: Option<chrono::FixedOffset>,
}

/// What drawing the dashboard is handed besides its own state.
pub(crate) struct DashboardView {
    /// Whether the pane has focus (the selection and the keys show only then).
    pub focused: bool,
    /// The spinner frame for working subagents.
    pub spinner: usize,
    /// For the elapsed time of working subagents.
    pub now: Instant,
    /// For cron countdowns and clock times.
    pub wall: SystemTime,
}

impl Dashboard {
    /// An empty dashboard showing clock times in `time_zone` (`None`: local time).
    pub fn new(time_zone: Option<chrono::FixedOffset>) -> Self {
        Self {
            subagents: Vec::new(),
            seen: Vec::new(),
            cron: Vec::new(),
            mcp: Vec::new(),
            mcp_failures_told: Vec::new(),
            pending_notifications: 0,
            elsewhere: Vec::new(),
            attached: Vec::new(),
            selected: 0,
            time_zone,
        }
    }

    /// The subagents, as last reported.
    pub fn subagents(&self) -> &[SubagentRow] {
        &self.subagents
    }

    /// Whether there is anything to show besides the MCP servers (which `/status` lists
    /// too): a subagent, a cron job, a client attached from elsewhere (the session's own
    /// terminal does not count), results waiting in other sessions.
    pub fn has_rows(&self) -> bool {
        !(self.subagents.is_empty()
            && self.cron.is_empty()
            && self.attached.iter().all(|c| c.kind == "terminal")
            && self.elsewhere.is_empty())
    }

    /// Whether a subagent is working (the spinner turns, times count up).
    pub fn busy(&self) -> bool {
        self.subagents
            .iter()
            .any(|s| s.status == SubagentStatus::Running)
    }

    /// Whether cron countdowns are shown (they change every second): only when the
    /// pane is `visible` at all.
    pub(crate) fn counts_down(&self, visible: bool) -> bool {
        visible
            && self
                .cron
                .iter()
                .any(|j| !j.paused && !j.done && j.next_fire.is_some())
    }

    /// The current subagents (replaces the list).
    pub(crate) fn set_subagents(&mut self, rows: Vec<SubagentRow>, now: Instant) -> Handled {
        self.seen = vec![now; rows.len()];
        self.subagents = rows;
        self.clamp();
        Handled::changed()
    }

    /// One subagent changed: replaced by id, or added.
    pub(crate) fn update_subagent(&mut self, row: SubagentRow, now: Instant) -> Handled {
        match self.subagents.iter().position(|r| r.id == row.id) {
            Some(i) => {
                self.subagents[i] = row;
                self.seen[i] = now;
            }
            None => {
                self.subagents.push(row);
                self.seen.push(now);
            }
        }
        Handled::changed()
    }

    /// The current cron jobs (replaces the list).
    pub(crate) fn set_cron(&mut self, rows: Vec<CronRow>) -> Handled {
        self.cron = rows;
        self.clamp();
        Handled::changed()
    }

    /// Some cron jobs changed (replaced by id, or added at the end) or were removed.
    pub(crate) fn change_cron(&mut self, changed: Vec<CronRow>, removed: &[String]) -> Handled {
        self.cron.retain(|row| !removed.contains(&row.id));
        for row in changed {
            match self.cron.iter_mut().find(|r| r.id == row.id) {
                Some(slot) => *slot = row,
                None => self.cron.push(row),
            }
        }
        self.clamp();
        Handled::changed()
    }

    /// The MCP servers, as last reported.
    pub fn mcp_servers(&self) -> &[claw_runtime::mcp::McpServerInfo] {
        &self.mcp
    }

    /// What the chat says of `server`'s report: that it failed to start and why, the
    /// first time it does (its retries are the dashboard's to show).
    pub(crate) fn mcp_failure_to_tell(
        &mut self,
        server: &claw_runtime::mcp::McpServerInfo,
    ) -> Option<String> {
        let claw_runtime::mcp::McpServerState::Failed { reason, .. } = &server.state else {
            return None;
        };
        if self.mcp_failures_told.contains(&server.name) {
            return None;
        }
        self.mcp_failures_told.push(server.name.clone());
        Some(format!(
            "MCP server {} failed to start: {} — its tools are not offered (/status lists the servers)",
            server.name,
            claw_text::clip(reason.trim(), 300)
        ))
    }

    /// One MCP server changed: replaced by name, or added.
    pub(crate) fn update_mcp(&mut self, server: claw_runtime::mcp::McpServerInfo) -> Handled {
        match self.mcp.iter_mut().find(|s| s.name == server.name) {
            Some(slot) => *slot = server,
            None => self.mcp.push(server),
        }
        Handled::changed()
    }

    /// How many notifications wait for the agent.
    /// Who is attached now (replaces the list).
    pub(crate) fn set_attached(&mut self, clients: Vec<crate::attach::ClientInfo>) -> Handled {
        self.attached = clients;
        Handled::changed()
    }

    /// Who is attached, for `/status`.
    pub(crate) fn attached(&self) -> &[crate::attach::ClientInfo] {
        &self.attached
    }

    pub(crate) fn set_pending(&mut self, n: usize) -> Handled {
        self.pending_notifications = n;
        Handled::changed()
    }

    /// A result was recorded in the session `id` (not the active one).
    pub(crate) fn parked(&mut self, id: &str) -> Handled {
        match self.elsewhere.iter_mut().find(|(s, _)| s == id) {
            Some((_, n)) => *n += 1,
            None => self.elsewhere.push((id.to_owned(), 1)),
        }
        Handled::changed()
    }

    /// The session `id` is the active one now: what waited in it is delivered.
    pub(crate) fn opened(&mut self, id: &str) {
        self.elsewhere.retain(|(s, _)| s != id);
    }

    /// Results waiting in other sessions: session id and how many.
    pub fn waiting_elsewhere(&self) -> &[(String, usize)] {
        &self.elsewhere
    }

    fn clamp(&mut self) {
        let n = self.subagents.len() + self.cron.len();
        self.selected = self.selected.min(n.saturating_sub(1));
    }

    /// How long subagent `i` has run, counting on from its last update while it works.
    fn elapsed(&self, i: usize, now: Instant) -> Duration {
        let Some(row) = self.subagents.get(i) else {
            return Duration::ZERO;
        };
        let since = self
            .seen
            .get(i)
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(*t));
        match row.status {
            SubagentStatus::Running => row.elapsed + since,
            _ => row.elapsed,
        }
    }

    /// Keys while the dashboard has focus.
    pub(crate) fn handle_key(&mut self, key: &KeyEvent) -> Handled {
        let n = self.subagents.len() + self.cron.len();
        let selected = self.selected;
        let subagent = self.subagents.get(selected);
        let job = selected
            .checked_sub(self.subagents.len())
            .and_then(|i| self.cron.get(i));
        match key.code {
            KeyCode::Up => self.selected = selected.saturating_sub(1),
            KeyCode::Down => self.selected = (selected + 1).min(n.saturating_sub(1)),
            KeyCode::Char('x') if subagent.is_some() => {
                let Some(s) = subagent else {
                    return Handled::unchanged();
                };
                // A subagent that ended has nothing to cancel: quietly nothing happens.
                if !matches!(s.status, SubagentStatus::Running | SubagentStatus::Queued) {
                    return Handled::unchanged();
                }
                return Handled::changed().ask(Intent::Open(Overlay::ConfirmCancel {
                    id: s.id.clone(),
                    label: s.label.clone(),
                }));
            }
            KeyCode::Enter if subagent.is_some() => {
                let id = subagent.map(|s| s.id.clone()).unwrap_or_default();
                return Handled::changed().ask(Intent::OpenSubagent(id));
            }
            KeyCode::Char('p') if job.is_some() => {
                let (id, paused) = job.map(|j| (j.id.clone(), j.paused)).unwrap_or_default();
                return Handled::changed().with(if paused {
                    Effect::ResumeCron(id)
                } else {
                    Effect::PauseCron(id)
                });
            }
            KeyCode::Char('d') if job.is_some() => {
                let (id, name) = job
                    .map(|j| (j.id.clone(), j.name.clone()))
                    .unwrap_or_default();
                return Handled::changed().ask(Intent::Open(Overlay::ConfirmDelete { id, name }));
            }
            _ => return Handled::ignored(),
        }
        Handled::changed()
    }
}
