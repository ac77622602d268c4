//! The client's own session, served on a socket as `claw-tui serve` serves one: other
//! terminals (and scripts) of this user can attach to it while the user works here. The
//! approvals are shared: a request shows here and in every attached client, and the
//! first answer wins. When the user quits while others are attached, the session can
//! stay up for them.

use super::inbox::MsgSender;
use crate::agent::NoticeLevel;
use crate::attach::{AttachServer, ClientInfo, Hub, HubRuntime, PumpHandle, SessionInfo};
use crate::config::Settings;
use crate::headless::rpc::PendingApprovals;
use crate::setup::MainRuntime;
use crate::tools::exec::{ApprovalRequest, Approver};
use crate::tui::msg::Msg;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often the wait for the attached clients to leave looks again.
const LEAVE_CHECK: Duration = Duration::from_millis(250);

/// The approvals of a served client session: made before the runtime, whose approver
/// asks through them.
#[derive(Clone)]
pub struct SharedApprovals {
    pending: PendingApprovals,
    pump: Arc<OnceLock<PumpHandle>>,
}

impl SharedApprovals {
    /// Approvals that show each request in this client (through `tx`) and, once the
    /// session is served, in every attached client.
    pub fn new(tx: MsgSender) -> Self {
        let pump = Arc::new(OnceLock::<PumpHandle>::new());
        let announce_pump = pump.clone();
        let pending = PendingApprovals::announcing(move |line: &Value| {
            if let Ok(request) = serde_json::from_value::<ApprovalRequest>(line.clone()) {
                let _ = tx.send(Msg::Approval(request));
            }
            if let Some(pump) = announce_pump.get() {
                Hub::announcer(pump)(line);
            }
        });
        Self { pending, pump }
    }

    /// How this terminal answers when the session could not be served: straight to
    /// the request that waits.
    pub fn answer_locally(&self) -> super::AnswerElsewhere {
        let pending = self.pending.clone();
        Arc::new(move |id: &str, decision| {
            pending.resolve(id, decision);
        })
    }

    /// The approver for the runtime: every request asked here (`--yes`: none asked).
    pub fn approver(&self, approve_all: bool) -> Approver {
        if approve_all {
            return Approver::AllowAll;
        }
        let pending = self.pending.clone();
        Approver::Ask(Arc::new(move |request| {
            let pending = pending.clone();
            Box::pin(async move { pending.ask(request).await })
        }))
    }
}

/// The client's session, served.
pub struct Hosting {
    hub: Arc<Hub>,
    _server: AttachServer,
    terminal: ClientInfo,
}

impl Hosting {
    /// Serves `main`'s session (`id`: the session on screen at start) and registers this
    /// terminal as its first client; what the others do reaches the app through `tx`.
    pub async fn start(
        main: &MainRuntime,
        settings: &Settings,
        id: Option<String>,
        approvals: &SharedApprovals,
        tx: MsgSender,
    ) -> Result<Self, String> {
        let dir = crate::attach::socket_dir(&settings.state_dir).map_err(|e| e.to_string())?;
        let pump = PumpHandle::start(
            &main.agent,
            main.event_sender.listen(),
            main.cron.as_ref().map(|c| c.subscribe()),
        );
        let _ = approvals.pump.set(pump.clone());
        let pid = std::process::id();
        let session = SessionInfo {
            id: id.unwrap_or_else(|| format!("unsaved-{pid}")),
            workspace: settings.workspace.clone(),
            pid,
            host: "client".into(),
            provider: settings.provider.name.clone(),
        };
        let runtime = HubRuntime::of(main);
        let hub = Hub::new(session, runtime, approvals.pending.clone(), pump);
        let max_line = crate::headless::rpc::DEFAULT_MAX_LINE_BYTES;
        let server = AttachServer::start(&dir, hub.clone(), max_line)
            .await
            .map_err(|e| e.to_string())?;
        let terminal = hub.attach(
            "terminal",
            i32::try_from(pid).ok(),
            Some("the session's own terminal".into()),
        );
        watch_others(&hub, terminal.id, tx.clone()).await;
        let _ = tx.send(Msg::Attached(hub.clients()));
        Ok(Self {
            hub,
            _server: server,
            terminal,
        })
    }

    /// How this terminal answers an approval: as any client does, first answer wins.
    pub fn answer_for_terminal(&self) -> super::AnswerElsewhere {
        let hub = self.hub.clone();
        let me = self.terminal.clone();
        Arc::new(move |id: &str, decision| {
            if let Err(why) = hub.answer(Some(&me), id, decision) {
                tracing::info!("approval {id}: {why}");
            }
        })
    }

    /// The session served now.
    pub fn session_id(&self) -> String {
        self.hub.session().id
    }

    /// What the client calls when the session on screen changes: the attached clients
    /// follow it.
    pub fn switch_hook(&self) -> Arc<dyn Fn(Option<String>) + Send + Sync> {
        let hub = self.hub.clone();
        Arc::new(move |id| hub.switched(id))
    }

    /// How many others are attached now.
    pub fn others(&self) -> usize {
        self.hub.others()
    }

    /// The user quit this terminal. With other clients attached, asks on the plain
    /// terminal whether the session ends for them too; unless told so, serves it until
    /// they detached and it is idle. The exit code of a stop signal that came meanwhile.
    pub async fn quit_with_others(&self, stop: &mut crate::signals::StopSignals) -> Option<i32> {
        if self.others() == 0 {
            return None;
        }
        super::terminal::leave();
        if end_for_everyone(self.others()) {
            return None;
        }
        eprintln!(
            "claw-tui: serving session {} until the others detach and it is idle \
             (Ctrl+C ends it now)",
            self.session_id()
        );
        self.serve_the_others(stop).await
    }

    /// The terminal is gone: serves the session until every other client detached and
    /// nothing runs, or a stop signal (its exit code).
    async fn serve_the_others(&self, stop: &mut crate::signals::StopSignals) -> Option<i32> {
        self.hub.detach(self.terminal.id);
        let mut check = tokio::time::interval(LEAVE_CHECK);
        loop {
            tokio::select! {
                code = stop.recv() => return Some(code),
                _ = check.tick() => {
                    if self.hub.is_idle() {
                        return None;
                    }
                }
            }
        }
    }
}

/// Asks, on the plain terminal, whether quitting ends the session for the `others`
/// clients still attached; `true`: end it (the answer `y`), anything else keeps it.
fn end_for_everyone(others: usize) -> bool {
    use std::io::Write;
    eprint!(
        "{others} other client{} still attached to this session. End it for them too? \
         [y/N] ",
        if others == 1 { " is" } else { "s are" }
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return true;
    }
    answer.trim().eq_ignore_ascii_case("y")
}

/// Takes the hub's own lines (who attached or left, who answered an approval) into the
/// app; this terminal's events come from the agent itself.
async fn watch_others(hub: &Arc<Hub>, me: u64, tx: MsgSender) {
    let Some(mut lines) = hub.watch().await else {
        return;
    };
    let hub = hub.clone();
    tokio::spawn(async move {
        loop {
            let line = match lines.recv().await {
                Ok(line) => line,
                // Only presence and answers matter here; falling this far behind means
                // the runtime was starved, and a missed line is worth a trace.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!("the terminal missed {n} of the hub's lines");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let Some(msgs) = hub_line(&line, me, &hub) else {
                continue;
            };
            for msg in msgs {
                if tx.send(msg).is_err() {
                    return;
                }
            }
        }
    });
}

/// The app's messages for one of the hub's lines (`None`: not one of them).
fn hub_line(line: &str, me: u64, hub: &Hub) -> Option<Vec<Msg>> {
    let kind_at = line.find("\"type\":\"")?;
    let kind = &line[kind_at + 8..];
    let interesting = ["approval_resolved", "client_attached", "client_detached"]
        .iter()
        .any(|k| kind.starts_with(k));
    if !interesting {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    let client = if value["type"] == "approval_resolved" {
        &value["by"]
    } else {
        &value["client"]
    };
    if client["id"].as_u64() == Some(me) {
        return None;
    }
    let who = serde_json::from_value::<ClientInfo>(client.clone())
        .map(|c| c.describe())
        .unwrap_or_else(|_| "another client".into());
    match value["type"].as_str() {
        Some("approval_resolved") => {
            let decision = serde_json::from_value(value["decision"].clone()).ok()?;
            Some(vec![Msg::ApprovalAnswered {
                id: value["id"].as_str()?.to_owned(),
                decision,
                by: who,
            }])
        }
        Some(kind) => {
            let what = if kind == "client_attached" {
                "attached to this session"
            } else {
                "detached"
            };
            Some(vec![
                Msg::Notice(NoticeLevel::Info, format!("{who} {what}")),
                Msg::Attached(hub.clients()),
            ])
        }
        None => None,
    }
}
