//! Where the sockets of live sessions are: one private directory per user. The directory
//! is the first fence (0700, ours, not a link); each socket is the second (0600); the
//! peer check on every connection is the third.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The longest path a Unix socket address holds (`sun_path` is 108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Why the socket directory or a socket path cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketDirError {
    /// Creating or reading the directory failed.
    #[error("cannot use the socket directory {}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The directory is not ours, or not a plain directory: someone else could reach
    /// (or have planted) the sockets in it.
    #[error(
        "refusing the socket directory {}: {why}; remove it or set XDG_RUNTIME_DIR to a \
         private directory",
        path.display()
    )]
    Unsafe {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The socket's path does not fit a Unix socket address.
    #[error(
        "the socket path {} is {len} bytes, longer than Unix sockets allow ({MAX_SOCKET_PATH}); \
         set XDG_RUNTIME_DIR to a shorter directory",
        path.display()
    )]
    TooLong {
        /// The path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
    },
}

/// The directory the sockets of this user's live sessions are in, created private if
/// it does not exist: `$XDG_RUNTIME_DIR/claw-tui` (a per-user tmpfs the login made), or
/// `sockets` in the state dir when there is no runtime dir.
pub fn socket_dir(state_dir: &Path) -> Result<PathBuf, SocketDirError> {
    let dir = match runtime_dir() {
        Some(runtime) => runtime.join("claw-tui"),
        None => state_dir.join("sockets"),
    };
    ensure_private(&dir)?;
    Ok(dir)
}

/// `$XDG_RUNTIME_DIR` when it is set to an absolute directory of ours.
fn runtime_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("XDG_RUNTIME_DIR")?);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (dir.is_absolute() && meta.is_dir() && meta.uid() == euid()).then_some(dir)
}

/// Creates `dir` (0700) or checks the one there: a directory, not a link, ours; a mode
/// that lets others in is narrowed (only its owner could have set it).
pub fn ensure_private(dir: &Path) -> Result<(), SocketDirError> {
    let io = |source| SocketDirError::Io {
        path: dir.to_owned(),
        source,
    };
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io)?;
    let unsafe_dir = |why: String| SocketDirError::Unsafe {
        path: dir.to_owned(),
        why,
    };
    if meta.file_type().is_symlink() {
        return Err(unsafe_dir("it is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    if meta.uid() != euid() {
        return Err(unsafe_dir(format!(
            "it belongs to user {}, not to you ({})",
            meta.uid(),
            euid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    }
    Ok(())
}

/// The socket of session `id` in `dir`, if its path fits a socket address.
pub fn socket_path(dir: &Path, id: &str) -> Result<PathBuf, SocketDirError> {
    let path = dir.join(format!("{id}.sock"));
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(SocketDirError::TooLong { path, len });
    }
    Ok(path)
}

/// This process's effective user id.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_is_private_and_a_loose_one_is_narrowed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("sockets");
        ensure_private(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        ensure_private(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_link_in_place_of_the_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let dir = tmp.path().join("sockets");
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        let err = ensure_private(&dir).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }

    #[test]
    fn a_path_too_long_for_a_socket_is_refused_with_the_way_out() {
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(120)));
        let err = socket_path(&long, "s1").unwrap_err();
        assert!(err.to_string().contains("XDG_RUNTIME_DIR"), "{err}");
        assert!(socket_path(Path::new("/run/user/1000/claw-tui"), "s1").is_ok());
    }
}
