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
    /// Cline's way to keep an entry without starting it.
    #[serde(default)]
    disabled: bool,
    /// Cline's seconds for one request (a tool call here).
    timeout: Option<u64>,
    /// claw-tui's seconds for a start (as `[mcp.servers.NAME]` takes them).
    startup_timeout_secs: Option<u64>,
    /// claw-tui's seconds for one tool call.
    tool_timeout_secs: Option<u64>,
    /// Keys other agents read that claw-tui does not (`autoApprove`...): named, never
    /// silently dropped.
    #[serde(flatten)]
    unsupported: BTreeMap<String, serde_json::Value>,
}

impl ProjectEntry {
    /// The keys of this entry that are not used, sorted.
    fn ignored(&self) -> Vec<&str> {
        self.unsupported.keys().map(String::as_str).collect()
    }

    fn into_config(self) -> Result<ServerConfig, ServerConfigError> {
        let (disabled, timeout) = (self.disabled, self.tool_timeout_secs.or(self.timeout));
        let startup = self.startup_timeout_secs;
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
        let mut config = ServerConfig::new(transport);
        config.enabled = !disabled;
        if let Some(seconds) = timeout {
            config.tool_timeout_secs = seconds.max(1);
        }
        if let Some(seconds) = startup {
            config.startup_timeout_secs = seconds.max(1);
        }
        Ok(config)
    }
}

/// The largest `.mcp.json` read.
const MAX_PROJECT_FILE_BYTES: u64 = 1024 * 1024;

/// The text of `.mcp.json` in `workspace`, opened beneath it (a symlink leading out is
/// refused), without blocking (a pipe in its place cannot hang the start), and only as
/// a regular file of at most [`MAX_PROJECT_FILE_BYTES`]; `Ok(None)` when it is missing.
fn read_beneath(workspace: &Path) -> std::io::Result<Option<String>> {
    use cap_std::fs::OpenOptionsExt;
    use std::io::{ErrorKind, Read};
    let dir = cap_std::fs::Dir::open_ambient_dir(workspace, cap_std::ambient_authority())?;
    let mut options = cap_std::fs::OpenOptions::new();
    options
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
    let file = match dir.open_with(PROJECT_FILE, &options) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) if crate::tools::workspace::is_escape(&e) => {
            return Err(std::io::Error::other(
                "it is a symlink leading out of the workspace",
            ));
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    let mut text = String::new();
    file.into_std()
        .take(MAX_PROJECT_FILE_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_PROJECT_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "it is larger than {MAX_PROJECT_FILE_BYTES} bytes"
        )));
    }
    Ok(Some(text))
}

/// Reads `.mcp.json` at `workspace`; a missing file has no servers.
pub fn read_project_file(workspace: &Path) -> ProjectServers {
    let path = workspace.join(PROJECT_FILE);
    let mut project = ProjectServers {
        path: path.clone(),
        ..ProjectServers::default()
    };
    let text = match read_beneath(workspace) {
        Ok(Some(text)) => text,
        Ok(None) => return project,
        Err(e) => {
            project.problems.push(format!(
                "cannot read {}: {e}; its servers are not started",
                path.display()
            ));
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
            let entry = serde_json::from_value::<ProjectEntry>(raw.clone()).map_err(|e| {
                ServerConfigError::EntryShape {
                    reason: e.to_string(),
                }
            })?;
            let ignored = entry.ignored();
            if !ignored.is_empty() {
                project.problems.push(format!(
                    "{}: server \"{name}\": {} not supported, ignored",
                    path.display(),
                    ignored.join(", ")
                ));
            }
            entry.into_config()
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
    fn a_project_file_that_leads_out_or_is_no_file_is_not_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).expect("ws");
        std::fs::write(
            dir.path().join("elsewhere.json"),
            r#"{"mcpServers": {"x": {"command": "evil"}}}"#,
        )
        .expect("write");
        std::os::unix::fs::symlink("../elsewhere.json", ws.join(PROJECT_FILE)).expect("link");
        let project = read_project_file(&ws);
        assert!(project.servers.is_empty());
        assert!(
            project.problems[0].contains("leading out of the workspace"),
            "{:?}",
            project.problems
        );
        std::fs::remove_file(ws.join(PROJECT_FILE)).expect("unlink");
        nix::unistd::mkfifo(&ws.join(PROJECT_FILE), nix::sys::stat::Mode::S_IRWXU).expect("fifo");
        let project = read_project_file(&ws);
        assert!(
            project.problems[0].contains("not a regular file"),
            "{:?}",
            project.problems
        );
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
    fn clines_disabled_and_timeout_are_honoured_and_other_keys_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = r#"{"mcpServers": {
            "off": {"command": "npx", "args": ["-y", "x"], "disabled": true},
            "slow": {"command": "uvx", "args": ["y"], "timeout": 120,
                     "autoApprove": ["read"], "alwaysAllow": []},
            "big": {"command": "npx", "args": ["-y", "big"], "startup_timeout_secs": 90,
                    "tool_timeout_secs": 15}
        }}"#;
        std::fs::write(dir.path().join(PROJECT_FILE), text).expect("write");
        let project = read_project_file(dir.path());
        let config = |name: &str| {
            let spec = project.servers.iter().find(|s| s.name == name);
            spec.expect("read").config.clone()
        };
        assert!(!config("off").enabled);
        assert!(config("slow").enabled);
        assert_eq!(config("slow").tool_timeout_secs, 120);
        assert_eq!(config("off").startup_timeout_secs, 30, "the default");
        assert_eq!(config("big").startup_timeout_secs, 90);
        assert_eq!(config("big").tool_timeout_secs, 15);
        assert_eq!(project.problems.len(), 1, "{:?}", project.problems);
        assert!(
            project.problems[0]
                .contains("server \"slow\": alwaysAllow, autoApprove not supported, ignored"),
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
