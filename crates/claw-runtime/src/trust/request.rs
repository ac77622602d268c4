//! What the user is asked: the project's servers waiting for an answer, each entry
//! whole, and the pinned files that are new or changed, each with what runs it.

use super::PinnedFile;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One question covering everything that waits for the user's trust.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRequest {
    /// The workspace (paths inside it are shown relative to it).
    #[serde(default)]
    pub workspace: PathBuf,
    /// The project file whose servers wait for an answer, as shown (when some do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_file: Option<String>,
    /// Those servers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerEntry>,
    /// Workspace files hooks and servers run whose content is not trusted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileQuestion>,
}

/// A project server as its `.mcp.json` entry declares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerEntry {
    /// Its name.
    pub name: String,
    /// Each key of the entry with its value as written; `env` and `headers` one line
    /// per name (`env.GITHUB_TOKEN`), values as written, `${VAR}` unexpanded.
    pub fields: Vec<(String, String)>,
    /// Each `${VAR}` it uses and what it becomes: from the user's environment when
    /// `[mcp] project_env` allows it, else empty.
    pub variables: Vec<String>,
    /// The workspace files it runs, with their content now.
    pub files: Vec<PinnedFile>,
    /// SHA-256 of the whole entry and those files' hashes: what a "yes" trusts.
    pub fingerprint: String,
}

/// A workspace file that hooks or servers run, whose content is not trusted now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileQuestion {
    /// The file and its content's hash now.
    pub file: PinnedFile,
    /// What runs it, for people.
    pub run_by: Vec<String>,
    /// Whether other content of it was trusted before.
    pub changed: bool,
}

impl TrustRequest {
    /// `path` as the user reads it: relative to the workspace when inside it.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.workspace)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Whether nothing waits for an answer.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.files.is_empty()
    }

    /// Every file a "yes" trusts: the files asked about and those the servers run,
    /// with the content they had when shown.
    pub fn files_trusted_by_yes(&self) -> Vec<PinnedFile> {
        let mut files: Vec<PinnedFile> = self
            .files
            .iter()
            .map(|q| q.file.clone())
            .chain(self.servers.iter().flat_map(|s| s.files.iter().cloned()))
            .collect();
        files.sort();
        files.dedup();
        files
    }
}
