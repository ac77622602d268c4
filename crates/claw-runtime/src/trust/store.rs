//! The user's answers, remembered per workspace in `trust.json` in the data dir (0600 in
//! a 0700 directory): whether the project's `.mcp.json` servers may start (with the
//! fingerprint of each entry as it was shown), and the content hash of each workspace
//! file a hook or a server runs that the user trusted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file in the data dir holding every workspace's answers.
pub const TRUST_FILE: &str = "trust.json";

/// What the user decided about a workspace's project servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustDecision {
    /// Start them.
    Trusted,
    /// Never start them (until the file changes).
    Declined,
}

/// The answer about a workspace's project servers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectAnswer {
    /// What was decided.
    pub decision: TrustDecision,
    /// Each server's fingerprint (its whole entry and the files it runs) as shown.
    pub servers: BTreeMap<String, String>,
}

/// Everything remembered about one workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceTrust {
    /// The answer about its `.mcp.json` servers.
    #[serde(default)]
    pub project_mcp: Option<ProjectAnswer>,
    /// Files hooks and servers run: path → the SHA-256 of the content trusted.
    #[serde(default)]
    pub files: BTreeMap<PathBuf, String>,
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

impl TrustStore {
    /// The store in `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
            path: data_dir.join(TRUST_FILE),
        }
    }

    /// The file the answers are kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> TrustFile {
        // A missing or unreadable file trusts nothing: everything is asked again.
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// What is remembered about `workspace`.
    pub fn workspace(&self, workspace: &Path) -> WorkspaceTrust {
        self.read()
            .workspaces
            .remove(&workspace.display().to_string())
            .unwrap_or_default()
    }

    /// Changes what is remembered about `workspace` with `change`, and saves it.
    pub fn update(
        &self,
        workspace: &Path,
        change: impl FnOnce(&mut WorkspaceTrust),
    ) -> std::io::Result<()> {
        let mut file = self.read();
        change(
            file.workspaces
                .entry(workspace.display().to_string())
                .or_default(),
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
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn answers_are_kept_per_workspace_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let store = TrustStore::new(&data);
        let ws = Path::new("/some/workspace");
        assert_eq!(store.workspace(ws), WorkspaceTrust::default());
        store
            .update(ws, |w| {
                w.files
                    .insert(PathBuf::from("/some/workspace/x.sh"), "ab".into());
            })
            .unwrap();
        store
            .update(ws, |w| {
                w.project_mcp = Some(ProjectAnswer {
                    decision: TrustDecision::Declined,
                    servers: BTreeMap::from([("s".into(), "f".into())]),
                });
            })
            .unwrap();
        let kept = store.workspace(ws);
        assert_eq!(kept.files.len(), 1);
        assert_eq!(
            kept.project_mcp.map(|a| a.decision),
            Some(TrustDecision::Declined)
        );
        assert_eq!(
            store.workspace(Path::new("/other")),
            WorkspaceTrust::default()
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&data.join(TRUST_FILE)), 0o600);
        assert_eq!(mode(&data), 0o700);
    }
}
