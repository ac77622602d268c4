//! Tool results too large to keep whole (an MCP server's 12 MB answer): the model gets
//! the first [`MAX_RESULT_BYTES`] and a note, and the whole text is kept in a file it
//! can page through with `read_file`.
//!
//! The files are private (0600 in a 0700 directory under the data dir, one directory
//! per workspace); setup adds that directory to the workspace as a read-only tree, so
//! `read_file` reaches it and nothing can write there but claw-tui. Only the newest
//! [`KEPT_FILES`] are kept.

use claw_agent::ToolResult;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most bytes of a result's text the model gets in the result itself.
pub const MAX_RESULT_BYTES: usize = 50 * 1024;
/// How many kept results stay on disk per workspace; older ones are removed.
pub const KEPT_FILES: usize = 64;

/// Where the whole text of capped results is kept.
#[derive(Clone, Debug)]
pub struct LargeResults {
    /// The data dir (private, the top of [`Self::dir`]).
    top: PathBuf,
    /// The workspace's directory of kept results.
    dir: PathBuf,
}

/// Why the whole text of a capped result could not be kept.
#[derive(Debug, thiserror::Error)]
#[error("cannot keep it in {}: {source}", .dir.display())]
pub struct KeepError {
    /// The directory.
    dir: PathBuf,
    /// Why.
    #[source]
    source: std::io::Error,
}

impl LargeResults {
    /// The kept results of `workspace`, under `data_dir`.
    pub fn new(data_dir: &Path, workspace: &Path) -> Self {
        Self {
            top: data_dir.to_path_buf(),
            dir: data_dir
                .join("tool-results")
                .join(crate::workspace::workspace_slug(workspace)),
        }
    }

    /// The directory (created, private), to be readable by `read_file`.
    pub fn prepare(&self) -> Result<&Path, KeepError> {
        crate::private_fs::create_dir(&self.top, &self.dir).map_err(|source| KeepError {
            dir: self.dir.clone(),
            source,
        })?;
        Ok(&self.dir)
    }

    /// Writes `text` to a new private file named after `label`; its path.
    fn keep(&self, label: &str, text: &str) -> Result<PathBuf, KeepError> {
        let failed = |source| KeepError {
            dir: self.dir.clone(),
            source,
        };
        self.prepare()?;
        let safe: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        let path = self
            .dir
            .join(format!("{stamp}-{safe}-{:08x}.txt", fastrand::u32(..)));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = crate::private_fs::open(&path, &mut options).map_err(failed)?;
        file.write_all(text.as_bytes()).map_err(failed)?;
        self.prune();
        Ok(path)
    }

    /// Removes all but the newest [`KEPT_FILES`] (their names start with the time).
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut names: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        if names.len() <= KEPT_FILES {
            return;
        }
        names.sort();
        for old in &names[..names.len() - KEPT_FILES] {
            // Best effort: a file left behind is removed at the next prune.
            let _ = std::fs::remove_file(old);
        }
    }
}

/// `result` with its text cut to [`MAX_RESULT_BYTES`] when longer, saying so and where
/// the whole text is (kept in `store` under `label`), or why it could not be kept.
pub fn cap_result(result: ToolResult, store: Option<&LargeResults>, label: &str) -> ToolResult {
    if result.content.len() <= MAX_RESULT_BYTES {
        return result;
    }
    let total = result.content.len();
    let mut cut = MAX_RESULT_BYTES;
    while !result.content.is_char_boundary(cut) {
        cut -= 1;
    }
    let kept = match store {
        Some(store) => store.keep(label, &result.content),
        None => Err(KeepError {
            dir: PathBuf::new(),
            source: std::io::Error::other("no place to keep it was set up"),
        }),
    };
    let mut details = result.details;
    let note = match &kept {
        Ok(path) => {
            if let Some(map) = details.as_object_mut() {
                map.insert("full_result".into(), path.to_string_lossy().into());
            }
            format!(
                "[The result is {}; only its first {} are shown above. The whole result is in \
                 {}: read it with read_file (offset and limit page through it).]",
                claw_text::byte_size(total as u64),
                claw_text::byte_size(cut as u64),
                path.display()
            )
        }
        Err(e) => format!(
            "[The result is {}; only its first {} are shown above, and the rest was not \
             kept ({e}).]",
            claw_text::byte_size(total as u64),
            claw_text::byte_size(cut as u64)
        ),
    };
    if let Some(map) = details.as_object_mut() {
        map.insert("truncated_from".into(), total.into());
    }
    let mut content = result.content;
    content.truncate(cut);
    content.push_str("\n\n");
    content.push_str(&note);
    ToolResult {
        content,
        details,
        ..result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_is_cut_on_a_character_and_kept_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = LargeResults::new(dir.path(), Path::new("/w/project"));
        let text = "é".repeat(MAX_RESULT_BYTES);
        let short = ToolResult::text("short");
        assert_eq!(cap_result(short.clone(), Some(&store), "s-t"), short);
        let capped = cap_result(
            ToolResult::text(text.clone()).with_details(serde_json::json!({})),
            Some(&store),
            "s-t",
        );
        let path = capped.details["full_result"].as_str().unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        assert!(capped.content.len() < MAX_RESULT_BYTES + 400);
        assert!(capped.content.starts_with(&text[..MAX_RESULT_BYTES]));
        assert!(capped.content.contains(path), "{}", capped.content);
        for _ in 0..KEPT_FILES + 3 {
            cap_result(ToolResult::text(text.clone()), Some(&store), "s-t");
        }
        let kept = std::fs::read_dir(store.prepare().unwrap()).unwrap().count();
        assert_eq!(kept, KEPT_FILES);
        let dropped = cap_result(ToolResult::text(text), None, "s-t");
        assert!(
            dropped.content.contains("the rest was not kept"),
            "{}",
            &dropped.content[MAX_RESULT_BYTES..]
        );
    }
}
