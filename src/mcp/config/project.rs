//! The project's `.mcp.json`: its servers, in the shape other agents already read, and
//! how they join the user's.

use super::{
    McpSection, Origin, PROJECT_FILE, ServerConfig, ServerConfigError, ServerSpec, Transport,
    check_server_name, check_url,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The servers of a project file, or why it cannot be used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectServers {
    /// The file (present or not).
    pub path: PathBuf,
    /// Its servers, by name.
    pub servers: Vec<ServerSpec>,
    /// Why the file or some entries were not usable (shown as warnings).
    pub problems: Vec<String>,
}

#[derive(Deserialize)]
struct ProjectFile {
    /// Each entry as written; read as a [`ProjectEntry`] one by one.
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, serde_json::Value>,
}

/// One `.mcp.json` entry, in the shape other agents already read.
#[derive(Deserialize)]
struct ProjectEntry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl ProjectEntry {
    fn into_config(self) -> Result<ServerConfig, ServerConfigError> {
        let transport = match (self.kind.as_deref(), self.command, self.url) {
            (None | Some("stdio"), Some(command), None) => Transport::Stdio {
                command,
                args: self.args,
                env: self.env,
                cwd: self.cwd,
            },
            (None | Some("http" | "streamable-http" | "streamableHttp"), None, Some(url)) => {
                check_url(&url)?;
                Transport::Http {
                    url,
                    headers: self.headers,
                    bearer_token_env: None,
                }
            }
            (Some("sse"), _, _) => return Err(ServerConfigError::LegacySse),
            (Some(other), _, _) if !matches!(other, "stdio" | "http") => {
                return Err(ServerConfigError::UnknownType { kind: other.into() });
            }
            _ => return Err(ServerConfigError::EntryNoTransport),
        };
        Ok(ServerConfig::new(transport))
    }
}

/// Reads `.mcp.json` at `workspace`; a missing file has no servers.
pub fn read_project_file(workspace: &Path) -> ProjectServers {
    let path = workspace.join(PROJECT_FILE);
    let mut project = ProjectServers {
        path: path.clone(),
        ..ProjectServers::default()
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return project,
        Err(e) => {
            project
                .problems
                .push(format!("cannot read {}: {e}", path.display()));
            return project;
        }
    };
    let file: ProjectFile = match serde_json::from_str(&text) {
        Ok(file) => file,
        Err(e) => {
            project.problems.push(format!(
                "{} is not valid (line {}, column {}): {e}; its servers are not started",
                path.display(),
                e.line(),
                e.column()
            ));
            return project;
        }
    };
    for (name, raw) in file.mcp_servers {
        let config = check_server_name(&name).and_then(|()| {
            serde_json::from_value::<ProjectEntry>(raw.clone())
                .map_err(|e| ServerConfigError::EntryShape {
                    reason: e.to_string(),
                })?
                .into_config()
        });
        match config {
            Ok(config) => project.servers.push(ServerSpec {
                name,
                config,
                origin: Origin::Project,
                entry: Some(raw),
            }),
            Err(e) => project.problems.push(format!(
                "{}: server \"{name}\" is skipped: {e}",
                path.display()
            )),
        }
    }
    project
}

/// The user's servers, then the project's servers whose names the user did not take.
pub fn merge(user: &McpSection, project: &ProjectServers) -> (Vec<ServerSpec>, Vec<String>) {
    let mut specs: Vec<ServerSpec> = user
        .servers
        .iter()
        .map(|(name, config)| ServerSpec {
            name: name.clone(),
            config: config.clone(),
            origin: Origin::User,
            entry: None,
        })
        .collect();
    let mut notes = Vec::new();
    for spec in &project.servers {
        if user.servers.contains_key(&spec.name) {
            notes.push(format!(
                "{} declares server \"{}\", which config.toml declares too; config.toml's is used",
                project.path.display(),
                spec.name
            ));
        } else {
            specs.push(spec.clone());
        }
    }
    (specs, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_file_entries_and_problems() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join(PROJECT_FILE),
            r#"{"mcpServers": {
                "files": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}},
                "web": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"K": "v"}},
                "old": {"type": "sse", "url": "http://h/sse"},
                "bad name": {"command": "x"}
            }}"#,
        )
        .expect("write");
        let project = read_project_file(dir.path());
        let names: Vec<&str> = project.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["files", "web"]);
        assert!(project.servers.iter().all(|s| s.origin == Origin::Project));
        assert_eq!(project.problems.len(), 2, "{:?}", project.problems);
        assert!(project.problems.iter().any(|p| p.contains("SSE")));
    }

    #[test]
    fn broken_project_file_is_a_problem_not_a_crash() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(PROJECT_FILE), "{\"mcpServers\": [").expect("write");
        let project = read_project_file(dir.path());
        assert!(project.servers.is_empty());
        assert!(
            project.problems[0].contains("line 1"),
            "{:?}",
            project.problems
        );
    }

    #[test]
    fn user_servers_win_name_clashes() {
        let user: McpSection =
            toml::from_str("[servers.files]\ncommand = \"mine\"\n").expect("valid");
        let project = ProjectServers {
            path: PathBuf::from("/w/.mcp.json"),
            servers: vec![ServerSpec {
                name: "files".into(),
                config: ServerConfig::new(Transport::Stdio {
                    command: "theirs".into(),
                    args: vec![],
                    env: BTreeMap::new(),
                    cwd: None,
                }),
                origin: Origin::Project,
                entry: None,
            }],
            problems: vec![],
        };
        let (specs, notes) = merge(&user, &project);
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].origin, Origin::User);
        assert_eq!(notes.len(), 1);
    }
}
