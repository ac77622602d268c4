//! What `exec` calls changed, as far as `git status` can tell: a snapshot of the status
//! (with each listed file's size and modification time) before and after each call.
//! Changes made by commands cannot be undone; this only lets undo say which files.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// `git status` gets this long; a slower repository is reported as unknown.
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// One file `git status` lists: its status code, size and modification time.
type Entry = (String, Option<(u64, i64, i64)>);

/// The files `git status` lists in a repository, at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    files: BTreeMap<String, Entry>,
}

/// The git repository a workspace is in, if any.
#[derive(Clone, Debug)]
pub struct Repo {
    root: PathBuf,
}

async fn git(cwd: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let mut command = tokio::process::Command::new("git");
    command
        .args(args)
        .current_dir(cwd)
        // A status must not take the index lock from the user's own git.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(GIT_TIMEOUT, command.output())
        .await
        .ok()?
        .ok()?;
    output.status.success().then_some(output.stdout)
}

impl Repo {
    /// The repository `workspace` is in; `None` outside one or without git.
    pub async fn find(workspace: &Path) -> Option<Repo> {
        let out = git(workspace, &["rev-parse", "--show-toplevel"]).await?;
        let root = String::from_utf8(out).ok()?;
        Some(Repo {
            root: PathBuf::from(root.trim_end_matches('\n')),
        })
    }

    /// The status now; `None` when git failed or took too long.
    pub async fn snapshot(&self) -> Option<Snapshot> {
        let out = git(
            &self.root,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )
        .await?;
        let mut files = BTreeMap::new();
        let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
        while let Some(field) = fields.next() {
            let text = String::from_utf8_lossy(field);
            if text.len() < 4 {
                continue;
            }
            let (code, path) = (text[..2].to_owned(), text[3..].to_owned());
            if code.starts_with('R') || code.starts_with('C') {
                // A rename is followed by its old name.
                fields.next();
            }
            let stat = std::fs::symlink_metadata(self.root.join(&path))
                .ok()
                .map(|m| (m.len(), m.mtime(), m.mtime_nsec()));
            files.insert(path, (code, stat));
        }
        Some(Snapshot { files })
    }
}

impl Repo {
    /// The absolute path of `path`, relative to the repository.
    pub fn absolute(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }
}

/// Whether `path` names the temp file the file tools write beside a file before
/// renaming it over it (`.NAME.XXXXXXXX.tmp`): seen by a command's snapshot only because
/// a `write_file` ran at the same time.
fn is_tool_temp(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some(middle) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    middle
        .rsplit_once('.')
        .is_some_and(|(_, hex)| hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl Snapshot {
    /// The files (relative to the repository) whose status, size or modification time
    /// differs in `after`; the file tools' own temp files are left out.
    pub fn changed_in(&self, after: &Snapshot) -> Vec<String> {
        let mut changed: Vec<String> = after
            .files
            .iter()
            .filter(|(path, entry)| self.files.get(*path) != Some(entry))
            .map(|(path, _)| path.clone())
            .collect();
        // Listed before and not after: reverted to the committed state (or removed).
        changed.extend(
            self.files
                .keys()
                .filter(|path| !after.files.contains_key(*path))
                .cloned(),
        );
        changed.retain(|path| !is_tool_temp(path));
        changed.sort();
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::is_tool_temp;

    #[test]
    fn the_tools_temp_files_are_recognised() {
        assert!(is_tool_temp("src/.main.rs.0a1b2c3d.tmp"));
        assert!(!is_tool_temp("src/.main.rs.tmp"));
        assert!(!is_tool_temp("notes.tmp"));
        assert!(!is_tool_temp(".env.zzzzzzzz.tmp"));
    }
}
