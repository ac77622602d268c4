//! Which workspace files a command runs, as far as its words say, and what each holds.
//!
//! A hook `sh .claw-tui/hooks/no-rm.sh` or a server `node tools/server.js` runs a file
//! the model could write. Each word of the command (and the value of an
//! `--option=value` word) that names an existing file (not a directory) inside the
//! workspace, by its own path or where its symlinks lead, is such a file. A program
//! found through `PATH`, a module (`python -m pkg`) or a file a script sources by itself
//! is not seen: those are the command's own business, as they are for the user's shell.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// A file larger than this is never pinned (it cannot be trusted either).
pub const MAX_PINNED_BYTES: u64 = 64 * 1024 * 1024;

/// A workspace file something outside the sandbox runs, with what it holds now.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PinnedFile {
    /// Its path as the command names it, absolute.
    pub path: PathBuf,
    /// SHA-256 of its content in hex; `None` when it cannot be read as a regular file
    /// of at most [`MAX_PINNED_BYTES`] (such a file is never trusted).
    pub sha256: Option<String>,
    /// Its size in bytes.
    pub size: u64,
}

impl PinnedFile {
    /// The file at `path` as it is now.
    pub fn read(path: &Path) -> Self {
        Self::read_keeping(path).0
    }

    /// The file at `path` as it is now, and the bytes that were hashed (`None` when it
    /// cannot be pinned): what runs must be these bytes, not the file read again.
    pub fn read_keeping(path: &Path) -> (Self, Option<Vec<u8>>) {
        let (sha256, size, bytes) = match hash_regular(path) {
            Ok((sha256, bytes)) => (Some(sha256), bytes.len() as u64, Some(bytes)),
            Err(size) => (None, size, None),
        };
        let file = Self {
            path: path.to_path_buf(),
            sha256,
            size,
        };
        (file, bytes)
    }

    /// The first twelve hex digits of the hash, for people.
    pub fn short_hash(&self) -> &str {
        self.sha256
            .as_deref()
            .map_or("unreadable", |h| &h[..h.len().min(12)])
    }
}

/// The hash and the content of the regular file at `path`, opened without blocking (a
/// pipe or device in its place cannot hang the caller) and read at most to the limit;
/// `Err` with the size when it is something else, too large or unreadable.
fn hash_regular(path: &Path) -> Result<(String, Vec<u8>), u64> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(|_| 0u64)?;
    let meta = file.metadata().map_err(|_| 0u64)?;
    if !meta.is_file() || meta.len() > MAX_PINNED_BYTES {
        return Err(meta.len());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_PINNED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| meta.len())?;
    if bytes.len() as u64 > MAX_PINNED_BYTES {
        return Err(bytes.len() as u64);
    }
    let hash: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((hash, bytes))
}

/// Every path the words of a command (and their `--option=VALUE` values) would name,
/// run in `cwd`, by their text alone: whether each exists is not looked at.
pub fn word_paths(words: &[String], cwd: &Path) -> Vec<PathBuf> {
    words
        .iter()
        .flat_map(|word| {
            std::iter::once(word.as_str()).chain(option_value(word).map(|(_, value)| value))
        })
        .filter_map(|word| word_path(word, cwd))
        .collect()
}

/// The files inside `workspace` (absolute, symlinks resolved) that `words`, run in
/// `cwd`, name; each once, in the order named.
pub fn named_files(words: &[String], cwd: &Path, workspace: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let candidates = words.iter().flat_map(|word| {
        std::iter::once(word.as_str()).chain(option_value(word).map(|(_, value)| value))
    });
    for word in candidates {
        let Some(path) = word_path(word, cwd) else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        let inside = path.starts_with(workspace)
            || path
                .canonicalize()
                .is_ok_and(|real| real.starts_with(workspace));
        if inside && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// The value of an `--option=value` word: (`--option=`, `value`).
pub fn option_value(word: &str) -> Option<(&str, &str)> {
    let (option, value) = word.strip_prefix('-')?.split_once('=')?;
    Some((&word[..option.len() + 2], value))
}

/// The path a word names when run in `cwd` (`~/` is the home directory), with `.` and
/// `..` taken out by their text; `None` for an empty word.
pub fn word_path(word: &str, cwd: &Path) -> Option<PathBuf> {
    if word.is_empty() {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = match (word.strip_prefix("~/"), &home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => cwd.join(word),
    };
    Some(lexical(&path))
}

/// `path` with `.` and `..` taken out by their text.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn words_that_are_workspace_files_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join(".claw-tui/hooks")).unwrap();
        std::fs::create_dir_all(ws.join("tools")).unwrap();
        std::fs::write(ws.join(".claw-tui/hooks/no-rm.sh"), "exit 0").unwrap();
        std::fs::write(ws.join("tools/server.js"), "x").unwrap();
        std::fs::write(ws.join("tools/conf.json"), "{}").unwrap();
        std::fs::write(dir.path().join("outside.sh"), "x").unwrap();
        std::os::unix::fs::symlink(ws.join("tools/server.js"), dir.path().join("link.js")).unwrap();
        let found = named_files(&words("sh .claw-tui/hooks/no-rm.sh"), &ws, &ws);
        assert_eq!(found, [ws.join(".claw-tui/hooks/no-rm.sh")]);
        let found = named_files(
            &words("node ./server.js --config=conf.json ../outside.sh tools sh -c"),
            &ws.join("tools"),
            &ws,
        );
        assert_eq!(
            found,
            [ws.join("tools/server.js"), ws.join("tools/conf.json")]
        );
        // A link outside leading in counts; a file outside does not; nor a directory.
        let found = named_files(&words("../link.js ../outside.sh ."), &ws, &ws);
        assert_eq!(found, [dir.path().canonicalize().unwrap().join("link.js")]);
    }

    #[test]
    fn content_is_hashed_and_odd_files_are_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.sh");
        std::fs::write(&file, "abc").unwrap();
        let pinned = PinnedFile::read(&file);
        assert_eq!(
            pinned.sha256.as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!((pinned.size, pinned.short_hash()), (3, "ba7816bf8f01"));
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(PinnedFile::read(&fifo).sha256, None);
        assert_eq!(PinnedFile::read(&dir.path().join("missing")).sha256, None);
    }
}
