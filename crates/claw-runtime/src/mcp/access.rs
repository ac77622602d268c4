//! What the servers of a process get from claw-tui (the environment, the variables a
//! `${VAR}` may name, the workspace) and what decides whether they run (the trust).

use super::config::Origin;
use super::trust::ProjectEnv;
use crate::tools::exec::EnvPolicy;
use crate::trust::Trust;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Looks a variable of claw-tui's own environment up.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What the servers of a process get from claw-tui, and what decides whether they run.
#[derive(Clone)]
pub struct ServerAccess {
    /// The workspace: servers run there unless their `cwd` says otherwise.
    pub workspace: PathBuf,
    /// The environment a stdio server starts with (claw-tui's, without secrets).
    pub base_env: BTreeMap<String, String>,
    /// Looks a variable of claw-tui's environment up, for `${VAR}` in `env` and headers.
    pub lookup: EnvLookup,
    /// Which of those a project file may use.
    pub project_env: ProjectEnv,
    /// Whether the workspace files a stdio server runs hold content the user trusted.
    pub trust: Trust,
}

impl ServerAccess {
    /// claw-tui's own environment less what `secrets` calls a secret (as commands get
    /// it), no variable for project files, and `trust` for `workspace`.
    pub fn new(workspace: PathBuf, secrets: &EnvPolicy, trust: Trust) -> Self {
        let base_env = std::env::vars_os()
            .filter(|(name, _)| !secrets.is_secret(name))
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .collect();
        Self {
            workspace,
            base_env,
            lookup: Arc::new(|name| std::env::var(name).ok()),
            project_env: ProjectEnv::default(),
            trust,
        }
    }

    /// This access, with `env` saying which variables a project file may use.
    pub fn with_project_env(mut self, env: ProjectEnv) -> Self {
        self.project_env = env;
        self
    }

    /// How `${VAR}` is looked up for a server from `origin`: a project file gets only
    /// the variables `[mcp] project_env` allows; every file gets `CLAUDE_PROJECT_DIR`
    /// (the workspace).
    pub(super) fn lookup_for(&self, origin: Origin) -> EnvLookup {
        let lookup = self.lookup.clone();
        let allowed = self.project_env.clone();
        let workspace = self.workspace.clone();
        Arc::new(move |name| variable(name, origin, &allowed, &workspace, lookup.as_ref()))
    }
}

/// The value of `${name}` for a server from `origin`: `CLAUDE_PROJECT_DIR` is the
/// workspace for every file; anything else comes from `env`, for a project file only
/// when `[mcp] project_env` allows it.
pub(super) fn variable(
    name: &str,
    origin: Origin,
    project_env: &ProjectEnv,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if name == super::config::PROJECT_DIR_VAR {
        return Some(workspace.display().to_string());
    }
    let allowed = origin == Origin::User || project_env.allows(name);
    allowed.then(|| env(name)).flatten()
}
