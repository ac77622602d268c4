//! A real runtime (`setup::start_runtime_with`) on a scripted model with MCP servers
//! from a real config file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::mcp::{HttpFixture, http_table, is_ready, stdio_table, wait_for_server};
use crate::support::runtime::settings;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::AgentEvent;
use claw_tui::llm::Provider;
use claw_tui::setup::{MainRuntime, start_runtime_with};
use claw_tui::tools::exec::Approver;
use claw_tui::tools::message::MessageSender;
use std::path::PathBuf;
use std::sync::Arc;
use tempfile::TempDir;

/// How the fixture is reached.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    Stdio,
    Http,
}

pub struct McpEnv {
    pub _home: TempDir,
    pub logs: TempDir,
    pub main: MainRuntime,
    pub provider: Arc<ScriptedProvider>,
    pub http: Option<HttpFixture>,
}

impl McpEnv {
    /// The fixture as server `fixture` (with `extra` settings in its table), plus
    /// `config`, and the main agent scripted with `replies`; returns once it is ready.
    pub async fn start(via: Via, extra: &str, config: &str, replies: Vec<Reply>) -> Self {
        let provider = ScriptedProvider::new(replies);
        Self::start_with(via, extra, config, provider.clone(), provider).await
    }

    /// [`Self::start`] on `provider`; `script` is the one whose requests tests read.
    pub async fn start_with(
        via: Via,
        extra: &str,
        config: &str,
        provider: Arc<dyn Provider>,
        script: Arc<ScriptedProvider>,
    ) -> Self {
        let logs = tempfile::tempdir().unwrap();
        let log = logs.path().join("fixture.log");
        let (table, http) = match via {
            Via::Stdio => (stdio_table("fixture", &log, extra), None),
            Via::Http => {
                let http = HttpFixture::start(&log);
                (http_table("fixture", &http.url, extra), Some(http))
            }
        };
        let (home, settings) = settings(&format!("{config}\n{table}"));
        let outbound: MessageSender = Arc::new(|_| {});
        let mut main = start_runtime_with(&settings, provider, outbound, Approver::Nobody).unwrap();
        wait_for_server(&mut main.events, "fixture", is_ready).await;
        Self {
            _home: home,
            logs,
            main,
            provider: script,
            http,
        }
    }

    /// The servers of `tables` (config text), each waited for until ready, and the
    /// main agent scripted with `replies`.
    pub async fn with_tables(tables: &str, servers: &[&str], replies: Vec<Reply>) -> Self {
        let (home, settings) = settings(tables);
        let provider = ScriptedProvider::new(replies);
        let outbound: MessageSender = Arc::new(|_| {});
        let mut main =
            start_runtime_with(&settings, provider.clone(), outbound, Approver::Nobody).unwrap();
        for server in servers {
            wait_for_server(&mut main.events, server, is_ready).await;
        }
        Self {
            _home: home,
            logs: tempfile::tempdir().unwrap(),
            main,
            provider,
            http: None,
        }
    }

    pub fn log(&self) -> PathBuf {
        self.logs.path().join("fixture.log")
    }

    /// Submits `prompt` and collects the run's events.
    pub async fn run(&self, prompt: &str) -> Vec<AgentEvent> {
        let mut rx = self.main.agent.subscribe(None);
        self.main.supervisor.submit(prompt.to_owned());
        until_agent_end(&mut rx).await
    }

    pub async fn stop(self) {
        self.main.subagents.shutdown().await;
        self.main.supervisor.stop().await;
        self.main.mcp.shutdown().await;
    }
}

/// The names of the tools offered in a request.
pub fn offered(request: &claw_tui::llm::LlmRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}
