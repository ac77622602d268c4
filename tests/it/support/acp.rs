//! Driving `claw-tui acp` (the real binary) with the ACP SDK's own client role: the
//! process's stdin and stdout are the transport, every `session/update` and every
//! permission request it sends is recorded, and permission requests are answered from
//! a script. What the process wrote to stderr is kept for the failure messages.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod terminal;
pub use terminal::Terminals;

use super::DEADLINE;
use super::bin::Sandbox;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, CreateTerminalRequest, InitializeRequest, InitializeResponse,
    KillTerminalRequest, NewSessionRequest, PromptRequest, PromptResponse, ReadTextFileRequest,
    ReadTextFileResponse, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, SessionUpdate, TerminalOutputRequest, TextContent,
    WaitForTerminalExitRequest, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, Client, Error, Lines, RequestCancellation};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::Notify;

/// What the client saw, shared with the test.
#[derive(Default)]
pub struct Seen {
    pub updates: Mutex<Vec<SessionNotification>>,
    pub permissions: Mutex<Vec<RequestPermissionRequest>>,
    /// Option ids to answer permission requests with, in order (none left: cancelled;
    /// `hold`: not answered, the request kept in `held`).
    pub answers: Mutex<VecDeque<String>>,
    /// Permission requests held unanswered, with the marker the agent's
    /// `$/cancel_request` sets.
    pub held: Mutex<Vec<(Responder<RequestPermissionResponse>, RequestCancellation)>>,
    /// The editor's buffers: `fs/read_text_file` answers from here (else from the
    /// disk), `fs/write_text_file` writes here.
    pub buffers: Mutex<HashMap<PathBuf, String>>,
    /// Every `fs/*` request: the method (`read`, `write`) and the path.
    pub file_requests: Mutex<Vec<(&'static str, PathBuf)>>,
    /// The editor's terminals.
    pub terminals: Terminals,
    changed: Notify,
}

impl Seen {
    /// The updates so far.
    pub fn updates(&self) -> Vec<SessionUpdate> {
        self.updates
            .lock()
            .unwrap()
            .iter()
            .map(|n| n.update.clone())
            .collect()
    }

    /// Waits until an update matches (any time so far); returns its index.
    pub async fn until(&self, what: &str, pred: impl Fn(&SessionUpdate) -> bool) -> usize {
        let wait = async {
            loop {
                let changed = self.changed.notified();
                if let Some(at) = self.updates().iter().position(&pred) {
                    return at;
                }
                changed.await;
            }
        };
        match tokio::time::timeout(DEADLINE, wait).await {
            Ok(at) => at,
            Err(_) => panic!("no update: {what}; saw {:#?}", self.updates()),
        }
    }

    /// Waits until a permission request is held unanswered.
    pub async fn until_held(&self) {
        let wait = async {
            loop {
                let changed = self.changed.notified();
                if !self.held.lock().unwrap().is_empty() {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(DEADLINE, wait)
            .await
            .expect("no permission request was held");
    }

    /// The text of the agent's message chunks, in order.
    pub fn agent_text(&self) -> String {
        self.updates()
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::AgentMessageChunk(c) => text_of(&c.content),
                _ => None,
            })
            .collect()
    }
}

/// The text of a text block.
pub fn text_of(block: &ContentBlock) -> Option<String> {
    match block {
        ContentBlock::Text(t) => Some(t.text.clone()),
        _ => None,
    }
}

/// A running `claw-tui acp` and the client connected to it.
pub struct Session<'a> {
    pub cx: &'a ConnectionTo<Agent>,
    pub seen: &'a Seen,
}

impl Session<'_> {
    /// `initialize` with protocol version 1.
    pub async fn initialize(&self) -> InitializeResponse {
        self.cx
            .send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await
            .unwrap()
    }

    /// `initialize` offering `capabilities` (the editor's file system, its terminal).
    pub async fn initialize_with(&self, capabilities: ClientCapabilities) -> InitializeResponse {
        self.cx
            .send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities),
            )
            .block_task()
            .await
            .unwrap()
    }

    /// `initialize`, then `session/new` in `cwd`: the session id.
    pub async fn open(&self, cwd: &std::path::Path) -> String {
        self.initialize().await;
        self.open_initialized(cwd).await
    }

    /// `session/new` in `cwd` (after `initialize`): the session id.
    pub async fn open_initialized(&self, cwd: &std::path::Path) -> String {
        let response = self
            .cx
            .send_request(NewSessionRequest::new(cwd))
            .block_task()
            .await
            .unwrap();
        response.session_id.0.to_string()
    }

    /// `session/prompt` with `text`, waiting for its answer.
    pub async fn prompt(&self, session: &str, text: &str) -> Result<PromptResponse, Error> {
        let request = PromptRequest::new(
            session.to_owned(),
            vec![ContentBlock::Text(TextContent::new(text))],
        );
        tokio::time::timeout(DEADLINE, self.cx.send_request(request).block_task())
            .await
            .unwrap_or_else(|_| panic!("no answer to the prompt {text:?}"))
    }
}

/// How the process ended.
pub struct Finished<R> {
    /// What the test body returned.
    pub value: R,
    pub code: i32,
    pub stderr: String,
    /// Every line the agent wrote to stdout.
    pub stdout: Vec<String>,
}

/// Runs `claw-tui acp` in `sandbox` with `args` added (before `acp`), connects the
/// SDK's client to it, answers permission requests with `answers` (option ids, in
/// order), runs `body`, then closes stdin and waits for the exit.
pub async fn drive<R>(
    sandbox: &Sandbox,
    args: &[&str],
    answers: &[&str],
    body: impl AsyncFnOnce(Session<'_>) -> R,
) -> Finished<R> {
    let mut cmd = Command::from(sandbox.command());
    cmd.args(args)
        .arg("acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr_task = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text).await;
        text
    });
    let wire = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::new(Seen::default());
    seen.answers
        .lock()
        .unwrap()
        .extend(answers.iter().map(|a| (*a).to_owned()));
    let outgoing = futures::sink::unfold(stdin, async |mut w, line: String| {
        w.write_all(line.as_bytes()).await?;
        w.write_all(b"\n").await?;
        w.flush().await?;
        Ok::<_, std::io::Error>(w)
    });
    let recorded = wire.clone();
    let incoming = futures::stream::unfold(BufReader::new(stdout).lines(), move |mut lines| {
        let recorded = recorded.clone();
        async move {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    recorded.lock().unwrap().push(line.clone());
                    Some((Ok(line), lines))
                }
                Ok(None) => None,
                Err(e) => Some((Err(e), lines)),
            }
        }
    });
    let transport = Lines::new(Box::pin(outgoing), Box::pin(incoming));
    let (on_update, on_permission) = (seen.clone(), seen.clone());
    let (on_read, on_write) = (seen.clone(), seen.clone());
    let (t1, t2, t3, t4, t5) = (
        seen.clone(),
        seen.clone(),
        seen.clone(),
        seen.clone(),
        seen.clone(),
    );
    let value = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                on_update.updates.lock().unwrap().push(notification);
                on_update.changed.notify_waiters();
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let answer = on_permission.answers.lock().unwrap().pop_front();
                on_permission.permissions.lock().unwrap().push(request);
                on_permission.changed.notify_waiters();
                if answer.as_deref() == Some("hold") {
                    let cancellation = responder.cancellation();
                    on_permission
                        .held
                        .lock()
                        .unwrap()
                        .push((responder, cancellation));
                    on_permission.changed.notify_waiters();
                    return Ok(());
                }
                let outcome = match answer {
                    Some(id) => {
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
                    }
                    None => RequestPermissionOutcome::Cancelled,
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let path = request.path;
                on_read
                    .file_requests
                    .lock()
                    .unwrap()
                    .push(("read", path.clone()));
                let buffered = on_read.buffers.lock().unwrap().get(&path).cloned();
                match buffered.map_or_else(|| std::fs::read_to_string(&path), Ok) {
                    Ok(text) => responder.respond(ReadTextFileResponse::new(text)),
                    Err(e) => responder.respond_with_error(Error::new(
                        agent_client_protocol::ErrorCode::RESOURCE_NOT_FOUND,
                        e.to_string(),
                    )),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                let path = request.path;
                on_write
                    .file_requests
                    .lock()
                    .unwrap()
                    .push(("write", path.clone()));
                on_write
                    .buffers
                    .lock()
                    .unwrap()
                    .insert(path, request.content);
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CreateTerminalRequest, responder, _cx| {
                responder.respond_with_result(t1.terminals.create(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WaitForTerminalExitRequest, responder, _cx| {
                t2.terminals.wait(request, responder);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: TerminalOutputRequest, responder, _cx| {
                responder.respond_with_result(t3.terminals.output(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: KillTerminalRequest, responder, _cx| {
                responder.respond_with_result(t4.terminals.kill(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReleaseTerminalRequest, responder, _cx| {
                responder.respond_with_result(t5.terminals.release(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            Ok(body(Session {
                cx: &cx,
                seen: &seen,
            })
            .await)
        })
        .await
        .unwrap();
    let status = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .expect("the agent did not exit after its stdin closed")
        .unwrap();
    let stderr = stderr_task.await.unwrap();
    let stdout = wire.lock().unwrap().clone();
    Finished {
        value,
        code: status.code().unwrap_or(-1),
        stderr,
        stdout,
    }
}
