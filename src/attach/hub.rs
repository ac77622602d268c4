//! What every connection to a live session shares: the pump, who is attached, the
//! approvals waiting for any of them, and the runtime the commands act on.

use super::pump::{Joined, Line, PumpHandle};
use crate::agent::Agent;
use crate::headless::rpc::{PendingApprovals, Sources, failure, handle_line, state_json, success};
use crate::llm::RequestTap;
use crate::mcp::McpManager;
use crate::runtime::{RuntimeEventSender, SubagentManager, Supervisor};
use crate::setup::Controls;
use crate::tools::exec::ApprovalDecision;
pub use crate::tui::attach::ClientInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The protocol version a `hello` line announces.
pub const PROTOCOL_VERSION: u32 = 1;

/// The parts of the runtime the commands act on (cheap clones).
#[derive(Clone)]
pub struct HubRuntime {
    /// Takes prompts and runs the main agent.
    pub supervisor: Supervisor,
    /// Hooks, checkpoints and plan mode.
    pub controls: Controls,
    /// The MCP servers `get_state` lists.
    pub mcp: McpManager,
    /// Where the session's requests are recorded.
    pub requests: RequestTap,
    /// The subagents (for the snapshot and the idle check).
    pub subagents: SubagentManager,
    /// The runtime's events, fanned out to the clients.
    pub events: RuntimeEventSender,
    /// The cron jobs (for the snapshot; `None`: no cron service).
    pub cron: Option<crate::runtime::cron::CronService>,
}

impl HubRuntime {
    /// The parts of `main` the commands act on.
    pub fn of(main: &crate::setup::MainRuntime) -> Self {
        Self {
            supervisor: main.supervisor.clone(),
            controls: main.controls.clone(),
            mcp: main.mcp.clone(),
            requests: main.requests.clone(),
            subagents: main.subagents.clone(),
            events: main.event_sender.clone(),
            cron: main.cron.clone(),
        }
    }
}

/// Which session this is, as `hello` and the listing name it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session id (or `unsaved-PID` with sessions off).
    pub id: String,
    /// The workspace it works in.
    pub workspace: PathBuf,
    /// The process serving it.
    pub pid: u32,
    /// `serve` (no terminal of its own) or `client` (a terminal client's session).
    pub host: String,
    /// The provider its model runs on (the config's name for it).
    #[serde(default)]
    pub provider: String,
}

/// The shared state of one served session.
pub struct Hub {
    /// The session's identity (a client that switches sessions changes its id).
    session: Mutex<SessionInfo>,
    runtime: HubRuntime,
    pump: PumpHandle,
    approvals: PendingApprovals,
    clients: Mutex<Vec<ClientInfo>>,
    next_client: AtomicU64,
}

impl Hub {
    /// A hub for `runtime`'s session; `approvals` must be the ones the runtime's
    /// approver asks through, announced with [`Hub::announcer`].
    pub fn new(
        session: SessionInfo,
        runtime: HubRuntime,
        approvals: PendingApprovals,
        pump: PumpHandle,
    ) -> Arc<Self> {
        Arc::new(Self {
            session: Mutex::new(session),
            runtime,
            pump,
            approvals,
            clients: Mutex::new(Vec::new()),
            next_client: AtomicU64::new(1),
        })
    }

    /// The approval announcer for a hub's pump: every attached client gets the request.
    pub fn announcer(pump: &PumpHandle) -> impl Fn(&Value) + Send + Sync + 'static {
        let pump = pump.clone();
        move |line: &Value| {
            if let Some(text) = crate::session::event_json(line) {
                pump.say(Line::from(text));
            }
        }
    }

    /// Which session this is now.
    pub fn session(&self) -> SessionInfo {
        self.session
            .lock()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The process's client switched to session `id` (`None`: sessions are off): every
    /// attached client is told and given the new session's snapshot.
    pub fn switched(&self, id: Option<String>) {
        let pid = std::process::id();
        let id = id.unwrap_or_else(|| format!("unsaved-{pid}"));
        if let Ok(mut session) = self.session.lock() {
            if session.id == id {
                return;
            }
            session.id.clone_from(&id);
        }
        self.say(&json!({"type": "session_switched", "session": self.session()}));
    }

    /// The main agent.
    pub fn agent(&self) -> &Agent {
        self.runtime.supervisor.agent()
    }

    /// Who is attached now.
    pub fn clients(&self) -> Vec<ClientInfo> {
        self.clients.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// Whether nothing is going on: no client attached, no run, no subagent working.
    pub fn is_idle(&self) -> bool {
        self.clients().is_empty()
            && !self.agent().state().is_streaming
            && self.runtime.subagents.running() == 0
    }

    /// The first line a connection gets: which session this is and what it does now.
    pub fn hello(&self) -> Value {
        json!({
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "session": self.session(),
            "first_prompt": first_prompt(self.agent()),
            "state": self.activity(),
            "clients": self.clients(),
        })
    }

    /// `working`, `waiting` (an approval waits) or `idle`.
    fn activity(&self) -> &'static str {
        if !self.approvals.waiting_requests().is_empty() {
            "waiting"
        } else if self.agent().state().is_streaming {
            "working"
        } else {
            "idle"
        }
    }

    /// Registers a client and tells everyone.
    pub fn attach(&self, kind: &str, pid: Option<i32>, name: Option<String>) -> ClientInfo {
        let client = ClientInfo {
            id: self.next_client.fetch_add(1, Ordering::Relaxed),
            kind: kind.to_owned(),
            pid,
            name,
            since_ms: crate::agent::now_ms(),
        };
        if let Ok(mut clients) = self.clients.lock() {
            clients.push(client.clone());
        }
        self.say(&json!({"type": "client_attached", "client": client}));
        client
    }

    /// Unregisters a client and tells everyone left.
    pub fn detach(&self, id: u64) {
        let gone = self.clients.lock().ok().and_then(|mut clients| {
            let at = clients.iter().position(|c| c.id == id)?;
            Some(clients.remove(at))
        });
        if let Some(client) = gone {
            self.say(&json!({"type": "client_detached", "client": client}));
        }
    }

    /// Joins the common line order, with the state the first line follows.
    pub async fn join(&self) -> Option<Joined> {
        self.pump.join().await
    }

    /// The hub's own lines only (presence, approvals answered), for the hosting
    /// terminal, which has the agent's events first hand.
    pub async fn watch(&self) -> Option<tokio::sync::broadcast::Receiver<Line>> {
        self.pump.watch().await
    }

    /// What a joining client is given before the live lines: the conversation so far,
    /// the answer being streamed, the queues, the background work, the approvals that
    /// wait, and who else is attached.
    pub fn snapshot(&self, joined: &Joined) -> Value {
        let mut state = state_json(self.agent());
        // The state as of the join point, not as of now: its lines follow.
        state["messages"] = json!(*joined.state.messages);
        state["message_count"] = json!(joined.state.messages.len());
        state["is_streaming"] = json!(joined.state.is_streaming);
        state["mcp_servers"] = json!(self.runtime.mcp.servers());
        json!({
            "type": "snapshot",
            "session": self.session(),
            "state": state,
            "streaming_message": joined.state.streaming_message,
            "subagents": self.runtime.subagents.list(),
            "cron_jobs": self.runtime.cron.as_ref().map(|c| c.subscribe().borrow().clone()),
            "pending_approvals": self.approvals.waiting_requests(),
            "clients": self.clients(),
        })
    }

    /// Runs one command line from `client` and returns its response.
    pub async fn command(&self, client: Option<&ClientInfo>, line: &str) -> Value {
        if let Ok(value) = serde_json::from_str::<Value>(line)
            && value.get("type").and_then(Value::as_str) == Some("approve")
        {
            return self.approve(client, value);
        }
        let sources = Sources {
            controls: &self.runtime.controls,
            mcp: &self.runtime.mcp,
            requests: &self.runtime.requests,
            // An attached client sends its prompt made already (its command expanded,
            // its skills attached): made again here, a skill would go twice.
            prompts: None,
        };
        handle_line(&self.runtime.supervisor, sources, &self.approvals, line).await
    }

    /// `approve`: the first answer wins, and every client learns who gave it.
    fn approve(&self, client: Option<&ClientInfo>, value: Value) -> Value {
        #[derive(Deserialize)]
        struct Approve {
            id: String,
            decision: ApprovalDecision,
        }
        let Ok(Approve { id, decision }) = serde_json::from_value::<Approve>(value) else {
            return failure(
                Some("approve"),
                "bad \"approve\" command: it needs \"id\" and \"decision\" (allow, \
                 allow_session or deny)"
                    .into(),
            );
        };
        match self.answer(client, &id, decision) {
            Ok(()) => success("approve", json!({})),
            Err(why) => failure(Some("approve"), why),
        }
    }

    /// Answers approval request `id` for `client`: the first answer wins, and every
    /// client learns who gave it.
    pub fn answer(
        &self,
        client: Option<&ClientInfo>,
        id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), String> {
        if !self.approvals.resolve(id, decision) {
            return Err(format!(
                "no approval request with id \"{id}\" is waiting (another client may have \
                 answered it)"
            ));
        }
        self.say(&json!({
            "type": "approval_resolved",
            "id": id,
            "decision": decision,
            "by": client,
        }));
        Ok(())
    }

    /// How many clients other than the session's own terminal are attached.
    pub fn others(&self) -> usize {
        self.clients()
            .iter()
            .filter(|c| c.kind != "terminal")
            .count()
    }

    /// Sends one of the hub's own lines to every client, in the common order.
    pub fn say(&self, value: &Value) {
        if let Some(text) = crate::session::event_json(value) {
            self.pump.say(Line::from(text));
        }
    }

    /// The end: every approval still waiting is denied.
    pub fn close(&self) {
        self.approvals.close();
    }
}

/// The session's first prompt, on one line (for the listing).
fn first_prompt(agent: &Agent) -> Option<String> {
    let state = agent.state();
    state.messages.iter().find_map(|m| match m {
        crate::agent::Message::User(u) => Some(crate::text::one_line(&u.content, 80)),
        _ => None,
    })
}
