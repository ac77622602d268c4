//! Files the client keeps or reads: the composer history in the data dir (one JSON
//! string per line) and the workspace file list for `@path` completion.

use super::composer::HISTORY_LIMIT;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Workspace entries listed at most for completion.
pub const MAX_FILES: usize = 20_000;

/// The history file in `data_dir`.
pub fn history_path(data_dir: &Path) -> PathBuf {
    data_dir.join("history.jsonl")
}

/// The saved history, oldest first (at most `HISTORY_LIMIT`); a missing file is empty,
/// unreadable lines are skipped.
pub fn load(data_dir: &Path) -> std::io::Result<Vec<String>> {
    let text = match std::fs::read_to_string(history_path(data_dir)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let entries: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .collect();
    let skip = entries.len().saturating_sub(HISTORY_LIMIT);
    Ok(entries.into_iter().skip(skip).collect())
}

/// Appends one entry, creating the file private to the user (it may hold secrets).
pub fn append(data_dir: &Path, entry: &str) -> std::io::Result<()> {
    crate::private_fs::create_dir(data_dir, data_dir)?;
    let line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
    let mut file = crate::private_fs::open(
        &history_path(data_dir),
        std::fs::OpenOptions::new().create(true).append(true),
    )?;
    // One write per entry, so concurrent instances interleave whole lines.
    file.write_all(format!("{line}\n").as_bytes())
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
        assert_eq!(load(&data).unwrap(), Vec::<String>::new());
        append(&data, "first").unwrap();
        append(&data, "two\nlines \"quoted\"").unwrap();
        assert_eq!(load(&data).unwrap(), ["first", "two\nlines \"quoted\""]);
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
