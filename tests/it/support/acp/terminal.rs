//! An editor's terminal for the SDK's client role: `terminal/create` runs `sh -c` as a
//! real process in the directory asked, `terminal/wait_for_exit` answers when it has
//! exited, `terminal/output` gives what it printed, `terminal/kill` and
//! `terminal/release` end it. Every command asked for is recorded.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, CreateTerminalResponse, KillTerminalRequest, KillTerminalResponse,
    ReleaseTerminalRequest, ReleaseTerminalResponse, TerminalExitStatus, TerminalOutputRequest,
    TerminalOutputResponse, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
};
use agent_client_protocol::{Error, ErrorCode};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

/// One terminal: its output so far and, once it has exited, how.
struct Running {
    output: Arc<Mutex<String>>,
    exited: watch::Receiver<Option<TerminalExitStatus>>,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
}

/// The terminals, and what was asked of them.
#[derive(Default)]
pub struct Terminals {
    running: Mutex<HashMap<String, Running>>,
    /// Each `terminal/create`: the command line and the directory.
    pub created: Mutex<Vec<(Vec<String>, Option<PathBuf>)>>,
    /// Each other request: its method's last word and the terminal id.
    pub asked: Mutex<Vec<(&'static str, String)>>,
}

fn unknown(id: &str) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, format!("no terminal {id}"))
}

impl Terminals {
    /// `terminal/create`.
    pub fn create(&self, request: CreateTerminalRequest) -> Result<CreateTerminalResponse, Error> {
        let mut line = vec![request.command.clone()];
        line.extend(request.args.iter().cloned());
        self.created
            .lock()
            .unwrap()
            .push((line, request.cwd.clone()));
        let mut cmd = tokio::process::Command::new(&request.command);
        cmd.args(&request.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &request.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
        let output = Arc::new(Mutex::new(String::new()));
        let (exited_tx, exited) = watch::channel(None);
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let sink = output.clone();
        tokio::spawn(async move {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let read = async { tokio::join!(out.read_to_end(&mut a), err.read_to_end(&mut b)) };
            let status = tokio::select! {
                _ = read => child.wait().await.ok(),
                _ = killed => {
                    let _ = child.kill().await;
                    child.wait().await.ok()
                }
            };
            let mut text = sink.lock().unwrap();
            text.push_str(&String::from_utf8_lossy(&a));
            text.push_str(&String::from_utf8_lossy(&b));
            drop(text);
            let mut exit = TerminalExitStatus::new();
            if let Some(status) = status {
                use std::os::unix::process::ExitStatusExt;
                exit = exit
                    .exit_code(status.code().and_then(|c| u32::try_from(c).ok()))
                    .signal(status.signal().map(|s| format!("signal {s}")));
            }
            let _ = exited_tx.send(Some(exit));
        });
        let id = format!("term-{}", self.created.lock().unwrap().len());
        self.running.lock().unwrap().insert(
            id.clone(),
            Running {
                output,
                exited,
                kill: Some(kill),
            },
        );
        Ok(CreateTerminalResponse::new(id))
    }

    /// `terminal/wait_for_exit`: answered from a task of its own when the command ends.
    pub fn wait(
        &self,
        request: WaitForTerminalExitRequest,
        responder: Responder<WaitForTerminalExitResponse>,
    ) {
        let id = request.terminal_id.0.to_string();
        self.asked
            .lock()
            .unwrap()
            .push(("wait_for_exit", id.clone()));
        let Some(mut exited) = self
            .running
            .lock()
            .unwrap()
            .get(&id)
            .map(|r| r.exited.clone())
        else {
            let _ = responder.respond_with_error(unknown(&id));
            return;
        };
        tokio::spawn(async move {
            let status = exited.wait_for(Option::is_some).await.map(|s| s.clone());
            let _ = match status {
                Ok(Some(status)) => responder.respond(WaitForTerminalExitResponse::new(status)),
                _ => responder.respond_with_error(unknown(&id)),
            };
        });
    }

    /// `terminal/output`.
    pub fn output(&self, request: TerminalOutputRequest) -> Result<TerminalOutputResponse, Error> {
        let id = request.terminal_id.0.to_string();
        self.asked.lock().unwrap().push(("output", id.clone()));
        let running = self.running.lock().unwrap();
        let running = running.get(&id).ok_or_else(|| unknown(&id))?;
        let text = running.output.lock().unwrap().clone();
        let status = running.exited.borrow().clone();
        Ok(TerminalOutputResponse::new(text, false).exit_status(status))
    }

    /// `terminal/kill`.
    pub fn kill(&self, request: KillTerminalRequest) -> Result<KillTerminalResponse, Error> {
        let id = request.terminal_id.0.to_string();
        self.asked.lock().unwrap().push(("kill", id.clone()));
        let mut running = self.running.lock().unwrap();
        let running = running.get_mut(&id).ok_or_else(|| unknown(&id))?;
        if let Some(kill) = running.kill.take() {
            let _ = kill.send(());
        }
        Ok(KillTerminalResponse::new())
    }

    /// `terminal/release`.
    pub fn release(
        &self,
        request: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, Error> {
        let id = request.terminal_id.0.to_string();
        self.asked.lock().unwrap().push(("release", id.clone()));
        let mut running = self.running.lock().unwrap();
        let mut released = running.remove(&id).ok_or_else(|| unknown(&id))?;
        if let Some(kill) = released.kill.take() {
            let _ = kill.send(());
        }
        Ok(ReleaseTerminalResponse::new())
    }
}
