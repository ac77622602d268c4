//! The editor's terminal, when the user turns it on (`[acp] editor_terminal`) and the
//! client offers it: `exec` runs each command with `terminal/create` (`sh -c`, in the
//! call's working directory), the call's update embeds the terminal so the editor shows
//! it live, and the result is the terminal's output and exit status. The command runs
//! as the editor runs it, outside claw-tui's sandbox, so every command is put to the
//! user first (the policy's approval, in `ask` mode whatever `[exec] approval` says,
//! unless it says `always-deny`).

use crate::config::Settings;
use crate::setup::MainRuntime;
use crate::tools::exec::{ApprovalMode, CommandTerminal, TerminalRun};
use crate::tools::policy::ToolRules;
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest,
    SessionId, TerminalOutputRequest, WaitForTerminalExitRequest,
};
use async_trait::async_trait;
use claw_agent::ToolUpdates;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The key of the partial update that names the call's terminal (the presenter embeds
/// it in the call's update).
pub const TERMINAL_ID: &str = "terminal_id";

/// Longest the editor may take to answer one of the terminal requests other than the
/// wait for the command's exit.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// A session's commands in its editor's terminal.
struct EditorTerminal {
    cx: ConnectionTo<Client>,
    session: SessionId,
    /// Most bytes of output the editor keeps (`[exec] max_output_bytes`).
    output_limit: u64,
}

/// Waits at most [`ANSWER_WITHIN`] for `answer`; the error names `what` was asked.
async fn answered<T>(
    answer: impl Future<Output = Result<T, agent_client_protocol::Error>>,
    what: &str,
) -> Result<T, String> {
    match tokio::time::timeout(ANSWER_WITHIN, answer).await {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(e)) => Err(format!(
            "the editor refused {what}: {}",
            super::editor::said(&e)
        )),
        Err(_) => Err(format!(
            "the editor did not answer {what} within {} s",
            ANSWER_WITHIN.as_secs()
        )),
    }
}

#[async_trait]
impl CommandTerminal for EditorTerminal {
    fn name(&self) -> &str {
        "the editor's terminal"
    }

    async fn run(
        &self,
        command: &str,
        cwd: &Path,
        timeout: Duration,
        cancel: &CancellationToken,
        updates: &ToolUpdates,
    ) -> Result<TerminalRun, String> {
        let create = CreateTerminalRequest::new(self.session.clone(), "sh")
            .args(vec!["-c".to_owned(), command.to_owned()])
            .cwd(cwd.to_path_buf())
            .output_byte_limit(self.output_limit);
        let created =
            answered(self.cx.send_request(create).block_task(), "terminal/create").await?;
        let id = created.terminal_id;
        updates.send(json!({ TERMINAL_ID: id.0.as_ref() }));
        let wait = WaitForTerminalExitRequest::new(self.session.clone(), id.clone());
        let mut run = TerminalRun::default();
        tokio::select! {
            exited = self.cx.send_request(wait).block_task() => {
                if let Err(e) = exited {
                    run.output = format!(
                        "(the editor's wait for the command failed: {})\n",
                        super::editor::said(&e)
                    );
                }
            }
            () = tokio::time::sleep(timeout) => run.timed_out = true,
            () = cancel.cancelled() => run.cancelled = true,
        }
        if run.timed_out || run.cancelled {
            let kill = KillTerminalRequest::new(self.session.clone(), id.clone());
            // Killed or not, the output so far is read and the terminal released.
            let _ = answered(self.cx.send_request(kill).block_task(), "terminal/kill").await;
        }
        let output = TerminalOutputRequest::new(self.session.clone(), id.clone());
        let read = answered(self.cx.send_request(output).block_task(), "terminal/output").await;
        let release = ReleaseTerminalRequest::new(self.session.clone(), id);
        let _ = answered(
            self.cx.send_request(release).block_task(),
            "terminal/release",
        )
        .await;
        let read = read?;
        run.output.push_str(&read.output);
        run.truncated = read.truncated;
        if let Some(status) = read.exit_status {
            run.exit_code = status.exit_code.and_then(|c| i32::try_from(c).ok());
            run.signal = status.signal;
        }
        Ok(run)
    }
}

/// Runs the session's commands in the editor's terminal when `[acp] editor_terminal`
/// asks for it and the client offers one, each put to the user first; the warning to
/// tell when it is asked for and not offered.
pub fn use_terminal(
    settings: &Settings,
    client: &ClientCapabilities,
    main: &MainRuntime,
    cx: &ConnectionTo<Client>,
    session: &str,
) -> Option<String> {
    if !settings.file.acp.editor_terminal {
        return None;
    }
    if !client.terminal {
        return Some(
            "[acp] editor_terminal is on, but this editor does not offer terminal/*: \
             commands run in claw-tui's sandbox"
                .to_owned(),
        );
    }
    main.exec.run_in_terminal(Arc::new(EditorTerminal {
        cx: cx.clone(),
        session: session.to_owned().into(),
        output_limit: u64::try_from(settings.file.exec.max_output_bytes).unwrap_or(u64::MAX),
    }));
    // Outside the sandbox, every command is the user's to allow.
    let mut rules: ToolRules = main.policy.default_rules(main.exec.as_ref());
    if rules.approval != ApprovalMode::AlwaysDeny {
        rules.approval = ApprovalMode::Ask;
    }
    main.policy.register_with(main.exec.clone(), rules);
    main.controls.modes.reequip();
    None
}
