//! What trusting a server means: the whole `.mcp.json` entry as written (command, args,
//! cwd, env and header names and values, URL) and the content of every workspace file
//! it runs, hashed together into its fingerprint. A "yes" covers that fingerprint
//! only: a changed header value, argument or script asks again. The answer is kept in
//! the data dir's trust file ([`crate::trust::store`]).

use super::config::{PROJECT_DIR_VAR, ServerSpec, Transport, var_refs};
use super::manager::Shared;
use super::server::Server;
use crate::runtime::mcp_state::McpServerState;
use crate::trust::{PinnedFile, Runner, ServerEntry, named_files};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use crate::trust::TrustDecision;

/// Which `${VAR}` a server's settings may take from claw-tui's environment: every one
/// for the user's own servers; for a project file's, only those the user listed in
/// `[mcp] project_env`, and never a provider's API key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectEnv {
    /// The names `[mcp] project_env` allows, provider keys taken out.
    pub allowed: Vec<String>,
}

impl ProjectEnv {
    /// `listed` (`[mcp] project_env`) less `provider_keys`; the second list names the
    /// provider keys that were listed, which are refused.
    pub fn new(listed: &[String], provider_keys: &[String]) -> (Self, Vec<String>) {
        let (refused, allowed): (Vec<String>, Vec<String>) = listed
            .iter()
            .cloned()
            .partition(|name| provider_keys.iter().any(|k| k == name));
        (Self { allowed }, refused)
    }

    /// Whether a project file may have `name` filled in.
    pub fn allows(&self, name: &str) -> bool {
        self.allowed.iter().any(|a| a == name)
    }
}

/// The stdio server's command as the trust sees it: its program and arguments, run in
/// its working directory. `None` for an HTTP server, which runs nothing.
pub fn server_runner(spec: &ServerSpec, workspace: &Path) -> Option<Runner> {
    let Transport::Stdio {
        command, args, cwd, ..
    } = &spec.config.transport
    else {
        return None;
    };
    let mut words = vec![command.clone()];
    words.extend(args.iter().cloned());
    Some(Runner {
        label: format!("the MCP server \"{}\"", spec.name),
        words,
        cwd: server_cwd(cwd.as_deref(), workspace),
    })
}

/// Where a stdio server runs: its `cwd` (relative to the workspace), else the workspace.
pub fn server_cwd(cwd: Option<&Path>, workspace: &Path) -> PathBuf {
    match cwd {
        Some(dir) => workspace.join(dir),
        None => workspace.to_path_buf(),
    }
}

/// The workspace files `spec` runs, with their content now.
pub fn server_files(spec: &ServerSpec, workspace: &Path) -> Vec<PinnedFile> {
    server_runner(spec, workspace)
        .map(|r| named_files(&r.words, &r.cwd, workspace))
        .unwrap_or_default()
        .iter()
        .map(|p| PinnedFile::read(p))
        .collect()
}

/// The entry as the file has it (the parsed settings for a server from config.toml).
fn entry_of(spec: &ServerSpec) -> Value {
    spec.entry
        .clone()
        .unwrap_or_else(|| match &spec.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => serde_json::json!({"command": command, "args": args, "env": env, "cwd": cwd}),
            Transport::Http { url, headers, .. } => {
                serde_json::json!({"type": "http", "url": url, "headers": headers})
            }
        })
}

/// The SHA-256 of the whole entry (keys sorted) and of `files` (path and hash).
pub fn fingerprint(spec: &ServerSpec, files: &[PinnedFile]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(spec.name.as_bytes());
    hasher.update([0]);
    hasher.update(entry_of(spec).to_string().as_bytes());
    for file in files {
        hasher.update([0]);
        hasher.update(file.path.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        hasher.update(file.sha256.as_deref().unwrap_or("unreadable").as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Each name `${NAME}` in `text`.
/// The entry's keys and values as written: `env` and `headers` one line per name.
fn fields(entry: &Value) -> Vec<(String, String)> {
    let Value::Object(map) = entry else {
        return vec![("entry".to_owned(), entry.to_string())];
    };
    let mut fields = Vec::new();
    for (key, value) in map {
        match (key.as_str(), value) {
            ("env" | "headers", Value::Object(named)) => {
                for (name, value) in named {
                    let shown = value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned);
                    fields.push((format!("{key}.{name}"), shown));
                }
            }
            (_, Value::String(text)) => fields.push((key.clone(), text.clone())),
            (_, other) => fields.push((key.clone(), other.to_string())),
        }
    }
    fields
}

/// `spec` (a project server) as the user is asked about it, with the files it runs in
/// `workspace` and what each `${VAR}` it uses becomes under `env`.
pub fn entry_view(spec: &ServerSpec, workspace: &Path, env: &ProjectEnv) -> ServerEntry {
    let entry = entry_of(spec);
    let fields = fields(&entry);
    let mut refs: Vec<(&str, Option<&str>)> =
        fields.iter().flat_map(|(_, v)| var_refs(v)).collect();
    refs.sort();
    refs.dedup();
    let variables = refs
        .into_iter()
        .map(|(name, default)| match default {
            _ if name == PROJECT_DIR_VAR => format!("{name}: the workspace path"),
            _ if env.allows(name) => format!("{name}: from your environment ([mcp] project_env)"),
            Some(default) => {
                format!("{name}: not in [mcp] project_env, so its default \"{default}\"")
            }
            None => format!("{name}: left empty (not in [mcp] project_env)"),
        })
        .collect();
    let files = server_files(spec, workspace);
    ServerEntry {
        name: spec.name.clone(),
        fingerprint: fingerprint(spec, &files),
        fields,
        variables,
        files,
    }
}

/// Waits until every workspace file the server runs holds content the user trusted
/// (at once, mostly); meanwhile it shows as failed with the reason, and the user is
/// asked. Returns false when claw-tui stops first.
pub(super) async fn wait_until_trusted(server: &Server, shared: &Shared) -> bool {
    let trust = &shared.access.trust;
    let Some(runner) = server_runner(&server.spec, &shared.access.workspace) else {
        return true;
    };
    let mut changes = trust.changed();
    loop {
        let refused = match trust.check_blocking(&runner).await {
            Ok(_) => return true,
            Err(untrusted) => untrusted,
        };
        tracing::warn!(server = %server.spec.name, "{refused}");
        server.set_state(
            shared,
            McpServerState::Failed {
                reason: refused.to_string(),
                retry_in_secs: None,
            },
        );
        server.settle();
        tokio::select! {
            () = shared.stop.cancelled() => return false,
            changed = changes.changed() => if changed.is_err() {
                shared.stop.cancelled().await;
                return false;
            },
        }
    }
}

/// Each server's fingerprint by name, as [`entry_view`] computes it.
pub fn fingerprints(entries: &[ServerEntry]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|e| (e.name.clone(), e.fingerprint.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::{Origin, ServerConfig};
    use serde_json::json;

    fn project(name: &str, entry: Value) -> ServerSpec {
        let transport = match entry.get("url") {
            Some(url) => Transport::Http {
                url: url.as_str().unwrap().into(),
                headers: serde_json::from_value(entry["headers"].clone()).unwrap_or_default(),
                bearer_token_env: None,
            },
            None => Transport::Stdio {
                command: entry["command"].as_str().unwrap().into(),
                args: serde_json::from_value(entry["args"].clone()).unwrap_or_default(),
                env: BTreeMap::new(),
                cwd: None,
            },
        };
        ServerSpec {
            name: name.into(),
            config: ServerConfig::new(transport),
            origin: Origin::Project,
            entry: Some(entry),
        }
    }

    #[test]
    fn the_trust_question_says_what_each_variable_becomes() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let env = ProjectEnv::new(&["GITHUB_TOKEN".into()], &[]).0;
        let entry = json!({"command": "node",
                           "args": ["${CLAUDE_PROJECT_DIR:-.}/srv.js", "${REGION:-eu}", "${HOME}"],
                           "env": {"TOKEN": "${GITHUB_TOKEN}"}});
        let view = entry_view(&project("s", entry), &ws, &env);
        assert_eq!(
            view.variables,
            [
                "CLAUDE_PROJECT_DIR: the workspace path",
                "GITHUB_TOKEN: from your environment ([mcp] project_env)",
                "HOME: left empty (not in [mcp] project_env)",
                "REGION: not in [mcp] project_env, so its default \"eu\"",
            ]
        );
    }

    #[test]
    fn the_whole_entry_and_its_files_are_what_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("server.js"), "one").unwrap();
        let env = ProjectEnv::default();
        let entry = json!({"type": "http", "url": "http://127.0.0.1:1/mcp",
                           "headers": {"X-Team": "core", "Authorization": "Bearer ${OPENAI_API_KEY}"}});
        let view = entry_view(&project("web", entry.clone()), &ws, &env);
        assert!(
            view.fields
                .contains(&("headers.X-Team".into(), "core".into()))
        );
        assert!(view.fields.contains(&(
            "headers.Authorization".into(),
            "Bearer ${OPENAI_API_KEY}".into()
        )));
        assert_eq!(
            view.variables,
            ["OPENAI_API_KEY: left empty (not in [mcp] project_env)"]
        );
        let mut changed = entry.clone();
        changed["headers"]["X-Team"] = json!("evil");
        let other = entry_view(&project("web", changed), &ws, &env);
        assert_ne!(view.fingerprint, other.fingerprint, "a header value");

        let stdio = project("files", json!({"command": "node", "args": ["server.js"]}));
        let before = entry_view(&stdio, &ws, &env);
        assert_eq!(before.files.len(), 1);
        std::fs::write(ws.join("server.js"), "two").unwrap();
        let after = entry_view(&stdio, &ws, &env);
        assert_ne!(
            before.fingerprint, after.fingerprint,
            "the script's content"
        );
    }

    #[test]
    fn provider_keys_are_never_allowed_to_a_project_file() {
        let listed = vec!["GITHUB_TOKEN".to_owned(), "OPENAI_API_KEY".to_owned()];
        let (env, refused) = ProjectEnv::new(&listed, &["OPENAI_API_KEY".to_owned()]);
        assert!(env.allows("GITHUB_TOKEN"));
        assert!(!env.allows("OPENAI_API_KEY"));
        assert_eq!(refused, ["OPENAI_API_KEY"]);
    }
}
