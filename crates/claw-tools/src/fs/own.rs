//! The files claw-tui reads or writes in the workspace for itself (the instructions
//! files, memory, skills and commands it puts into prompts; the `/export` page it
//! writes for the user), held to the file tools' rule: every open happens beneath a
//! held-open directory (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, see
//! [`crate::workspace`]), so a symlink the model planted cannot lead a read or a
//! write out of it.
//!
//! - A read takes only a regular file, opened without blocking (a FIFO or a device in
//!   its place is refused, never waited on), and at most the bytes asked for.
//! - A write is a new file or the atomic replacement of a regular file (a temp file
//!   beside it, renamed over it), 0600; a symlink, directory or other file in its
//!   place is refused, so a planted link never receives the bytes.

use super::{open_nonblocking, replace_file};
use crate::workspace::is_escape;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use nix::errno::Errno;
use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The mode of a file claw-tui writes for the user: it may hold a whole conversation.
pub const PRIVATE_MODE: u32 = 0o600;

/// Why a file claw-tui reads or writes for itself was not used; the text is for the user.
#[derive(Debug, thiserror::Error)]
pub enum OwnFileError {
    /// A symlink (or `..`) in the path leads out of the tree it must stay in.
    #[error("{} leads outside {} through a symlink", .path.display(), .tree.display())]
    Outside {
        /// The path.
        path: PathBuf,
        /// The tree it must stay in.
        tree: PathBuf,
    },
    /// Something other than a regular file is there (a FIFO, a device, a socket, a
    /// directory, or a symlink where a file is written).
    #[error("{} is {what}, not a regular file", .path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What is there instead.
        what: &'static str,
    },
    /// The path is not inside the tree at all (a caller's mistake, reported rather
    /// than opened elsewhere).
    #[error("{} is not inside {}", .path.display(), .tree.display())]
    NotBeneath {
        /// The path.
        path: PathBuf,
        /// The tree.
        tree: PathBuf,
    },
    /// Reading or writing failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// The first bytes of a file, and its whole size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capped {
    /// At most the bytes asked for.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub size: u64,
}

/// A directory tree claw-tui opens its own files in, held open.
#[derive(Debug)]
pub struct OwnTree {
    root: PathBuf,
    dir: Dir,
}

impl OwnTree {
    /// Holds the directory at `root` (absolute, symlinks resolved) open.
    pub fn open(root: &Path) -> Result<Self, OwnFileError> {
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|source| {
            OwnFileError::Io {
                path: root.to_path_buf(),
                source,
            }
        })?;
        Ok(Self {
            root: root.to_path_buf(),
            dir,
        })
    }

    /// The tree's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `path` (absolute) is in this tree, by its text.
    pub fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    /// `path` relative to the tree (`.` for the tree itself).
    fn rel<'a>(&self, path: &'a Path) -> Result<&'a Path, OwnFileError> {
        let rel = path
            .strip_prefix(&self.root)
            .map_err(|_| OwnFileError::NotBeneath {
                path: path.to_path_buf(),
                tree: self.root.clone(),
            })?;
        Ok(if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        })
    }

    /// The error for a failed open or read of `path`.
    fn failure(&self, path: &Path, source: io::Error) -> OwnFileError {
        if is_escape(&source) || source.raw_os_error() == Some(Errno::ELOOP as i32) {
            OwnFileError::Outside {
                path: path.to_path_buf(),
                tree: self.root.clone(),
            }
        } else {
            OwnFileError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }

    /// The first `max` bytes of the regular file at `path` (absolute, in this tree);
    /// `Ok(None)` when nothing is there.
    pub fn read(&self, path: &Path, max: u64) -> Result<Option<Capped>, OwnFileError> {
        let rel = self.rel(path)?;
        let file = match open_nonblocking(&self.dir, rel) {
            Ok(file) => file,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(self.failure(path, e)),
        };
        read_capped_file(file, path, max)
    }

    /// The names in the directory at `path` (absolute, in this tree), sorted; `Ok(None)`
    /// when there is no directory there.
    pub fn entries(&self, path: &Path) -> Result<Option<Vec<OsString>>, OwnFileError> {
        let rel = self.rel(path)?;
        let dir = match self.dir.open_dir(rel) {
            Ok(dir) => dir,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(self.failure(path, e)),
        };
        let mut names = Vec::new();
        let listing = dir.entries().map_err(|e| self.failure(path, e))?;
        for entry in listing {
            names.push(entry.map_err(|e| self.failure(path, e))?.file_name());
        }
        names.sort();
        Ok(Some(names))
    }

    /// Writes `bytes` to the file at `path` (absolute, in this tree; its directory must
    /// exist) as a new file or in place of a regular file, 0600. A symlink or anything
    /// but a regular file there is refused.
    pub fn write_private(&self, path: &Path, bytes: &[u8]) -> Result<(), OwnFileError> {
        let rel = self.rel(path)?;
        let (Some(name), parent) = (rel.file_name(), rel.parent()) else {
            return Err(OwnFileError::NotRegular {
                path: path.to_path_buf(),
                what: "a directory",
            });
        };
        let parent = parent
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = self
            .dir
            .open_dir(parent)
            .map_err(|e| self.failure(path, e))?;
        match dir.symlink_metadata(name) {
            Ok(meta) if !meta.is_file() => {
                return Err(OwnFileError::NotRegular {
                    path: path.to_path_buf(),
                    what: kind_of_entry(&meta.file_type()),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.failure(path, e)),
        }
        // The rename replaces whatever name is there by then, never writing through it.
        replace_file(&dir, name, bytes, Some(PRIVATE_MODE)).map_err(|source| OwnFileError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The first `max` bytes of the regular file at `path`, which is outside every tree the
/// model can write (the user's config dir, home directory): opened without blocking, so
/// a FIFO or a device in its place is refused, never waited on. `Ok(None)` when nothing
/// is there.
pub fn read_outside(path: &Path, max: u64) -> Result<Option<Capped>, OwnFileError> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path);
    match opened {
        Ok(file) => read_capped_file(file, path, max),
        Err(e) if is_missing(&e) => Ok(None),
        Err(source) => Err(OwnFileError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The first `max` bytes of the open `file`, refused unless it is a regular file.
fn read_capped_file(
    file: std::fs::File,
    path: &Path,
    max: u64,
) -> Result<Option<Capped>, OwnFileError> {
    let io = |source| OwnFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(OwnFileError::NotRegular {
            path: path.to_path_buf(),
            what: kind_of(&meta.file_type()),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(max)).unwrap_or(0));
    file.take(max).read_to_end(&mut bytes).map_err(io)?;
    Ok(Some(Capped {
        bytes,
        size: meta.len(),
    }))
}

/// Whether `e` says nothing is at the path (or a part of it is not a directory).
fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// What a file of a type other than a regular file is, for messages.
fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    kind(
        file_type.is_fifo(),
        file_type.is_char_device() || file_type.is_block_device(),
        file_type.is_socket(),
        file_type.is_dir(),
        file_type.is_symlink(),
    )
}

/// [`kind_of`] for a type cap-std reported.
fn kind_of_entry(file_type: &cap_std::fs::FileType) -> &'static str {
    use cap_std::fs::FileTypeExt;
    kind(
        file_type.is_fifo(),
        file_type.is_char_device() || file_type.is_block_device(),
        file_type.is_socket(),
        file_type.is_dir(),
        file_type.is_symlink(),
    )
}

fn kind(fifo: bool, device: bool, socket: bool, dir: bool, symlink: bool) -> &'static str {
    if fifo {
        "a FIFO"
    } else if device {
        "a device"
    } else if socket {
        "a socket"
    } else if dir {
        "a directory"
    } else if symlink {
        "a symlink"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn tree() -> (tempfile::TempDir, PathBuf, OwnTree) {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir(top.join("ws")).unwrap();
        std::fs::write(top.join("secret"), "outside").unwrap();
        let tree = OwnTree::open(&top.join("ws")).unwrap();
        (dir, top, tree)
    }

    #[test]
    fn reads_stay_beneath_and_take_regular_files_only() {
        let (_dir, top, tree) = tree();
        let ws = top.join("ws");
        std::fs::write(ws.join("a.md"), "abcdef").unwrap();
        symlink("a.md", ws.join("inside")).unwrap();
        symlink("../secret", ws.join("up")).unwrap();
        symlink(top.join("secret"), ws.join("absolute")).unwrap();
        nix::unistd::mkfifo(&ws.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let read = |name: &str| tree.read(&ws.join(name), 4);
        let capped = read("a.md").unwrap().unwrap();
        assert_eq!((capped.bytes.as_slice(), capped.size), (&b"abcd"[..], 6));
        assert_eq!(read("inside").unwrap().unwrap().bytes, b"abcd");
        assert!(read("missing").unwrap().is_none());
        for name in ["up", "absolute"] {
            let err = read(name).unwrap_err();
            assert!(matches!(err, OwnFileError::Outside { .. }), "{name}: {err}");
        }
        let err = read("fifo").unwrap_err();
        assert!(
            matches!(err, OwnFileError::NotRegular { what: "a FIFO", .. }),
            "{err}"
        );
        let err = tree.read(&top.join("secret"), 4).unwrap_err();
        assert!(matches!(err, OwnFileError::NotBeneath { .. }), "{err}");
    }

    #[test]
    fn writes_are_private_and_never_follow_a_symlink() {
        let (_dir, top, tree) = tree();
        let ws = top.join("ws");
        tree.write_private(&ws.join("page.html"), b"one").unwrap();
        let mode = std::fs::metadata(ws.join("page.html"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::set_permissions(ws.join("page.html"), PermissionsExt::from_mode(0o644)).unwrap();
        tree.write_private(&ws.join("page.html"), b"two").unwrap();
        let meta = std::fs::metadata(ws.join("page.html")).unwrap();
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o600,
            "replaced: 0600 again"
        );
        assert_eq!(std::fs::read(ws.join("page.html")).unwrap(), b"two");
        symlink(top.join("secret"), ws.join("planted.html")).unwrap();
        let err = tree
            .write_private(&ws.join("planted.html"), b"evil")
            .unwrap_err();
        assert!(
            matches!(
                err,
                OwnFileError::NotRegular {
                    what: "a symlink",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(std::fs::read(top.join("secret")).unwrap(), b"outside");
        symlink("..", ws.join("up")).unwrap();
        let err = tree.write_private(&ws.join("up/x"), b"evil").unwrap_err();
        assert!(matches!(err, OwnFileError::Outside { .. }), "{err}");
        assert!(!top.join("x").exists());
    }
}
