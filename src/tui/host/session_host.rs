//! Sessions in the client (runtime side): one task owns the [`SessionService`] and
//! carries out the picker's and the commands' requests in order (`/new`, `/sessions`,
//! a copy of one in use), answering the chat through the inbox; it closes the session
//! when the client quits.

use super::MsgSender;
use crate::agent::{Agent, Message, NoticeLevel};
use crate::session::{
    self, Entered, OpenedSession, Resume, SaveWatch, SessionData, SessionService, SessionTarget,
    SwitchError,
};
use crate::tui::msg::{Msg, QueuedText};
use crate::tui::sessions::{self, LoadedSession, SessionRow};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{mpsc, oneshot};

/// What the client asks of its sessions.
enum Request {
    /// The picker's rows.
    List,
    /// The `/sessions ID` completions.
    ListChoices,
    /// Switch to the session whose id starts with this.
    OpenById(String),
    /// Switch to this one.
    Switch(SessionTarget),
    /// Name the session in this file.
    Name(std::path::PathBuf, String),
    /// The chat shows the session.
    Ready,
    /// Close the session; answered once it is closed.
    Close(oneshot::Sender<()>),
}

/// The client's handle on its sessions. Cheap to clone; requests are carried out in
/// the order they were made.
#[derive(Clone)]
pub(super) struct SessionHost {
    requests: mpsc::UnboundedSender<Request>,
    /// Where the session's LLM requests are recorded, when they are.
    tap: Option<crate::llm::RequestTap>,
}

impl SessionHost {
    /// Hands `service` to the task that serves the client; it answers into `tx`.
    pub fn start(service: SessionService, agent: Agent, tx: MsgSender) -> Self {
        let (requests, incoming) = mpsc::unbounded_channel();
        let tap = service.request_tap();
        tokio::spawn(serve(service, agent, incoming, tx));
        Self { requests, tap }
    }

    /// Carries out one of the sessions slice's effects; the answers come back through
    /// the inbox.
    pub fn run(&self, effect: sessions::Effect) {
        match effect {
            sessions::Effect::New => self.switch(SessionTarget::New),
            sessions::Effect::Open { path, fork: false } => {
                self.switch(SessionTarget::Resume(path));
            }
            sessions::Effect::Open { path, fork: true } => self.switch(SessionTarget::Fork(path)),
            sessions::Effect::OpenById(prefix) => self.open_by_id(prefix),
            sessions::Effect::List => self.list(),
            sessions::Effect::ListChoices => self.list_choices(),
            sessions::Effect::Ready => self.ready(),
            sessions::Effect::Name { path, name } => self.name(path, name),
        }
    }

    /// Lists the workspace's sessions into the picker.
    pub fn list(&self) {
        let _ = self.requests.send(Request::List);
    }

    /// Names the session in `path` (its side file `<session>.name`, in claw-tui's own
    /// data dir); the chat hears how it went.
    fn name(&self, path: std::path::PathBuf, name: String) {
        let _ = self.requests.send(Request::Name(path, name));
    }

    /// Lists the workspace's sessions for `/sessions ID` completion.
    pub fn list_choices(&self) {
        let _ = self.requests.send(Request::ListChoices);
    }

    /// Switches to the session whose id starts with `prefix` (`/sessions ID`).
    pub fn open_by_id(&self, prefix: String) {
        let _ = self.requests.send(Request::OpenById(prefix));
    }

    /// Switches to `target`; the chat hears back through the inbox.
    pub fn switch(&self, target: SessionTarget) {
        let _ = self.requests.send(Request::Switch(target));
    }

    /// Where the session's requests are recorded (`None`: they are not).
    pub fn request_tap(&self) -> Option<crate::llm::RequestTap> {
        self.tap.clone()
    }

    /// The chat shows the session: what waits for it may start now.
    pub fn ready(&self) {
        let _ = self.requests.send(Request::Ready);
    }

    /// Stops recording: everything recorded is synced and the file closed.
    pub async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.requests.send(Request::Close(done)).is_ok() {
            let _ = closed.await;
        }
    }
}

/// Starts recording the session the launcher opened (`None`: sessions are off);
/// returns what the chat shows first and how saving it goes.
pub(super) fn first_session(
    service: &mut SessionService,
    agent: &Agent,
    opened: Option<OpenedSession>,
) -> (LoadedSession, Option<SaveWatch>) {
    let Some(opened) = opened else {
        let quiet = LoadedSession {
            quiet: true,
            ..LoadedSession::default()
        };
        return (quiet, None);
    };
    let entered = service.record(opened, Resume::OnScreen);
    let saving = entered.saving.clone();
    (shown(agent, entered, true), Some(saving))
}

async fn serve(
    mut service: SessionService,
    agent: Agent,
    mut requests: mpsc::UnboundedReceiver<Request>,
    tx: MsgSender,
) {
    while let Some(request) = requests.recv().await {
        match request {
            Request::Name(path, name) => {
                let tx = tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(named(&path, &name));
                });
            }
            Request::List => match service.list().await {
                Some(sessions) => {
                    let _ = tx.send(Msg::Sessions(sessions::Msg::List(
                        sessions.into_iter().map(row).collect(),
                    )));
                }
                None => {
                    let _ = tx.send(Msg::Notice(
                        NoticeLevel::Info,
                        "Sessions are off in this run (--no-session).".into(),
                    ));
                }
            },
            Request::ListChoices => {
                if let Some(sessions) = service.list().await {
                    let _ = tx.send(Msg::Sessions(sessions::Msg::Choices(choices(sessions))));
                }
            }
            Request::OpenById(prefix) => match service.find(prefix).await {
                Ok(path) => switch(&mut service, &agent, SessionTarget::Resume(path), &tx).await,
                Err(e) => {
                    let _ = tx.send(Msg::Sessions(sessions::Msg::Failed(Arc::new(e))));
                }
            },
            Request::Switch(target) => switch(&mut service, &agent, target, &tx).await,
            Request::Ready => service.ready(),
            Request::Close(done) => {
                service.close().await;
                let _ = done.send(());
                return;
            }
        }
    }
    // The client went away without closing: the session is closed all the same.
    service.close().await;
}

async fn switch(
    service: &mut SessionService,
    agent: &Agent,
    target: SessionTarget,
    tx: &MsgSender,
) {
    match service.switch(target).await {
        Ok(Some(entered)) => {
            let saving = entered.saving.clone();
            let _ = tx.send(Msg::Sessions(sessions::Msg::Loaded(Box::new(shown(
                agent, entered, false,
            )))));
            // After the chat shows the new session, which forgets the old one's trouble:
            // nothing this one reports comes before it.
            forward_saving(saving, tx.clone());
        }
        // Sessions are off: only the conversation was cleared.
        Ok(None) => {
            let _ = tx.send(Msg::Sessions(sessions::Msg::Loaded(Box::default())));
        }
        Err(SwitchError::Locked { path, id }) => {
            let _ = tx.send(Msg::Sessions(sessions::Msg::Locked { path, id }));
        }
        Err(e) => {
            let _ = tx.send(Msg::Sessions(sessions::Msg::Failed(Arc::new(e))));
        }
    }
}

/// What the chat shows for the session `entered`; `first` when it is the one the flags
/// opened (a fresh one says what opening it found, if anything).
fn shown(agent: &Agent, entered: Entered, first: bool) -> LoadedSession {
    let Entered {
        id,
        path,
        resumed,
        shown,
        notes,
        ..
    } = entered;
    let loaded = match resumed {
        Some(data) => loaded_from(agent, &data, shown, &id),
        None => LoadedSession {
            id: Some(id),
            quiet: first && notes.is_empty(),
            notes: if first { notes } else { Vec::new() },
            ..LoadedSession::default()
        },
    };
    LoadedSession {
        path: Some(path),
        ..loaded
    }
}

/// Sends the chat a message when saving starts failing and when it works again, until
/// the writer is closed.
pub(super) fn forward_saving(mut status: SaveWatch, tx: MsgSender) {
    tokio::spawn(async move {
        let (mut reported, mut failing) = (0, false);
        let (mut side_reported, mut side_failing) = (0, false);
        loop {
            let now = status.borrow_and_update().clone();
            // The logs beside the session are said apart: the conversation is not at stake.
            if now.side_failures > side_reported {
                side_reported = now.side_failures;
                side_failing = true;
                for (log, error) in &now.side_logs {
                    let text = crate::session::side_log::failing_text(log, error);
                    let _ = tx.send(Msg::Notice(NoticeLevel::Warning, text));
                }
            }
            if side_failing && now.side_logs.is_empty() {
                side_failing = false;
                let text = "The logs beside the session are written again; nothing is missing \
                            from them."
                    .to_owned();
                let _ = tx.send(Msg::Notice(NoticeLevel::Info, text));
            }
            if now.failures > reported {
                reported = now.failures;
                failing = true;
                let error = now.error.clone().unwrap_or_else(|| "a write failed".into());
                let _ = tx.send(Msg::Sessions(sessions::Msg::Save(Some(error))));
            }
            if failing && now.error.is_none() {
                failing = false;
                let _ = tx.send(Msg::Sessions(sessions::Msg::Save(None)));
            }
            if status.changed().await.is_err() {
                return;
            }
        }
    });
}

/// What the chat shows for `data` continued in the session `id` (its own, or a copy),
/// once `agent` holds its history, `messages`: the chat shows the agent's own messages,
/// so a long history is in memory once.
fn loaded_from(
    agent: &Agent,
    data: &SessionData,
    messages: Arc<[Message]>,
    id: &str,
) -> LoadedSession {
    let mut notes: Vec<String> = data.warnings.clone();
    // What of the subagents' calls could not be read is said with the session's own.
    let session::SubagentCalls {
        calls: nested,
        warnings,
    } = session::read_subagent_calls(&data.path);
    notes.extend(warnings);
    let copy = data.id() != id;
    if copy {
        notes.push(format!(
            "Continuing in a new session {} with a copy of session {}'s {} messages.",
            short(id),
            short(data.id()),
            messages.len()
        ));
    } else if !data.pending_notifications.is_empty() {
        notes.push(format!(
            "{} notification(s) arrived for this session while it was not open; delivering them now.",
            data.pending_notifications.len()
        ));
    }
    LoadedSession {
        id: Some(id.to_owned()),
        messages,
        queued: data
            .steering
            .iter()
            .map(QueuedText::steer)
            .chain(data.follow_up.iter().map(QueuedText::follow_up))
            .collect(),
        path: None,
        resumed: !copy,
        quiet: false,
        notes,
        nested,
        compactions: data.compactions.clone(),
        context: Some(agent.context_usage()),
    }
}

/// What the chat says once `/name` wrote (or removed) the session's name.
fn named(path: &std::path::Path, name: &str) -> Msg {
    match crate::session::name::write_name(path, name) {
        Ok(kept) if kept.is_empty() => {
            Msg::Notice(NoticeLevel::Info, "The session's name is removed.".into())
        }
        Ok(kept) => Msg::Notice(
            NoticeLevel::Info,
            format!("Session named \"{kept}\" (the /sessions picker shows and finds it)."),
        ),
        Err(e) => Msg::Notice(NoticeLevel::Error, format!("Cannot name the session: {e}")),
    }
}

fn row(s: session::SessionSummary) -> SessionRow {
    SessionRow {
        id: s.id,
        path: s.path,
        created: at(s.created),
        last_activity: at(s.last_activity),
        first_prompt: s.first_prompt,
        message_count: s.message_count,
        waiting: s.waiting,
        name: s.name,
        last: s.last_exchange,
    }
}

/// Each session's short id with its age, how many results wait in it, and its first
/// prompt.
fn choices(sessions: Vec<session::SessionSummary>) -> Vec<(String, String)> {
    let now = SystemTime::now();
    sessions
        .into_iter()
        .map(|s| {
            let mut about = vec![crate::tui::overlay::ago(now, at(s.last_activity))];
            if s.waiting > 0 {
                about.push(format!("{} waiting", s.waiting));
            }
            let prompt = s.first_prompt.as_deref().unwrap_or("(no prompt yet)");
            about.push(crate::text::clip(&prompt.replace('\n', " "), 50));
            (short(&s.id).to_owned(), about.join(" · "))
        })
        .collect()
}

fn short(id: &str) -> &str {
    &id[..id.len().min(8)]
}

fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}
