//! Directories git would take for a repository although they are not named `.git`.
//!
//! Git's discovery, in a directory without `.git`, takes the directory itself for a git
//! directory when it holds a `HEAD` file and `objects/` and `refs/` directories, or a
//! `commondir` file naming another directory that has them (a bare repository;
//! `core.worktree` can then point it at any tree). Its `config` is obeyed like
//! `.git/config`: a model that writes `HEAD`, `config`, `objects/` and `refs/` into
//! `src/` gets its `core.fsmonitor` run by the user's next `git status` there. So in such
//! a directory the executable configuration is as protected as in `.git`, and a write
//! that would make a directory holding any of that configuration look like one is
//! refused too: whichever piece is written last is refused.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Held by each write of a path with one of those names in it, from its check until it
/// landed, so that parallel calls cannot each pass the check before the other wrote.
static SHAPING: Mutex<()> = Mutex::new(());

/// The guard a write of `rel` holds, when a component of it is one of the names above.
pub fn serialize(rel: &Path) -> Option<MutexGuard<'static, ()>> {
    let named = rel.components().any(|c| {
        let name = c.as_os_str();
        SHAPE.iter().chain(&CONFIGURATION).any(|n| name == *n)
    });
    // Nothing under the lock can panic half-way through a check; a poisoned one is fine.
    named.then(|| SHAPING.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Entries of a git-like directory the model may not write: what git runs or obeys.
const CONFIGURATION: [&str; 5] = ["config", "config.worktree", "commondir", "hooks", "info"];

/// Entries that make a directory git-like.
const SHAPE: [&str; 3] = ["HEAD", "objects", "refs"];

/// Whether writing `path` (absolute, resolved) would leave a directory between `root`
/// and it git-like with configuration in it, and `path` is part of either.
pub(super) fn refuses(root: &Path, path: &Path) -> bool {
    let Ok(inside) = path.strip_prefix(root) else {
        return false;
    };
    let mut dir: PathBuf = root.to_path_buf();
    let names: Vec<_> = inside.components().collect();
    // Every directory from the root down to the file's parent.
    for (depth, name) in names.iter().enumerate() {
        let first = name.as_os_str();
        let is_shape = SHAPE.iter().any(|s| first == *s);
        let is_config = CONFIGURATION.iter().any(|c| first == *c);
        if (is_shape || is_config) && would_be_git_like(&dir, first, depth + 1 == names.len()) {
            let configured = is_config
                || CONFIGURATION
                    .iter()
                    .any(|c| dir.join(c).symlink_metadata().is_ok());
            if configured {
                return true;
            }
        }
        dir.push(name);
    }
    false
}

/// Whether `dir` holds `HEAD` as a file and `objects/` and `refs/` as directories once
/// `written` (an entry of it; `is_file`: the write's own file) exists.
fn would_be_git_like(dir: &Path, written: &std::ffi::OsStr, is_file: bool) -> bool {
    let head = written == "HEAD" && is_file || dir.join("HEAD").is_file();
    let objects = written == "objects" && !is_file || dir.join("objects").is_dir();
    let refs = written == "refs" && !is_file || dir.join("refs").is_dir();
    // A `commondir` file sends git to another directory for `objects/`, `refs/` and
    // `config`: with `HEAD` beside it, this is a git directory whatever else it holds.
    let common = written == "commondir" && is_file || dir.join("commondir").exists();
    head && (common || objects && refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dir: &Path, entries: &[&str]) {
        for entry in entries {
            match *entry {
                "HEAD" | "config" => std::fs::write(dir.join(entry), "x").unwrap(),
                other => std::fs::create_dir_all(dir.join(other)).unwrap(),
            }
        }
    }

    #[test]
    fn the_last_of_head_objects_refs_and_config_is_refused_in_any_order() {
        let all = ["HEAD", "objects", "refs", "config"];
        for last in 0..all.len() {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("src");
            std::fs::create_dir(&dir).unwrap();
            let before: Vec<&str> = all
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != last)
                .map(|(_, e)| *e)
                .collect();
            shape(&dir, &before);
            let target = match all[last] {
                "objects" => dir.join("objects/ab/cd"),
                "refs" => dir.join("refs/heads/main"),
                other => dir.join(other),
            };
            assert!(
                refuses(root.path(), &target),
                "{} last was let through",
                all[last]
            );
        }
    }

    #[test]
    fn head_beside_a_commondir_is_a_git_directory_in_either_order() {
        let root = tempfile::tempdir().unwrap();
        let x = root.path().join("x");
        std::fs::create_dir(&x).unwrap();
        std::fs::write(x.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(refuses(root.path(), &x.join("commondir")));
        std::fs::remove_file(x.join("HEAD")).unwrap();
        std::fs::write(x.join("commondir"), "../y\n").unwrap();
        assert!(refuses(root.path(), &x.join("HEAD")));
    }

    #[test]
    fn hooks_and_info_of_a_git_like_directory_are_refused() {
        let root = tempfile::tempdir().unwrap();
        shape(root.path(), &["HEAD", "objects", "refs"]);
        assert!(refuses(
            root.path(),
            &root.path().join("hooks/post-checkout")
        ));
        assert!(refuses(root.path(), &root.path().join("info/attributes")));
        assert!(refuses(root.path(), &root.path().join("config")));
    }

    #[test]
    fn ordinary_files_of_those_names_are_not() {
        let root = tempfile::tempdir().unwrap();
        // A `config` directory of an app, a `refs` folder of docs, a `HEAD` file alone.
        shape(root.path(), &["refs", "HEAD"]);
        assert!(!refuses(root.path(), &root.path().join("config/app.toml")));
        assert!(!refuses(root.path(), &root.path().join("refs/notes.md")));
        assert!(!refuses(
            root.path(),
            &root.path().join("src/objects/mod.rs")
        ));
        assert!(!refuses(
            root.path(),
            &root.path().join("hooks/useThing.ts")
        ));
    }
}
