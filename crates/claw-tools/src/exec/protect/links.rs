//! Protected files with a second name: a hard link, made before the file was protected
//! (a repository a command made, a command run without a mount namespace) or by the
//! user. The launcher binds the protected name read-only, but a write through the other
//! name reaches the same file, so before each command every protected file is looked at:
//! another name inside the workspace is given a copy of its own (it keeps its content,
//! and the protected file no longer changes with it); a name that cannot be found there
//! keeps the command from running.
//!
//! The protected file itself is never replaced: a rename over it would end the
//! read-only bind on it in the namespace of any command still running.

use super::snapshot::open_subdir;
use super::{Outcome, Settled, candidates, parent};
use crate::protected::{MODEL_WRITABLE, Protected};
use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};
use nix::fcntl::OFlag;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Entries looked at beneath the protected directories, and in the search for other names.
const MAX_PROTECTED_ENTRIES: usize = 10_000;
const MAX_SEARCHED_ENTRIES: usize = 500_000;
/// The largest other name given a copy of its own.
const MAX_COPY: u64 = 64 << 20;

/// A protected file with more than one name.
#[derive(Debug)]
struct Linked {
    path: PathBuf,
    links: u64,
}

/// Gives every other name of a protected file found beneath `search` (the places a
/// command may write) a copy of its own; one note per protected file that had other
/// names, [`Outcome::StillLinked`] when some are left (the command must not run).
pub(in crate::exec) fn separate(protected: &Protected, search: &[PathBuf]) -> Vec<Settled> {
    let linked = linked_files(protected);
    if linked.is_empty() {
        return Vec::new();
    }
    let wanted: BTreeMap<(u64, u64), &Linked> = linked.iter().map(|(id, l)| (*id, l)).collect();
    let mut others: BTreeMap<(u64, u64), Vec<(PathBuf, PathBuf)>> = BTreeMap::new();
    let mut budget = MAX_SEARCHED_ENTRIES;
    for root in search {
        if let Ok(dir) = Dir::open_ambient_dir(root, cap_std::ambient_authority()) {
            find(&dir, root, Path::new(""), &wanted, &mut others, &mut budget);
        }
    }
    let mut settled = Vec::new();
    for (id, file) in &linked {
        let mut separated = Vec::new();
        for (root, rel) in others.get(id).into_iter().flatten() {
            match copy_over(root, rel, *id) {
                Ok(()) => separated.push(root.join(rel)),
                Err(e) => tracing::warn!(
                    "exec: cannot give {} a copy of its own: {e}",
                    root.join(rel).display()
                ),
            }
        }
        let left = std::fs::symlink_metadata(&file.path).map_or(1, |m| {
            use std::os::unix::fs::MetadataExt;
            m.nlink()
        });
        tracing::warn!(
            "exec: {} had {} names; {} were given copies of their own, {} left",
            file.path.display(),
            file.links,
            separated.len(),
            left - 1
        );
        settled.push(Settled {
            path: file.path.clone(),
            outcome: if left > 1 {
                Outcome::StillLinked(left - 1)
            } else {
                Outcome::Separated(separated)
            },
        });
    }
    settled
}

/// Every protected regular file (beneath the protected directories too) with more than
/// one name, by device and inode.
fn linked_files(protected: &Protected) -> Vec<((u64, u64), Linked)> {
    let mut found = Vec::new();
    let mut budget = MAX_PROTECTED_ENTRIES;
    for (root, rel) in candidates(protected) {
        // The repository's own files (objects, refs) are not configuration.
        if rel == Path::new(".git") {
            continue;
        }
        let Ok((dir, name)) = parent(&root, &rel) else {
            continue;
        };
        let path = root.join(&rel);
        look(&dir, &name, &path, &mut found, &mut budget);
    }
    found
}

fn look(
    dir: &Dir,
    name: &OsString,
    path: &Path,
    found: &mut Vec<((u64, u64), Linked)>,
    budget: &mut usize,
) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let Ok(meta) = dir.symlink_metadata(name) else {
        return;
    };
    if meta.is_file() && meta.nlink() > 1 && !path.ends_with(MODEL_WRITABLE) {
        found.push((
            (meta.dev(), meta.ino()),
            Linked {
                path: path.to_path_buf(),
                links: meta.nlink(),
            },
        ));
    }
    // A submodule's objects are not configuration.
    let data = ["objects", "refs", "logs"].iter().any(|d| name == d);
    if !meta.is_dir() || data {
        return;
    }
    let Ok(sub) = open_subdir(dir, name) else {
        return;
    };
    let Ok(entries) = sub.entries() else {
        return;
    };
    for entry in entries.flatten() {
        let child = entry.file_name();
        look(&sub, &child, &path.join(&child), found, budget);
    }
}

/// Walks `dir` (`rel` beneath `root`) for the files in `wanted`, never following a
/// symlink; the protected files themselves are not other names.
fn find(
    dir: &Dir,
    root: &Path,
    rel: &Path,
    wanted: &BTreeMap<(u64, u64), &Linked>,
    others: &mut BTreeMap<(u64, u64), Vec<(PathBuf, PathBuf)>>,
    budget: &mut usize,
) {
    let Ok(entries) = dir.entries() else {
        return;
    };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let name = entry.file_name();
        let Ok(meta) = dir.symlink_metadata(&name) else {
            continue;
        };
        let child = rel.join(&name);
        if meta.is_file() && meta.nlink() > 1 {
            let id = (meta.dev(), meta.ino());
            if let Some(file) = wanted.get(&id)
                && file.path != root.join(&child)
            {
                others.entry(id).or_default().push((root.into(), child));
            }
        } else if meta.is_dir()
            && !(name == "objects" && rel.ends_with(".git"))
            && let Ok(sub) = open_subdir(dir, &name)
        {
            find(&sub, root, &child, wanted, others, budget);
        }
    }
}

/// Replaces `rel` in `root` by a copy of itself, if it is still the file `id`.
fn copy_over(root: &Path, rel: &Path, id: (u64, u64)) -> io::Result<()> {
    let (dir, name) = parent(root, rel)?;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    let mut file = dir.open_with(&name, &options)?;
    let meta = file.metadata()?;
    if (meta.dev(), meta.ino()) != id || !meta.is_file() || meta.len() > MAX_COPY {
        return Err(io::Error::other(
            "it is no longer the same small regular file",
        ));
    }
    let mut content = Vec::new();
    (&mut file).take(MAX_COPY).read_to_end(&mut content)?;
    let mut temp = name.clone();
    temp.push(format!(".{:08x}.relink", fastrand::u32(..)));
    let mut options = OpenOptions::new();
    options
        .write(true)
        .create_new(true)
        .custom_flags(OFlag::O_NOFOLLOW.bits());
    let written = dir.open_with(&temp, &options).and_then(|mut copy| {
        copy.write_all(&content)?;
        copy.set_permissions(Permissions::from_mode(meta.permissions().mode() & 0o777))
    });
    let done = written.and_then(|()| dir.rename(&temp, &dir, &name));
    if done.is_err() {
        let _ = dir.remove_file(&temp);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_name_in_the_workspace_gets_a_copy_and_one_outside_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(ws.join("deep")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(ws.join(".git/hooks/pre-commit"), "exit 0\n").unwrap();
        std::fs::hard_link(ws.join(".git/config"), ws.join("deep/cfg")).unwrap();
        let protected = Protected::for_workspace(&ws);
        let settled = separate(&protected, std::slice::from_ref(&ws));
        assert_eq!(settled.len(), 1, "{settled:?}");
        assert_eq!(
            settled[0].outcome,
            Outcome::Separated(vec![ws.join("deep/cfg")])
        );
        std::fs::write(ws.join("deep/cfg"), "[core]\n\tfsmonitor = x\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(separate(&protected, std::slice::from_ref(&ws)).is_empty());

        std::fs::hard_link(ws.join(".git/hooks/pre-commit"), root.join("outside")).unwrap();
        let settled = separate(&protected, std::slice::from_ref(&ws));
        assert_eq!(settled.len(), 1, "{settled:?}");
        assert_eq!(settled[0].path, ws.join(".git/hooks/pre-commit"));
        assert_eq!(settled[0].outcome, Outcome::StillLinked(1));
    }
}
