//! A real runtime (`setup::start_runtime_with` on settings read from a config file) on a
//! scripted model, for the hooks, checkpoints and plan-mode tests: prompts go in as the
//! front-ends send them, and the workspace is a temp dir the tests look at.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use super::runtime::settings;
use super::{DEADLINE, Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::AgentEvent;
use claw_tui::config::Settings;
use claw_tui::hooks::PromptDecision;
use claw_tui::runtime::RuntimeEvent;
use claw_tui::session::SessionWriter;
use claw_tui::setup::{MainRuntime, start_runtime_with};
use claw_tui::tools::exec::Approver;
use claw_tui::tools::message::MessageSender;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

/// A runtime, its scripted model and its workspace.
pub struct Rig {
    /// The temp home (config, workspace, data), removed with the rig.
    _home: TempDir,
    /// Where the tests' hook scripts are (`{scripts}` in the config).
    pub scripts: TempDir,
    pub settings: Settings,
    pub provider: Arc<ScriptedProvider>,
    pub main: MainRuntime,
    /// The session file, when [`Rig::with_session`] opened one.
    pub session: Option<PathBuf>,
    /// The session's recorder.
    recorder: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<claw_tui::session::SaveStatus>,
    )>,
}

/// Writes an executable script `name` with `body` into `dir`; returns its path.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

impl Rig {
    /// The runtime on the config text `config`, answering with `replies`; `scripts`
    /// writes the hook scripts into the dir it is given, which `{scripts}` in the config
    /// names.
    pub fn start(config: &str, scripts: &[(&str, &str)], replies: Vec<Reply>) -> Rig {
        Self::start_with(config, scripts, replies, Approver::Nobody)
    }

    /// [`Rig::start`] with an approver.
    pub fn start_with(
        config: &str,
        scripts: &[(&str, &str)],
        replies: Vec<Reply>,
        approver: Approver,
    ) -> Rig {
        Self::start_tuned(config, scripts, replies, approver, |_, _| {})
    }

    /// [`Rig::start_with`], with the settings changed by `tune` (given the scripts dir)
    /// before the runtime is built.
    pub fn start_tuned(
        config: &str,
        scripts: &[(&str, &str)],
        replies: Vec<Reply>,
        approver: Approver,
        tune: impl FnOnce(&mut Settings, &Path),
    ) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in scripts {
            script(dir.path(), name, body);
        }
        let config = config.replace("{scripts}", &dir.path().display().to_string());
        let (home, mut settings) = settings(&config);
        tune(&mut settings, dir.path());
        let provider = ScriptedProvider::new(replies);
        let outbound: MessageSender = Arc::new(|_| {});
        let main = start_runtime_with(&settings, provider.clone(), outbound, approver).unwrap();
        Rig {
            _home: home,
            scripts: dir,
            settings,
            provider,
            main,
            session: None,
            recorder: None,
        }
    }

    /// A path in the scripts dir (where hooks leave their traces).
    pub fn trace(&self, name: &str) -> PathBuf {
        self.scripts.path().join(name)
    }

    /// Opens a new session and makes it the active one (its checkpoints beside it).
    pub fn with_session(mut self) -> Rig {
        let writer = SessionWriter::create(
            &self.settings.data_dir,
            &self.settings.workspace,
            "demo",
            "scripted",
        )
        .unwrap();
        self.main
            .session_binding(&self.settings)
            .enter(&writer, None);
        self.session = Some(writer.path().to_path_buf());
        self.recorder = Some(claw_tui::session::record_events(&self.main.agent, writer));
        self
    }

    /// Stops recording the session (everything recorded is synced and the file closed)
    /// and reads it back.
    pub async fn close_session(&mut self) -> claw_tui::session::SessionData {
        let (finish, task) = self.recorder.take().expect("no session is recorded");
        // `state()` returns only after the last event was handed to the recorder.
        let _ = self.main.agent.state();
        let _ = finish.send(());
        task.await.unwrap();
        claw_tui::session::load(self.session.as_ref().unwrap()).unwrap()
    }

    /// The workspace.
    pub fn ws(&self) -> &Path {
        &self.settings.workspace
    }

    /// A file in the workspace.
    pub fn file(&self, name: &str) -> PathBuf {
        self.ws().join(name)
    }

    /// Sends `text` as the front-ends do (prompt hooks first) and waits for the run.
    pub async fn prompt(&mut self, text: &str) -> Vec<AgentEvent> {
        let mut events = self.main.agent.subscribe(None);
        match self.main.controls.hooks.prompt(text).await {
            PromptDecision::Send(text) => {
                self.main.supervisor.submit(text);
            }
            PromptDecision::Block(reason) => panic!("the prompt was blocked: {reason}"),
        }
        until_agent_end(&mut events).await
    }

    /// The next `hook_warning` event's message.
    pub async fn next_hook_warning(&mut self) -> String {
        loop {
            let event = tokio::time::timeout(DEADLINE, self.main.events.recv())
                .await
                .expect("no hook warning came")
                .expect("runtime events closed");
            if let RuntimeEvent::HookWarning { message, .. } = event {
                return message;
            }
        }
    }
}
