//! Files the client keeps or reads: the composer history in the data dir (one JSON
//! string per line) and the workspace file list for `@path` completion.

use crate::tui::composer::HISTORY_LIMIT;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Workspace entries listed at most for completion.
pub const MAX_FILES: usize = 20_000;

/// The history file in `data_dir`.
pub fn history_path(data_dir: &Path) -> PathBuf {
    data_dir.join("history.jsonl")
}

/// The saved history as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadedHistory {
    /// The entries, oldest first (at most `HISTORY_LIMIT`).
    pub entries: Vec<String>,
    /// Lines that could not be read (not UTF-8, not a JSON string, torn) and were
    /// skipped; every other line is kept.
    pub skipped: usize,
}

/// The saved history; a missing file is empty. Each line stands alone: one that cannot
/// be read (invalid UTF-8 from another program, a torn last line) is skipped and
/// counted, never the whole file.
pub fn load(data_dir: &Path) -> std::io::Result<LoadedHistory> {
    let bytes = match std::fs::read(history_path(data_dir)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LoadedHistory::default()),
        Err(e) => return Err(e),
    };
    let mut loaded = LoadedHistory::default();
    for line in bytes.split(|b| *b == b'\n') {
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice::<String>(line) {
            Ok(entry) => loaded.entries.push(entry),
            Err(_) => loaded.skipped += 1,
        }
    }
    let skip = loaded.entries.len().saturating_sub(HISTORY_LIMIT);
    loaded.entries.drain(..skip);
    Ok(loaded)
}

/// Appends one entry, creating the file private to the user (it may hold secrets).
pub fn append(data_dir: &Path, entry: &str) -> std::io::Result<()> {
    crate::private_fs::create_dir(data_dir, data_dir)?;
    let mut line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
    line.push('\n');
    let file = crate::private_fs::open(
        &history_path(data_dir),
        std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true),
    )?;
    // After a torn last line (a crash mid-write), the entry starts a line of its own
    // rather than joining the fragment, which is then skipped alone.
    if crate::private_fs::ends_mid_line(&file)? {
        line.insert(0, '\n');
    }
    // One write per entry, so concurrent instances interleave whole lines.
    (&file).write_all(line.as_bytes())
}

/// Files and directories of the workspace (relative, `/`-separated, directories with a
/// trailing `/`), honouring `.gitignore` and skipping hidden ones; read through
/// held-open handles like `list_dir` (`tools::fs::workspace_files`).
pub fn list_files(root: &Path) -> Vec<String> {
    crate::tools::fs::workspace_files(root, MAX_FILES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_round_trips_multiline_entries() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        assert_eq!(load(&data).unwrap(), LoadedHistory::default());
        append(&data, "first").unwrap();
        append(&data, "two\nlines \"quoted\"").unwrap();
        assert_eq!(
            load(&data).unwrap().entries,
            ["first", "two\nlines \"quoted\""]
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(history_path(&data))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0);
    }

    #[test]
    fn files_are_listed_relative_and_honour_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("build.log"), "").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        assert_eq!(list_files(dir.path()), ["src/", "src/main.rs"]);
    }
}
