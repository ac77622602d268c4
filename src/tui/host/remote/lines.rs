//! What an attached client makes of each line from the session's socket: the
//! session's events become the very messages a local session's events become, so the
//! client's `update` cannot tell them apart. Pure: no I/O.

use crate::agent::{AgentEvent, AssistantMessage, Compaction, Message, NoticeLevel};
use crate::runtime::{RuntimeEvent, SubagentInfo};
use crate::tools::exec::{ApprovalDecision, ApprovalRequest};
use crate::tui::msg::Msg;
use crate::tui::sessions::{self, LoadedSession};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// Who this client is, as the server numbered it (its own joins are not news to it).
#[derive(Clone, Debug, Default)]
pub struct Me {
    /// The client id from the `attach` response.
    pub id: Option<u64>,
    /// Who is attached, as the snapshot and the presence lines tell.
    pub clients: Vec<crate::attach::ClientInfo>,
}

/// A `snapshot` line, as far as the client uses it.
#[derive(Deserialize)]
struct Snapshot {
    session: SessionPart,
    state: StatePart,
    streaming_message: Option<AssistantMessage>,
    #[serde(default)]
    subagents: Vec<SubagentInfo>,
    #[serde(default)]
    pending_approvals: Vec<ApprovalRequest>,
    #[serde(default)]
    cron_jobs: Option<Vec<crate::runtime::cron::CronJobInfo>>,
    #[serde(default)]
    clients: Vec<crate::attach::ClientInfo>,
}

#[derive(Deserialize)]
struct SessionPart {
    id: String,
    pid: u32,
}

#[derive(Deserialize)]
struct StatePart {
    #[serde(default)]
    messages: Vec<Message>,
    #[serde(default)]
    is_streaming: bool,
    #[serde(default)]
    compaction: Option<Compaction>,
    #[serde(default)]
    steering: Vec<String>,
    #[serde(default)]
    follow_up: Vec<String>,
}

/// The messages one line from the socket gives the app (none for what it need not see).
pub fn to_msgs(line: &str, me: &mut Me) -> Vec<Msg> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return vec![notice(
            NoticeLevel::Warning,
            "The session sent a line that is not JSON; it was skipped".into(),
        )];
    };
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "hello" => Vec::new(),
        "snapshot" => snapshot(value, me),
        "session_switched" => vec![notice(
            NoticeLevel::Info,
            "The session's own terminal switched sessions; this client follows it".into(),
        )],
        "resync" => vec![notice(
            NoticeLevel::Warning,
            "This client fell behind the session; its screen is rebuilt from the session".into(),
        )],
        "response" => response(&value, me),
        "approval_request" => serde_json::from_value::<ApprovalRequest>(value)
            .map(|r| vec![Msg::Approval(r)])
            .unwrap_or_default(),
        "approval_resolved" => resolved(&value, me),
        "client_attached" | "client_detached" => presence(&value, kind, me),
        "cron_jobs" => {
            serde_json::from_value::<Vec<crate::runtime::cron::CronJobInfo>>(value["jobs"].clone())
                .map(|jobs| vec![crate::tui::host::adapt::cron_rows(&jobs)])
                .unwrap_or_default()
        }
        // What the app shows of who is attached follows each change.
        _ => event(value),
    }
}

/// An agent or runtime event, as the local session's would be.
fn event(value: Value) -> Vec<Msg> {
    match serde_json::from_value::<AgentEvent>(value.clone()) {
        Ok(event) => vec![Msg::Agent(event)],
        Err(_) => match serde_json::from_value::<RuntimeEvent>(value) {
            Ok(event) => vec![Msg::from(event)],
            // Saving reports and the like: the session's own client shows them.
            Err(_) => Vec::new(),
        },
    }
}

/// The session as of the join: its history on screen, the answer being streamed, the
/// queues, the subagents and the approvals that wait.
fn snapshot(value: Value, me: &mut Me) -> Vec<Msg> {
    let snapshot = match serde_json::from_value::<Snapshot>(value) {
        Ok(snapshot) => snapshot,
        Err(e) => {
            return vec![notice(
                NoticeLevel::Error,
                format!("Cannot read the session's snapshot: {e}"),
            )];
        }
    };
    let others = snapshot.clients.len().saturating_sub(1);
    let note = format!(
        "Attached to session {} (served by pid {}; {others} other client{} attached). \
         Quitting detaches: the session goes on.",
        snapshot.session.id,
        snapshot.session.pid,
        if others == 1 { "" } else { "s" },
    );
    let loaded = LoadedSession {
        id: Some(snapshot.session.id),
        messages: Arc::from(snapshot.state.messages),
        queued: Vec::new(),
        path: None,
        resumed: true,
        quiet: false,
        notes: vec![note],
        nested: Vec::new(),
        compactions: snapshot.state.compaction.into_iter().collect(),
        context: None,
    };
    me.clients = snapshot.clients;
    let mut msgs = vec![
        Msg::Sessions(sessions::Msg::Loaded(Box::new(loaded))),
        Msg::Attached(me.clients.clone()),
    ];
    if snapshot.state.is_streaming {
        msgs.push(Msg::Agent(AgentEvent::AgentStart));
        if let Some(message) = snapshot.streaming_message {
            msgs.push(Msg::Agent(AgentEvent::MessageStart {
                message: Message::Assistant(message),
            }));
        }
    }
    if !snapshot.state.steering.is_empty() || !snapshot.state.follow_up.is_empty() {
        msgs.push(Msg::Agent(AgentEvent::QueueUpdate {
            steering: snapshot.state.steering,
            follow_up: snapshot.state.follow_up,
        }));
    }
    if let Some(jobs) = &snapshot.cron_jobs {
        msgs.push(crate::tui::host::adapt::cron_rows(jobs));
    }
    for info in snapshot.subagents {
        msgs.push(Msg::from(RuntimeEvent::SubagentUpdate { info }));
    }
    msgs.extend(snapshot.pending_approvals.into_iter().map(Msg::Approval));
    msgs
}

/// A command's response: a refusal is said; `attach` tells who we are.
fn response(value: &Value, me: &mut Me) -> Vec<Msg> {
    if value["command"] == "attach" {
        me.id = value["client"]["id"].as_u64();
    }
    if value["ok"] == false {
        let error = value["error"].as_str().unwrap_or("refused");
        let command = value["command"].as_str().unwrap_or("command");
        return vec![notice(
            NoticeLevel::Error,
            format!("The session refused {command}: {error}"),
        )];
    }
    Vec::new()
}

/// Another client answered an approval: its dialog goes here too.
fn resolved(value: &Value, me: &Me) -> Vec<Msg> {
    let by_me = value["by"]["id"]
        .as_u64()
        .is_some_and(|id| Some(id) == me.id);
    let (Some(id), Ok(decision)) = (
        value["id"].as_str(),
        serde_json::from_value::<ApprovalDecision>(value["decision"].clone()),
    ) else {
        return Vec::new();
    };
    if by_me {
        return Vec::new();
    }
    vec![Msg::ApprovalAnswered {
        id: id.to_owned(),
        decision,
        by: client_name(&value["by"]),
    }]
}

/// Someone attached or left.
fn presence(value: &Value, kind: &str, me: &mut Me) -> Vec<Msg> {
    let client = &value["client"];
    if let Ok(info) = serde_json::from_value::<crate::attach::ClientInfo>(client.clone()) {
        me.clients.retain(|c| c.id != info.id);
        if kind == "client_attached" {
            me.clients.push(info);
        }
    }
    let attached = Msg::Attached(me.clients.clone());
    if client["id"].as_u64().is_some_and(|id| Some(id) == me.id) {
        return vec![attached];
    }
    let what = if kind == "client_attached" {
        "attached to this session"
    } else {
        "detached"
    };
    vec![
        notice(NoticeLevel::Info, format!("{} {what}", client_name(client))),
        attached,
    ]
}

/// `client 2 (claw-tui attach, pid 4311)`, or the session's own terminal.
fn client_name(client: &Value) -> String {
    if client["kind"] == "terminal" {
        return "The session's own terminal".into();
    }
    let id = client["id"].as_u64().unwrap_or_default();
    let mut about = Vec::new();
    if let Some(name) = client["name"].as_str() {
        about.push(crate::text::one_line(name, 40));
    }
    if let Some(pid) = client["pid"].as_i64() {
        about.push(format!("pid {pid}"));
    }
    if about.is_empty() {
        format!("Client {id}")
    } else {
        format!("Client {id} ({})", about.join(", "))
    }
}

fn notice(level: NoticeLevel, text: String) -> Msg {
    Msg::Notice(level, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_and_runtime_events_become_the_local_messages() {
        let mut me = Me::default();
        let msgs = to_msgs(r#"{"type":"agent_start"}"#, &mut me);
        assert!(matches!(
            msgs.as_slice(),
            [Msg::Agent(AgentEvent::AgentStart)]
        ));
        let msgs = to_msgs(r#"{"type":"pending_notifications","count":2}"#, &mut me);
        assert!(matches!(msgs.as_slice(), [Msg::PendingNotifications(2)]));
    }

    #[test]
    fn an_approval_answered_elsewhere_closes_the_dialog_but_ours_does_not_echo() {
        let mut me = Me::default();
        to_msgs(
            r#"{"type":"response","command":"attach","ok":true,"client":{"id":3}}"#,
            &mut me,
        );
        assert_eq!(me.id, Some(3));
        let other = r#"{"type":"approval_resolved","id":"approval-1","decision":"allow","by":{"id":2,"kind":"socket","pid":7,"name":"laptop"}}"#;
        match to_msgs(other, &mut me).as_slice() {
            [Msg::ApprovalAnswered { id, by, .. }] => {
                assert_eq!(id, "approval-1");
                assert_eq!(by, "Client 2 (laptop, pid 7)");
            }
            other => panic!("{other:?}"),
        }
        let mine = other.replace("\"id\":2", "\"id\":3");
        assert!(to_msgs(&mine, &mut me).is_empty());
    }

    #[test]
    fn a_snapshot_mid_stream_loads_the_history_then_the_partial_answer() {
        let line = r#"{"type":"snapshot","session":{"id":"s1","workspace":"/w","pid":9,"host":"serve"},
            "state":{"messages":[{"role":"user","content":"hi","timestamp":1}],"is_streaming":true,
            "steering":[],"follow_up":["later"]},
            "streaming_message":{"content":[{"type":"text","text":"Hel"}],"stop_reason":"stop",
            "usage":{"input":0,"output":0,"cache_read":0,"cache_write":0,"cost":0.0},"model":"m","timestamp":2},
            "subagents":[],"pending_approvals":[],"clients":[{"id":1,"kind":"socket","pid":null,"name":null,"since_ms":1},{"id":2,"kind":"socket","pid":null,"name":null,"since_ms":2}]}"#;
        let msgs = to_msgs(&line.replace('\n', ""), &mut Me::default());
        assert!(
            matches!(&msgs[0], Msg::Sessions(sessions::Msg::Loaded(l)) if l.messages.len() == 1)
        );
        assert!(matches!(&msgs[1], Msg::Attached(c) if c.len() == 2));
        assert!(matches!(&msgs[2], Msg::Agent(AgentEvent::AgentStart)));
        assert!(matches!(
            &msgs[3],
            Msg::Agent(AgentEvent::MessageStart { .. })
        ));
        assert!(
            matches!(&msgs[4], Msg::Agent(AgentEvent::QueueUpdate { follow_up, .. }) if follow_up == &["later"])
        );
    }

    #[test]
    fn a_refusal_is_said_in_the_chat() {
        let msgs = to_msgs(
            r#"{"type":"response","command":"compact","ok":false,"error":"a run is active"}"#,
            &mut Me::default(),
        );
        assert!(
            matches!(msgs.as_slice(), [Msg::Notice(NoticeLevel::Error, t)] if t.contains("a run is active"))
        );
    }
}
