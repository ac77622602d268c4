//! The editor's own file system, when the user turns it on (`[acp] editor_files`) and
//! the client offers it: the file tools read a file's text with `fs/read_text_file`
//! (the editor's buffer, unsaved changes included) and write it with
//! `fs/write_text_file` (into the buffer, which the editor shows and saves). The tools
//! keep every check of their own (see `tools::fs::EditorBuffers`); only the bytes go
//! through the editor, and only while none of the session's commands runs (one could
//! swap a symlink in between the check and the editor's open).

use crate::config::Settings;
use crate::setup::MainRuntime;
use crate::tools::fs::{ChangeObserver, EditorAccess, EditorBuffers, file_tools_in};
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, SessionId, WriteTextFileRequest,
};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Longest the editor may take to answer a read or a write: a tool call is not held
/// forever by an editor that never answers.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// A session's files as its editor has them.
struct EditorFiles {
    cx: ConnectionTo<Client>,
    session: SessionId,
    runtime: tokio::runtime::Handle,
}

impl EditorFiles {
    /// Waits for the editor's `answer` to a request, from a thread off the runtime
    /// (where the file tools run).
    fn wait<T>(
        &self,
        answer: impl Future<Output = Result<T, agent_client_protocol::Error>>,
        what: &str,
        path: &Path,
    ) -> io::Result<T> {
        let answer = self
            .runtime
            .block_on(async { tokio::time::timeout(ANSWER_WITHIN, answer).await });
        match answer {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(io::Error::other(format!(
                "the editor could not {what} {}: {}",
                path.display(),
                said(&e)
            ))),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the editor did not {what} {} within {} s",
                    path.display(),
                    ANSWER_WITHIN.as_secs()
                ),
            )),
        }
    }
}

impl EditorBuffers for EditorFiles {
    fn read(&self, path: &Path) -> io::Result<String> {
        let request = ReadTextFileRequest::new(self.session.clone(), path);
        let answer = self.cx.send_request(request).block_task();
        self.wait(answer, "read", path).map(|r| r.content)
    }

    fn write(&self, path: &Path, text: &str) -> io::Result<()> {
        let request = WriteTextFileRequest::new(self.session.clone(), path, text);
        let answer = self.cx.send_request(request).block_task();
        self.wait(answer, "write", path).map(|_| ())
    }
}

/// What an editor's error says: its message, and its details when it gives any.
pub(super) fn said(error: &agent_client_protocol::Error) -> String {
    match &error.data {
        None | Some(serde_json::Value::Null) => error.message.clone(),
        Some(serde_json::Value::String(details)) => format!("{} ({details})", error.message),
        Some(serde_json::Value::Object(data))
            if data.get("details").is_some_and(|d| d.is_string()) =>
        {
            format!(
                "{} ({})",
                error.message,
                data["details"].as_str().unwrap_or_default()
            )
        }
        Some(data) => format!("{} ({data})", error.message),
    }
}

/// Gives the session's file tools the editor's file system when `[acp] editor_files`
/// asks for it and the client offers both reads and writes; the warning to tell when
/// it is asked for and not offered.
pub fn use_files(
    settings: &Settings,
    client: &ClientCapabilities,
    main: &MainRuntime,
    cx: &ConnectionTo<Client>,
    session: &str,
) -> Option<String> {
    if !settings.file.acp.editor_files {
        return None;
    }
    if !(client.fs.read_text_file && client.fs.write_text_file) {
        return Some(
            "[acp] editor_files is on, but this editor does not offer fs/read_text_file and \
             fs/write_text_file: the file tools read and write the disk"
                .to_owned(),
        );
    }
    let files = EditorFiles {
        cx: cx.clone(),
        session: session.to_owned().into(),
        runtime: tokio::runtime::Handle::current(),
    };
    let checkpoints = &main.controls.checkpoints;
    let observer = Some(Arc::new(checkpoints.clone()) as Arc<dyn ChangeObserver>);
    let access = EditorAccess {
        editor: Arc::new(files),
        commands: main.exec.running(),
    };
    let tools = file_tools_in(checkpoints.workspace().clone(), observer, Some(access));
    for tool in tools {
        main.policy.register(tool);
    }
    main.controls.modes.reequip();
    None
}
