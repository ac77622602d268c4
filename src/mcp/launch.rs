//! Which servers a process starts (the user's, and the project's once trusted), the
//! warnings about the rest, and `claw-tui mcp list`.

use super::config::{PROJECT_FILE, ServerSpec, merge, read_project_file};
use super::manager::McpManager;
use super::state::McpServerState;
use super::trust::{TrustDecision, TrustStore};
use crate::config::Settings;
use crate::runtime::RuntimeEventSender;
use crate::tools::ToolRegistry;
use crate::tools::exec::Approver;
use crate::tools::policy::{PolicyConfig, ToolPolicy};
use crate::visible::{for_stderr, visible};
use std::path::PathBuf;

/// The user's answer about the project servers could not be saved.
#[derive(Debug, thiserror::Error)]
#[error("cannot remember the answer in {}: {source}", .data_dir.display())]
pub struct RememberTrustError {
    /// The data directory the trust file lives in.
    pub data_dir: PathBuf,
    /// Why writing it failed.
    #[source]
    pub source: std::io::Error,
}

/// The servers of this process, split by whether they may start.
#[derive(Clone, Debug, Default)]
pub struct McpPlan {
    /// The user's servers and the trusted project servers.
    pub start: Vec<ServerSpec>,
    /// Project servers waiting for the user's trust.
    pub untrusted: Vec<ServerSpec>,
    /// The workspace's `.mcp.json`.
    pub project_file: PathBuf,
    /// Whether the user never answered for these project servers (the client asks).
    pub ask_trust: bool,
    /// Problems with the project file, and names both files declare.
    pub warnings: Vec<String>,
}

impl McpPlan {
    /// One warning per skipped project server, for the modes that cannot ask.
    pub fn skipped_warnings(&self) -> Vec<String> {
        self.untrusted
            .iter()
            .map(|spec| {
                format!(
                    "skipped MCP server \"{}\" from {}: a project file can start programs, \
                     so its servers start only when trusted; pass --trust-project-mcp to \
                     start them",
                    spec.name,
                    self.project_file.display()
                )
            })
            .collect()
    }
}

/// The plan for `settings`: `--trust-project-mcp`, else the answer remembered in the
/// data dir, decides about the project's servers.
pub fn plan(settings: &Settings) -> McpPlan {
    let project = read_project_file(&settings.workspace);
    let (specs, notes) = merge(&settings.file.mcp, &project);
    let (user, project_specs): (Vec<ServerSpec>, Vec<ServerSpec>) = specs
        .into_iter()
        .partition(|s| s.origin == super::config::Origin::User);
    let mut plan = McpPlan {
        start: user,
        project_file: settings.workspace.join(PROJECT_FILE),
        warnings: project.problems.into_iter().chain(notes).collect(),
        ..McpPlan::default()
    };
    if project_specs.is_empty() {
        return plan;
    }
    let decision = if settings.trust_project_mcp {
        Some(TrustDecision::Trusted)
    } else {
        TrustStore::new(&settings.data_dir).decision(&settings.workspace, &project_specs)
    };
    match decision {
        Some(TrustDecision::Trusted) => plan.start.extend(project_specs),
        Some(TrustDecision::Declined) => plan.untrusted = project_specs,
        None => {
            plan.ask_trust = true;
            plan.untrusted = project_specs;
        }
    }
    plan
}

/// Remembers the user's answer about the workspace's project servers.
pub fn remember_trust(
    settings: &Settings,
    servers: &[ServerSpec],
    decision: TrustDecision,
) -> Result<(), RememberTrustError> {
    TrustStore::new(&settings.data_dir)
        .remember(&settings.workspace, servers, decision)
        .map_err(|source| RememberTrustError {
            data_dir: settings.data_dir.clone(),
            source,
        })
}

/// `claw-tui mcp list`: connects to every server that may start, prints each with its
/// state and tools, and stops them. Exit code 1 when an enabled server failed.
pub async fn list(settings: &Settings) -> i32 {
    let plan = plan(settings);
    for warning in &plan.warnings {
        eprintln!("claw-tui: warning: {}", for_stderr(warning));
    }
    if plan.start.is_empty() && plan.untrusted.is_empty() {
        println!(
            "No MCP servers configured: add [mcp.servers.NAME] to {} or a {PROJECT_FILE} \
             to the workspace.",
            settings.config_path.display()
        );
        return crate::headless::EXIT_OK;
    }
    // A policy of its own: the tools are listed, never offered to an agent.
    let policy = ToolPolicy::new(
        ToolRegistry::new(),
        PolicyConfig::default(),
        Approver::Nobody,
    );
    let manager = McpManager::new(
        plan.start.clone(),
        plan.untrusted.clone(),
        policy,
        RuntimeEventSender::discard(),
        settings.workspace.clone(),
        &settings.file.exec.env_policy(),
    );
    manager.start();
    manager.wait_started().await;
    let servers = manager.servers();
    manager.shutdown().await;
    let mut failed = false;
    for server in &servers {
        let origin = match server.origin {
            super::config::Origin::User => "config.toml",
            super::config::Origin::Project => PROJECT_FILE,
        };
        let status = match &server.state {
            // This listing stops the servers: no retry follows.
            McpServerState::Failed { reason, .. } => format!("failed: {reason}"),
            _ => server.status_line(),
        };
        let mut line = format!(
            "{}  ({}, {origin})  {status}",
            server.name, server.transport
        );
        if let Some(info) = server.server_info.as_deref().filter(|i| !i.is_empty()) {
            line.push_str(&format!("  — {info}"));
        }
        if matches!(server.state, McpServerState::Untrusted) {
            line.push_str("; pass --trust-project-mcp to start it");
        }
        failed |= matches!(server.state, McpServerState::Failed { .. });
        // Names, descriptions and reasons come from the servers: shown, never obeyed.
        println!("{}", visible(&line));
        if !server.tools.is_empty() {
            println!(
                "  {} tools, about {} tokens of definitions per request",
                server.tools.len(),
                server.definition_tokens()
            );
        }
        for tool in &server.tools {
            let description = tool.description.lines().next().unwrap_or_default();
            println!(
                "  {}  (~{} tokens)  {}",
                visible(&tool.name),
                tool.definition_tokens,
                visible(&crate::headless::clip(description, 80))
            );
        }
    }
    if failed {
        crate::headless::EXIT_RUN_FAILED
    } else {
        crate::headless::EXIT_OK
    }
}
