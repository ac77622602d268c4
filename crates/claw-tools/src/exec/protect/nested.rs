//! Protected names below the workspace's top: a repository, `.claw-tui/`, `.mcp.json`,
//! `.claude/` or `.agents/` in a subdirectory. The launcher holds only the top's (and
//! each directory's up to the git root), so these are looked after the way the
//! fallback looks after everything: each one there before a command is recorded with
//! its content (a repository's configuration entries, not its objects) and put back if
//! the command changed it, and one the command made is moved aside — a plain new
//! repository (`git init` in a subdirectory) aside, which stays. A directory shaped
//! like a git directory without the name (`HEAD`, `objects/`, `refs/`) counts too: its
//! `config`, `hooks/`, `info/` and `commondir` are watched the same way. The user's own git, run
//! in that subdirectory later, would obey what a command planted there.

use super::super::super::protected::{PROTECTED_DIRS, PROTECTED_FILES, PROTECTED_GIT_ENTRIES};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What git obeys in a git directory: watched in a directory shaped like one.
const GIT_CONFIGURATION: [&str; 5] = ["config", "config.worktree", "commondir", "hooks", "info"];

/// Most entries looked at in one walk; a larger tree is not walked (and that is said).
const MAX_ENTRIES: usize = 200_000;

/// The protected entries below the top of `root`, as paths beneath it; `None` when the
/// tree is larger than a walk may be.
pub(super) fn scan(root: &Path) -> Option<BTreeSet<PathBuf>> {
    let mut found = BTreeSet::new();
    let mut seen = 0usize;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        let entries: Vec<_> = entries.flatten().collect();
        seen += entries.len();
        if seen > MAX_ENTRIES {
            tracing::warn!(
                "exec: {} holds more than {MAX_ENTRIES} entries: protected names below \
                 its top are not looked after",
                root.display()
            );
            return None;
        }
        // A directory git would take for a repository although it is not named `.git`
        // (`HEAD` beside `objects/` and `refs/`, or beside a `commondir`): its
        // configuration is watched like a `.git`'s, and it is not entered.
        let has = |name: &str, dir: bool| {
            entries
                .iter()
                .any(|e| e.file_name() == name && e.file_type().is_ok_and(|t| t.is_dir() == dir))
        };
        let shaped = has("HEAD", false)
            && (has("commondir", false) || has("objects", true) && has("refs", true));
        if shaped {
            for entry in &entries {
                let name = entry.file_name();
                if GIT_CONFIGURATION.iter().any(|c| name == *c) {
                    found.insert(rel.join(&name));
                }
            }
            continue;
        }
        for entry in &entries {
            let name = entry.file_name();
            let child = rel.join(&name);
            let protected = name == ".git"
                || PROTECTED_DIRS.iter().any(|d| name == *d)
                || PROTECTED_FILES.iter().any(|f| name == *f);
            if protected {
                // The top's own are the launcher's; below, each is watched, not entered.
                if !rel.as_os_str().is_empty() {
                    found.insert(child);
                }
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(child);
            }
        }
    }
    Some(found)
}

/// What to record of each protected entry found: the entry itself, or for a git
/// directory its configuration entries (its objects are the model's to write).
pub(super) fn watched(root: &Path, found: &BTreeSet<PathBuf>) -> Vec<(PathBuf, bool)> {
    let mut items = Vec::new();
    for rel in found {
        let is_git_dir = rel.file_name().is_some_and(|n| n == ".git")
            && root.join(rel).symlink_metadata().is_ok_and(|m| m.is_dir());
        if is_git_dir {
            for entry in PROTECTED_GIT_ENTRIES {
                items.push((rel.join(entry), true));
            }
        } else {
            items.push((rel.clone(), true));
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_protected_names_below_the_top_and_does_not_enter_them() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for dir in [".git/hooks", "a/.git/hooks", "a/b/.claw-tui/x", "c/.claude"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::write(r.join("a/b/.mcp.json"), "{}").unwrap();
        std::fs::write(r.join(".mcp.json"), "{}").unwrap();
        let found = scan(r).unwrap();
        let expected: BTreeSet<PathBuf> = ["a/.git", "a/b/.claw-tui", "a/b/.mcp.json", "c/.claude"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(found, expected);
        // A directory shaped like a git directory: its configuration, not its objects.
        let shaped = r.join("c/fixture");
        std::fs::create_dir_all(shaped.join("objects")).unwrap();
        std::fs::create_dir_all(shaped.join("refs")).unwrap();
        std::fs::write(shaped.join("HEAD"), "ref: refs/heads/main").unwrap();
        std::fs::write(shaped.join("config"), "[core]").unwrap();
        let again = scan(r).unwrap();
        assert!(again.contains(Path::new("c/fixture/config")), "{again:?}");
        assert!(!again.iter().any(|p| p.starts_with("c/fixture/objects")));
        let items = watched(r, &found);
        assert!(items.iter().any(|(p, _)| p == Path::new("a/.git/config")));
        assert!(!items.iter().any(|(p, _)| p == Path::new("a/.git")));
    }
}
