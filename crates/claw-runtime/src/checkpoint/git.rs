//! What `exec` calls changed, as far as `git status` can tell: a snapshot of the status
//! (with each listed file's size and modification time) before and after each call.
//! Changes made by commands cannot be undone; this only lets undo say which files.
//!
//! The repository is the model's to write (`exec` can write `.git/config`, and any
//! directory can be made a repository), so claw-tui's own `git` must never run what a
//! repository configures: fsmonitor, hooks, filters, pagers, diff drivers, credential
//! helpers, `core.sshCommand`. It gets git's own switches for each (command-line
//! settings win over every configuration file), an environment without `GIT_*`
//! variables (which could point it at other repositories, programs or settings) and
//! without the system configuration, and it runs under the sandbox launcher with no
//! write access and no network ([`HelperRunner`]): should a repository still find a way
//! to run something, that runs with less than the model's own `exec`.
//!
//! Why the `git` binary rather than a library: a library (gix) reading the repository
//! in claw-tui's own process would be outside every sandbox, would still have to run
//! filter drivers to compare content, and would add a large dependency; the binary
//! behind the launcher is confined by the kernel and is what the user's git does.

use crate::tools::exec::{HelperRunner, edit_env};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `git status` gets this long; a slower repository is reported as unknown.
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The empty tree: `.gitattributes` is read from it instead of the working tree, so a
/// model-written attributes file names no filter driver (`GIT_ATTR_SOURCE`, git 2.40 and
/// later; older versions ignore the variable, and the sandbox is what holds then).
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Settings given on the command line, which win over every configuration file: no
/// program a repository names is run.
const SWITCHES: [&str; 13] = [
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.attributesFile=/dev/null",
    "core.sshCommand=false",
    "core.askPass=",
    "core.untrackedCache=false",
    "credential.helper=",
    "diff.external=",
    "protocol.allow=never",
    "submodule.recurse=false",
    "status.submoduleSummary=false",
    "gc.auto=0",
];

/// The arguments of `git` before the subcommand.
fn git_args<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--no-pager", "--no-optional-locks"];
    for switch in SWITCHES {
        args.extend(["-c", switch]);
    }
    args.extend(rest);
    args
}

/// The environment of claw-tui's `git`: no `GIT_*` variable of ours, no system
/// configuration, no pager, no prompt, and no index lock taken from the user's own git.
fn git_env(env: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    edit_env(
        env,
        |name| name.starts_with("GIT_") || name == "PAGER",
        &[
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_ATTR_NOSYSTEM", "1"),
            ("GIT_ATTR_SOURCE", EMPTY_TREE),
            ("GIT_OPTIONAL_LOCKS", "0"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_PAGER", "cat"),
            ("PAGER", "cat"),
        ],
    )
}

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

/// Set once the missing Landlock was logged.
static UNCONFINED_LOGGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What `git args` printed, when it succeeded.
async fn git(helper: &HelperRunner, cwd: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let output = helper
        .run("git", &git_args(args), cwd, git_env, GIT_TIMEOUT)
        .await;
    if let Ok(output) = &output
        && !output.confined
        && !UNCONFINED_LOGGED.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        tracing::warn!(
            "claw-tui's git runs without Landlock here (the kernel has none): only its \
             switches keep a repository's programs from running"
        );
    }
    match output {
        Ok(output) if output.code == Some(0) => Some(output.stdout),
        Ok(_) => None,
        Err(e) => {
            tracing::debug!("git {args:?} gave no answer: {e}");
            None
        }
    }
}

impl Repo {
    /// The repository `workspace` is in; `None` outside one or without git.
    pub async fn find(helper: &HelperRunner, workspace: &Path) -> Option<Repo> {
        let out = git(helper, workspace, &["rev-parse", "--show-toplevel"]).await?;
        let root = String::from_utf8(out).ok()?;
        Some(Repo {
            root: PathBuf::from(root.trim_end_matches('\n')),
        })
    }

    /// The status now; `None` when git failed or took too long.
    pub async fn snapshot(&self, helper: &HelperRunner) -> Option<Snapshot> {
        let out = git(
            helper,
            &self.root,
            &[
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--ignore-submodules=all",
            ],
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
