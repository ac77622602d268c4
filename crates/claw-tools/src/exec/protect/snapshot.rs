//! What a protected path holds, recorded before a command and put back after it: every
//! entry beneath it (directories, files with their content, symlinks), read through
//! directory handles that never follow a symlink, and within a budget.

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};
use nix::fcntl::OFlag;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Content kept per file; a larger one is known by its hash only.
const MAX_FILE: u64 = 1 << 20;
/// Content kept per snapshot.
const MAX_TOTAL: u64 = 16 << 20;
/// Entries recorded per snapshot; the rest are not looked at.
const MAX_ENTRIES: usize = 20_000;

/// One entry, without its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Entry {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        hash: [u8; 32],
        content: Option<Vec<u8>>,
    },
    Link(PathBuf),
    /// A device, FIFO or socket: never read.
    Other,
}

impl Entry {
    /// Equal as far as the file system goes (content by hash).
    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Self::File { mode, hash, .. },
                Self::File {
                    mode: m, hash: h, ..
                },
            ) => mode == m && hash == h,
            (a, b) => a == b,
        }
    }
}

/// A path's state: absent, or a tree of entries by path relative to it ("" is itself).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Tree {
    pub entries: BTreeMap<PathBuf, Entry>,
    /// Some content was not kept (too large, or over the budget).
    pub partial: bool,
    /// The device and inode of the path itself: which directory it is, not what it holds.
    pub identity: (u64, u64),
}

impl Tree {
    /// Whether `other` holds the same, ignoring entries `skip` says are free to change.
    pub fn same(&self, other: &Self, skip: impl Fn(&Path) -> bool) -> bool {
        let kept = |t: &Self| -> Vec<(PathBuf, Entry)> {
            t.entries
                .iter()
                .filter(|(p, _)| !skip(p))
                .map(|(p, e)| (p.clone(), e.clone()))
                .collect()
        };
        let (a, b) = (kept(self), kept(other));
        a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && x.1.same(&y.1))
    }

    /// Whether every file's content is kept, so the tree can be put back.
    pub fn restorable(&self) -> bool {
        !self.partial
    }
}

/// Opens `name` in `dir` as a directory, refusing a symlink.
pub(super) fn open_subdir(dir: &Dir, name: impl AsRef<Path>) -> io::Result<Dir> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW).bits());
    Ok(Dir::from_std_file(
        dir.open_with(name, &options)?.into_std(),
    ))
}

/// Records `name` in `dir` (absent: `None`); with `deep`, everything beneath it too.
pub(super) fn record(dir: &Dir, name: &OsStr, deep: bool) -> io::Result<Option<Tree>> {
    let mut tree = Tree::default();
    let mut budget = MAX_TOTAL;
    if let Ok(meta) = dir.symlink_metadata(name) {
        use cap_std::fs::MetadataExt;
        tree.identity = (meta.dev(), meta.ino());
    }
    match entry(dir, name, deep, &mut budget) {
        Ok((top, partial)) => {
            tree.partial |= partial;
            let is_dir = matches!(top, Entry::Dir { .. });
            tree.entries.insert(PathBuf::new(), top);
            if deep && is_dir {
                let sub = open_subdir(dir, name)?;
                walk(&sub, Path::new(""), &mut tree, &mut budget)?;
            }
            Ok(Some(tree))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn walk(dir: &Dir, rel: &Path, tree: &mut Tree, budget: &mut u64) -> io::Result<()> {
    let mut names: Vec<OsString> = dir
        .entries()?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    names.sort();
    for name in names {
        if tree.entries.len() >= MAX_ENTRIES {
            tree.partial = true;
            return Ok(());
        }
        let path = rel.join(&name);
        let (found, partial) = match entry(dir, &name, true, budget) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        tree.partial |= partial;
        let is_dir = matches!(found, Entry::Dir { .. });
        tree.entries.insert(path.clone(), found);
        if is_dir {
            walk(&open_subdir(dir, &name)?, &path, tree, budget)?;
        }
    }
    Ok(())
}

/// One entry; the flag says its content was not kept.
fn entry(dir: &Dir, name: &OsStr, read: bool, budget: &mut u64) -> io::Result<(Entry, bool)> {
    let meta = dir.symlink_metadata(name)?;
    let mode = meta.permissions().mode() & 0o7777;
    if meta.is_symlink() {
        return Ok((Entry::Link(dir.read_link_contents(name)?), false));
    }
    if meta.is_dir() {
        return Ok((Entry::Dir { mode }, false));
    }
    if !meta.is_file() {
        return Ok((Entry::Other, false));
    }
    if !read {
        return Ok((
            Entry::File {
                mode,
                hash: [0; 32],
                content: None,
            },
            true,
        ));
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    let mut file = dir.open_with(name, &options)?;
    let mut hasher = Sha256::new();
    let keep = meta.len() <= MAX_FILE && meta.len() <= *budget;
    let mut content = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        if keep {
            content.extend_from_slice(&buf[..n]);
        }
    }
    if keep {
        *budget -= content.len() as u64;
    }
    let content = keep.then_some(content);
    let partial = content.is_none();
    Ok((
        Entry::File {
            mode,
            hash: hasher.finalize().into(),
            content,
        },
        partial,
    ))
}

/// Puts `tree` back at `name` in `dir` (nothing must be there).
pub(super) fn restore(dir: &Dir, name: &OsStr, tree: &Tree) -> io::Result<()> {
    let mut dirs: Vec<(PathBuf, u32)> = Vec::new();
    for (rel, entry) in &tree.entries {
        // Not `join("")`, which would add a trailing slash to a file's name.
        let path = if rel.as_os_str().is_empty() {
            PathBuf::from(name)
        } else {
            Path::new(name).join(rel)
        };
        match entry {
            Entry::Dir { mode } => {
                dir.create_dir(&path)?;
                dirs.push((path, *mode));
            }
            Entry::File { mode, content, .. } => {
                let Some(content) = content else {
                    return Err(io::Error::other(format!(
                        "{} was too large to keep",
                        rel.display()
                    )));
                };
                let mut options = OpenOptions::new();
                options
                    .write(true)
                    .create_new(true)
                    .custom_flags(OFlag::O_NOFOLLOW.bits());
                let mut file = dir.open_with(&path, &options)?;
                std::io::Write::write_all(&mut file, content)?;
                file.set_permissions(Permissions::from_mode(*mode))?;
            }
            Entry::Link(target) => dir.symlink(target, &path)?,
            // Devices, FIFOs and sockets are not made again.
            Entry::Other => {}
        }
    }
    // Modes last: a directory restored read-only must still take its entries.
    for (path, mode) in dirs.into_iter().rev() {
        dir.set_permissions(&path, Permissions::from_mode(mode))?;
    }
    Ok(())
}
