//! Which servers a process starts (the user's, and the project's once trusted), the
//! warnings about the rest, and `claw-tui mcp list`.

use super::config::{PROJECT_FILE, ServerSpec, expand_launch, merge, read_project_file};
use super::manager::{McpManager, ServerAccess};
use super::trust::{ProjectEnv, TrustDecision, entry_view, fingerprints, server_files};
use crate::config::Settings;
use crate::runtime::RuntimeEventSender;
use crate::runtime::mcp_state::McpServerState;
use crate::tools::ToolRegistry;
use crate::tools::exec::Approver;
use crate::tools::policy::{PolicyConfig, ToolPolicy};
use crate::trust::{ProjectAnswer, ServerEntry, Trust, TrustStore};
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
    /// Those, each as the user is asked about it (the whole entry).
    pub entries: Vec<ServerEntry>,
    /// The workspace's `.mcp.json`.
    pub project_file: PathBuf,
    /// Whether the user never answered for these project servers (the client asks).
    pub ask_trust: bool,
    /// Which variables a project file may use (`[mcp] project_env`).
    pub project_env: ProjectEnv,
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

/// The variables that hold a provider's API key: never given to a project file.
pub fn provider_keys(settings: &Settings) -> Vec<String> {
    let mut keys: Vec<String> = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]
        .map(String::from)
        .into();
    keys.extend(
        settings
            .file
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone()),
    );
    keys
}

/// The plan for `settings`: `--trust-project-mcp`, else the answer remembered in the
/// data dir for exactly these entries (and the files they run), decides about the
/// project's servers.
pub fn plan(settings: &Settings) -> McpPlan {
    let project = read_project_file(&settings.workspace);
    let (specs, notes) = merge(&settings.file.mcp, &project);
    let (project_env, refused) =
        ProjectEnv::new(&settings.file.mcp.project_env, &provider_keys(settings));
    let (user, project_specs): (Vec<ServerSpec>, Vec<ServerSpec>) = specs
        .into_iter()
        .map(|spec| {
            // Filled as the server's env and headers are when it starts (access.rs).
            let origin = spec.origin;
            let env = |name: &str| std::env::var(name).ok();
            let lookup = |name: &str| {
                super::access::variable(name, origin, &project_env, &settings.workspace, &env)
            };
            expand_launch(spec, &lookup)
        })
        .partition(|s| s.origin == super::config::Origin::User);
    let mut plan = McpPlan {
        start: user,
        project_file: settings.workspace.join(PROJECT_FILE),
        warnings: project.problems.into_iter().chain(notes).collect(),
        ..McpPlan::default()
    };
    plan.warnings.extend(refused.iter().map(|name| {
        format!(
            "[mcp] project_env names {name}, a provider's API key: a project file never gets it"
        )
    }));
    if project_specs.is_empty() {
        plan.project_env = project_env;
        return plan;
    }
    let entries: Vec<ServerEntry> = project_specs
        .iter()
        .map(|spec| entry_view(spec, &settings.workspace, &project_env))
        .collect();
    plan.project_env = project_env;
    let decision = if settings.trust_project_mcp {
        Some(TrustDecision::Trusted)
    } else {
        TrustStore::new(&settings.data_dir)
            .workspace(&settings.workspace)
            .project_mcp
            .filter(|answer| answer.servers == fingerprints(&entries))
            .map(|answer| answer.decision)
    };
    match decision {
        Some(TrustDecision::Trusted) => plan.start.extend(project_specs),
        Some(TrustDecision::Declined) => {
            plan.untrusted = project_specs;
            plan.entries = entries;
        }
        None => {
            plan.ask_trust = true;
            plan.untrusted = project_specs;
            plan.entries = entries;
        }
    }
    plan
}

/// Remembers the user's answer about the workspace's project servers, as `entries`
/// showed them.
pub fn remember_trust(
    settings: &Settings,
    entries: &[ServerEntry],
    decision: TrustDecision,
) -> Result<(), RememberTrustError> {
    TrustStore::new(&settings.data_dir)
        .update(&settings.workspace, |w| {
            w.project_mcp = Some(ProjectAnswer {
                decision,
                servers: fingerprints(entries),
            });
        })
        .map_err(|source| RememberTrustError {
            data_dir: settings.data_dir.clone(),
            source,
        })
}

/// The trust for `settings`' workspace with every server of `plan` that may start made
/// known to it; with `--trust-project-mcp`, the files the project's servers run are
/// trusted for this process.
pub fn server_trust(settings: &Settings, plan: &McpPlan, events: RuntimeEventSender) -> Trust {
    let trust = Trust::open(&settings.workspace, &settings.data_dir, events);
    for spec in &plan.start {
        if let Some(runner) = super::trust::server_runner(spec, &settings.workspace) {
            trust.register(runner);
        }
        if settings.trust_project_mcp && spec.origin == super::config::Origin::Project {
            trust.allow_for_session(&server_files(spec, &settings.workspace));
        }
    }
    trust
}

/// The access servers of `settings` get: its environment less `[exec]`'s secrets,
/// `[mcp] project_env` for project files, and `trust`.
pub fn server_access(settings: &Settings, plan: &McpPlan, trust: Trust) -> ServerAccess {
    ServerAccess::new(
        settings.workspace.clone(),
        &settings.file.exec.env_policy(),
        trust,
    )
    .with_project_env(plan.project_env.clone())
}

/// A description's first line with words, trimmed: servers often begin one with a
/// newline (a template's indentation), which would show an empty description.
fn first_line(description: &str) -> &str {
    description
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default()
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
        return crate::exit::EXIT_OK;
    }
    // A policy of its own: the tools are listed, never offered to an agent.
    let policy = ToolPolicy::new(
        ToolRegistry::new(),
        PolicyConfig::default(),
        Approver::Nobody,
    );
    // Nobody is asked here: a server whose files are not trusted is listed as failed.
    let trust = server_trust(settings, &plan, RuntimeEventSender::discard());
    let manager = McpManager::new(
        plan.start.clone(),
        plan.untrusted.clone(),
        policy,
        RuntimeEventSender::discard(),
        server_access(settings, &plan, trust),
    );
    manager.start();
    manager.wait_started().await;
    let servers = manager.servers();
    // A server that failed may be trying again as it is listed: its failure is the news.
    let failures: std::collections::BTreeMap<String, String> =
        manager.start_failures().into_iter().collect();
    manager.shutdown().await;
    let mut failed = false;
    for server in &servers {
        let origin = match server.origin {
            super::config::Origin::User => "config.toml",
            super::config::Origin::Project => PROJECT_FILE,
        };
        let status = match (&server.state, failures.get(&server.name)) {
            // This listing stops the servers: no retry follows.
            (McpServerState::Failed { reason, .. }, _)
            | (McpServerState::Starting | McpServerState::Restarting { .. }, Some(reason)) => {
                format!("failed: {reason}")
            }
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
        failed |= status.starts_with("failed: ");
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
            let description = first_line(&tool.description);
            println!(
                "  {}  (~{} tokens)  {}",
                visible(&tool.name),
                tool.definition_tokens,
                visible(&crate::text::clip(description, 80))
            );
        }
    }
    if failed {
        crate::exit::EXIT_RUN_FAILED
    } else {
        crate::exit::EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::first_line;

    #[test]
    fn a_description_shows_its_first_line_with_words() {
        assert_eq!(
            first_line("\n    Reads a file.\n    More."),
            "Reads a file."
        );
        assert_eq!(first_line("One line"), "One line");
        assert_eq!(first_line(" \n\n"), "");
    }
}
