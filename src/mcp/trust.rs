//! The user's answer to "start this workspace's `.mcp.json` servers?", remembered per
//! workspace in the data dir.
//!
//! A project file can start any program, so its servers run only once the user trusted
//! them. The answer is kept together with what was trusted (each server's transport as
//! text): when the file later names another program, the user is asked again instead
//! of the new program starting on an old "yes".

use super::config::{ServerSpec, Transport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file in the data dir holding every workspace's answer.
pub const TRUST_FILE: &str = "mcp-trust.json";

/// What the user decided about a workspace's project servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustDecision {
    /// Start them.
    Trusted,
    /// Never start them (until the file changes).
    Declined,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct WorkspaceTrust {
    decision: TrustDecision,
    /// The servers as they were when the user answered.
    servers: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    workspaces: BTreeMap<String, WorkspaceTrust>,
}

/// The answers stored under one data dir.
#[derive(Clone, Debug)]
pub struct TrustStore {
    data_dir: PathBuf,
    path: PathBuf,
}

/// One line per server naming what it would run or reach.
pub fn fingerprint(servers: &[ServerSpec]) -> Vec<String> {
    let mut lines: Vec<String> = servers
        .iter()
        .map(|s| match &s.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => format!(
                "{}: stdio {command} {args:?} env {env:?} cwd {cwd:?}",
                s.name
            ),
            Transport::Http { url, headers, .. } => {
                let keys: Vec<&String> = headers.keys().collect();
                format!("{}: http {url} headers {keys:?}", s.name)
            }
        })
        .collect();
    lines.sort();
    lines
}

/// Each server as the user is asked about it: `name: the command line` or `name: URL`.
pub fn describe(servers: &[ServerSpec]) -> Vec<String> {
    servers
        .iter()
        .map(|s| match &s.config.transport {
            Transport::Stdio { command, args, .. } => {
                format!("{}: {command} {}", s.name, args.join(" "))
                    .trim_end()
                    .to_owned()
            }
            Transport::Http { url, .. } => format!("{}: {url}", s.name),
        })
        .collect()
}

impl TrustStore {
    /// The store in `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
            path: data_dir.join(TRUST_FILE),
        }
    }

    fn read(&self) -> TrustFile {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// The user's answer for `workspace`, if it still covers exactly `servers`.
    pub fn decision(&self, workspace: &Path, servers: &[ServerSpec]) -> Option<TrustDecision> {
        let file = self.read();
        let entry = file.workspaces.get(&workspace.display().to_string())?;
        (entry.servers == fingerprint(servers)).then_some(entry.decision)
    }

    /// Remembers `decision` for `workspace`'s `servers` (file 0600 in a 0700 dir).
    pub fn remember(
        &self,
        workspace: &Path,
        servers: &[ServerSpec],
        decision: TrustDecision,
    ) -> std::io::Result<()> {
        let mut file = self.read();
        file.workspaces.insert(
            workspace.display().to_string(),
            WorkspaceTrust {
                decision,
                servers: fingerprint(servers),
            },
        );
        let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
        write_private(&self.data_dir, &self.path, text.as_bytes())
    }
}

/// Writes `bytes` to `path` (in the data dir `top`) through a temporary file renamed
/// over it: 0600 in 0700 directories.
fn write_private(top: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the trust file has no directory"))?;
    crate::private_fs::create_dir(top, dir)?;
    let tmp = dir.join(format!(".{TRUST_FILE}.{}", std::process::id()));
    let mut file = crate::private_fs::open(
        &tmp,
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
    )?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::{Origin, ServerConfig};
    use std::os::unix::fs::PermissionsExt;

    fn spec(command: &str) -> ServerSpec {
        ServerSpec {
            name: "files".into(),
            config: ServerConfig::new(Transport::Stdio {
                command: command.into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            }),
            origin: Origin::Project,
        }
    }

    #[test]
    fn answers_are_remembered_per_workspace_and_per_content() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        let store = TrustStore::new(&data);
        let ws = Path::new("/some/workspace");
        assert_eq!(store.decision(ws, &[spec("a")]), None);
        store
            .remember(ws, &[spec("a")], TrustDecision::Trusted)
            .expect("write");
        assert_eq!(
            store.decision(ws, &[spec("a")]),
            Some(TrustDecision::Trusted)
        );
        assert_eq!(store.decision(Path::new("/other"), &[spec("a")]), None);
        // The file now runs another program: the old answer does not cover it.
        assert_eq!(store.decision(ws, &[spec("evil")]), None);
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&data.join(TRUST_FILE)), 0o600);
        assert_eq!(mode(&data), 0o700);
    }
}
