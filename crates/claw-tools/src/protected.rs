//! The paths that configure claw-tui or make something run outside the sandbox: read-only
//! to the model.
//!
//! A repository carries files that programs outside the sandbox obey: git's own
//! configuration and hooks (run by the user's next `git status`, and by any git claw-tui
//! runs), claw-tui's `.claw-tui/` directory, `.mcp.json`, and the directories other agents
//! read (`.claude/`, `.agents/`). Were the model able to write them, one `write_file` would
//! become code run as the user. [`Protected`] names them; the file tools refuse writes to
//! them and the exec sandbox mounts the existing ones read-only.
//!
//! The rest of `.git` (objects, refs, the index, `HEAD`) stays writable, so the agent can
//! still commit. `.claw-tui/MEMORY.md` stays writable too: the model keeps its long-term
//! memory there, and it is only ever read into the prompt, never run.

mod git_like;

pub use git_like::serialize as serialize_git_shaped;

use std::ffi::OsStr;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Directories whose whole contents configure claw-tui or other agents.
pub const PROTECTED_DIRS: [&str; 3] = [".claw-tui", ".claude", ".agents"];

/// Files that configure claw-tui or other agents.
pub const PROTECTED_FILES: [&str; 1] = [".mcp.json"];

/// Entries of a git directory that make git run programs or read configuration:
/// `config` (fsmonitor, hooksPath, pagers, filters, credential helpers, includes...),
/// `config.worktree`, `hooks/`, `info/` (attributes and excludes), `commondir` (which
/// moves where `config` is read from), `modules/` (each submodule's own git directory,
/// with its own config and hooks).
pub const PROTECTED_GIT_ENTRIES: [&str; 6] = [
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "modules",
];

/// The one file under a protected directory the model may write.
pub const MODEL_WRITABLE: &str = ".claw-tui/MEMORY.md";

/// Why a path is protected; the text is written for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedPath {
    /// The path that was refused, as given.
    pub path: PathBuf,
    /// What it is.
    pub what: &'static str,
}

impl fmt::Display for ProtectedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Access denied: {} is {}, which is read-only to the agent (it configures \
             claw-tui or runs outside the sandbox). Ask the user to change it.",
            self.path.display(),
            self.what
        )
    }
}

impl std::error::Error for ProtectedPath {}

/// The protected paths of one workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Protected {
    /// The workspace and each directory up to its git root: where claw-tui reads
    /// project configuration from.
    roots: Vec<PathBuf>,
    /// Files that a hook or a trusted MCP server runs (absolute).
    pinned: Vec<PathBuf>,
    /// claw-tui's own config, data and state directories (absolute), with all beneath.
    own: Vec<PathBuf>,
}

impl Protected {
    /// The protected paths of the workspace at `root` (absolute, symlinks resolved):
    /// configuration in the workspace and in each directory up to its git root.
    pub fn for_workspace(root: &Path) -> Self {
        let roots = super::workspace::project_chain(root);
        Self {
            roots,
            pinned: Vec::new(),
            own: Vec::new(),
        }
    }

    /// Also protects `dir` and everything beneath it: a directory of claw-tui's own (its
    /// config, data or state), which a workspace such as `$HOME` may contain. A
    /// directory that holds the workspace is left out: it would protect everything.
    pub fn own(&mut self, dir: PathBuf) {
        let holds_workspace = self.roots.first().is_some_and(|w| w.starts_with(&dir));
        if !holds_workspace && !self.own.contains(&dir) {
            self.own.push(dir);
        }
    }

    /// The directories protected with [`Self::own`].
    pub fn own_dirs(&self) -> &[PathBuf] {
        &self.own
    }

    /// Also protects `path`, a workspace file that something outside the sandbox runs
    /// (a hook's script, a trusted MCP server's program).
    pub fn pin(&mut self, path: PathBuf) {
        if !self.pinned.contains(&path) {
            self.pinned.push(path);
        }
    }

    /// The files pinned with [`Self::pin`].
    pub fn pinned(&self) -> &[PathBuf] {
        &self.pinned
    }

    /// The directories whose configuration is protected: the workspace, then each one
    /// up to its git root.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Refuses `path` (absolute, symlinks resolved as far as it exists) when it is, or
    /// is beneath, a protected path. Any directory named like a protected one counts,
    /// at any depth: a nested repository or a subdirectory the user may later start
    /// claw-tui in is configuration too.
    pub fn check(&self, path: &Path) -> Result<(), ProtectedPath> {
        let refuse = |what| {
            Err(ProtectedPath {
                path: path.to_path_buf(),
                what,
            })
        };
        if self.pinned.iter().any(|p| p == path) {
            return refuse("a file that a hook or a trusted MCP server runs");
        }
        if self.own.iter().any(|dir| path.starts_with(dir)) {
            return refuse("claw-tui's own configuration, data or state");
        }
        if let Some(what) = classify(path) {
            return refuse(what);
        }
        if let Some(root) = self.roots.first()
            && git_like::refuses(root, path)
        {
            return refuse("part of a directory git would take for a repository");
        }
        Ok(())
    }

    /// The protected paths that exist now, to be mounted read-only around a command:
    /// in the workspace and each directory up to the git root, the protected
    /// directories and files, the git directory's protected entries (and the git
    /// directory itself, or the `.git` file of a worktree), and the pinned files.
    pub fn existing(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for root in &self.roots {
            for name in PROTECTED_DIRS.iter().chain(&PROTECTED_FILES) {
                let path = root.join(name);
                if path.symlink_metadata().is_ok() {
                    found.push(path);
                }
            }
            let git = root.join(".git");
            match git.symlink_metadata() {
                Ok(meta) if meta.is_dir() => {
                    found.push(git.clone());
                    found.extend(
                        PROTECTED_GIT_ENTRIES
                            .iter()
                            .map(|entry| git.join(entry))
                            .filter(|p| p.symlink_metadata().is_ok()),
                    );
                }
                Ok(_) => found.push(git),
                Err(_) => {}
            }
        }
        found.extend(
            self.pinned
                .iter()
                .chain(&self.own)
                .filter(|p| p.symlink_metadata().is_ok())
                .cloned(),
        );
        found
    }
}

/// What `path` is when a component of it makes it protected.
fn classify(path: &Path) -> Option<&'static str> {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let rest = &names[i + 1..];
        if *name == ".git" {
            match rest.first() {
                // `.git` itself: a worktree's `.git` file says where its git dir is.
                None => return Some("a repository's git directory or file"),
                Some(entry) if PROTECTED_GIT_ENTRIES.iter().any(|e| entry == e) => {
                    return Some("part of a repository's executable configuration");
                }
                // `.git/worktrees/NAME/{config.worktree,commondir}`.
                Some(entry) if *entry == "worktrees" => {
                    if rest.len() >= 3
                        && ["config.worktree", "commondir", "gitdir"]
                            .iter()
                            .any(|e| rest[2] == *e)
                    {
                        return Some("part of a repository's executable configuration");
                    }
                }
                Some(_) => {}
            }
        }
        if PROTECTED_DIRS.iter().any(|d| name == d) {
            let memory = Path::new(MODEL_WRITABLE);
            let is_memory =
                *name == ".claw-tui" && rest.len() == 1 && memory.file_name() == Some(rest[0]);
            if !is_memory {
                return Some("agent configuration");
            }
        }
        if PROTECTED_FILES.iter().any(|f| name == f) {
            return Some("agent configuration");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_is_refused_and_the_rest_of_git_is_not() {
        let p = Protected::default();
        for refused in [
            "/w/.git",
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/.git/info/attributes",
            "/w/.git/commondir",
            "/w/.git/modules/sub/config",
            "/w/.git/worktrees/wt/config.worktree",
            "/w/sub/.git/config",
            "/w/.claw-tui/commands/x.md",
            "/w/.claw-tui",
            "/w/.claude/settings.json",
            "/w/.agents/skills/a/SKILL.md",
            "/w/.mcp.json",
            "/w/deep/.mcp.json",
        ] {
            assert!(p.check(Path::new(refused)).is_err(), "{refused}");
        }
        for allowed in [
            "/w/.git/objects/ab/cdef",
            "/w/.git/refs/heads/main",
            "/w/.git/index",
            "/w/.git/HEAD",
            "/w/.git/worktrees/wt/HEAD",
            "/w/.claw-tui/MEMORY.md",
            "/w/src/main.rs",
            "/w/.gitignore",
            "/w/.mcp.json.bak",
        ] {
            assert!(p.check(Path::new(allowed)).is_ok(), "{allowed}");
        }
    }

    #[test]
    fn pinned_files_are_refused_and_named() {
        let mut p = Protected::default();
        p.pin(PathBuf::from("/w/scripts/hook.sh"));
        let err = p.check(Path::new("/w/scripts/hook.sh")).unwrap_err();
        assert!(err.to_string().contains("hook"), "{err}");
        assert!(p.check(Path::new("/w/scripts/other.sh")).is_ok());
    }

    #[test]
    fn existing_lists_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join(".mcp.json"), "{}").unwrap();
        let p = Protected::for_workspace(&root);
        let found = p.existing();
        for want in [".git", ".git/hooks", ".git/config", ".mcp.json"] {
            assert!(found.contains(&root.join(want)), "{want}: {found:?}");
        }
        assert!(!found.contains(&root.join(".claw-tui")), "{found:?}");
    }
}
