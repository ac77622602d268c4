//! The diff of a `write_file` or `edit_file` call as ACP defines it: the file's whole
//! text before (none for a new file) and after. The tools record the change as hunks
//! (`details.change`); the text after is what `write_file` wrote, or the file as it is
//! now, and the text before is that with each hunk put back. When the file no longer
//! matches the hunks (changed again since), each hunk is shown on its own instead.

use crate::tools::fs::{ChangeKind, FileChange, Hunk, LineKind, read_current};
use crate::tools::workspace::Workspace;
use agent_client_protocol::v1::schema::Diff;
use serde_json::Value;
use std::path::PathBuf;

/// The diffs of a finished call of `tool` with `args` and result `details`; empty for
/// other tools, failed calls and changes the tools did not diff (binary, too large).
/// `read_back`: the workspace the file may be read back from for the text after (a live
/// call; a replayed one shows the hunks, since the file has moved on). The read goes
/// through the workspace handle like the tools' own: the model can swap a symlink in
/// after its edit, and the editor must not be shown what it leads to.
pub fn diffs(
    tool: &str,
    args: &Value,
    details: &Value,
    read_back: Option<&Workspace>,
) -> Vec<Diff> {
    if tool != "write_file" && tool != "edit_file" {
        return Vec::new();
    }
    let Some(change) = FileChange::from_details(details) else {
        return Vec::new();
    };
    if change.omitted.is_some() {
        return Vec::new();
    }
    let Some(path) = details
        .get("path")
        .and_then(Value::as_str)
        .map(PathBuf::from)
    else {
        return Vec::new();
    };
    let after = match (tool, args.get("content").and_then(Value::as_str)) {
        ("write_file", Some(content)) => Some(content.to_owned()),
        _ => read_back.and_then(|workspace| read(workspace, &path)),
    };
    match after {
        Some(after) => whole(path, &change, after),
        None => per_hunk(&path, &change.hunks),
    }
}

/// The file now, if it is a regular file in the workspace, of a size the tools diff,
/// holding text.
fn read(workspace: &Workspace, path: &std::path::Path) -> Option<String> {
    let bytes = read_current(workspace, path).ok()??;
    String::from_utf8(bytes).ok()
}

/// One diff of the whole file, or the hunks alone when `after` no longer matches them.
fn whole(path: PathBuf, change: &FileChange, after: String) -> Vec<Diff> {
    if change.kind == ChangeKind::Created {
        return vec![Diff::new(path, after)];
    }
    match before(&after, &change.hunks) {
        Some(before) => vec![Diff::new(path, after).old_text(before)],
        None => per_hunk(&path, &change.hunks),
    }
}

/// Each hunk as a diff of its own lines (context and the changed ones).
fn per_hunk(path: &std::path::Path, hunks: &[Hunk]) -> Vec<Diff> {
    hunks
        .iter()
        .map(|hunk| {
            let side = |skip: LineKind| {
                let mut text = String::new();
                for line in hunk.lines.iter().filter(|l| l.kind != skip) {
                    text.push_str(&line.text);
                    text.push('\n');
                }
                text
            };
            Diff::new(path, side(LineKind::Removed)).old_text(side(LineKind::Added))
        })
        .collect()
}

/// The text before the change: `after` with each hunk's new lines replaced by its old
/// ones; `None` when `after` does not hold the hunks' new lines where they say.
pub fn before(after: &str, hunks: &[Hunk]) -> Option<String> {
    let lines: Vec<&str> = after.split_inclusive('\n').collect();
    let ending = if after.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(after.len());
    let mut at = 0;
    for hunk in hunks {
        let new: Vec<&str> = hunk
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Removed)
            .map(|l| l.text.as_str())
            .collect();
        // 1-based; a hunk with no new lines starts after line `new_start`.
        let start = if new.is_empty() {
            hunk.new_start
        } else {
            hunk.new_start.checked_sub(1)?
        };
        let end = start.checked_add(new.len())?;
        if start < at || end > lines.len() {
            return None;
        }
        let matches = lines[start..end]
            .iter()
            .zip(&new)
            .all(|(line, text)| line.trim_end_matches(['\n', '\r']) == *text);
        if !matches {
            return None;
        }
        out.extend(lines[at..start].iter().copied());
        for line in hunk.lines.iter().filter(|l| l.kind != LineKind::Added) {
            out.push_str(&line.text);
            out.push_str(ending);
        }
        at = end;
    }
    if at == lines.len() && !after.ends_with('\n') && !hunks.is_empty() {
        // The last line had no line ending after the change: nor, as far as the hunks
        // tell, before it.
        let trimmed = out.strip_suffix(ending).map(str::len);
        if let Some(len) = trimmed {
            out.truncate(len);
        }
    }
    out.extend(lines[at..].iter().copied());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn change(before: &str, after: &str) -> FileChange {
        FileChange::between(
            "f.txt",
            Some(before.as_bytes()),
            Some(after.as_bytes()),
            false,
        )
    }

    #[test]
    fn the_text_before_comes_back_from_the_hunks() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let mut new = old.replace("line 3\n", "three\n").replace("line 30\n", "");
        new.push_str("tail\n");
        let hunks = change(&old, &new).hunks;
        assert_eq!(hunks.len(), 3, "{hunks:?}");
        assert_eq!(before(&new, &hunks).as_deref(), Some(old.as_str()));
        // No line ending at the end, and CRLF files.
        let (old, new) = ("a\nb\nc", "a\nB\nc");
        assert_eq!(before(new, &change(old, new).hunks).as_deref(), Some(old));
        let (old, new) = ("a\r\nb\r\n", "a\r\nx\r\nb\r\n");
        assert_eq!(before(new, &change(old, new).hunks).as_deref(), Some(old));
    }

    #[test]
    fn a_file_changed_again_since_shows_its_hunks_alone() {
        let hunks = change("a\nb\nc\n", "a\nB\nc\n").hunks;
        assert_eq!(before("something else entirely\n", &hunks), None);
        let diffs = whole(
            PathBuf::from("/w/f.txt"),
            &change("a\nb\nc\n", "a\nB\nc\n"),
            "zzz\n".into(),
        );
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].old_text.as_deref(), Some("a\nb\nc\n"));
        assert_eq!(diffs[0].new_text, "a\nB\nc\n");
    }

    #[test]
    fn write_file_diffs_whole_files_and_new_files_have_no_old_text() {
        let created = FileChange::between("n.txt", None, Some(b"hello\n"), false);
        let details = json!({"path": "/w/n.txt", "change": created.to_value()});
        let args = json!({"path": "n.txt", "content": "hello\n"});
        let shown = diffs("write_file", &args, &details, None);
        assert_eq!(shown, [Diff::new("/w/n.txt", "hello\n")]);
        let replaced = change("one\ntwo\n", "one\n2\n");
        let details = json!({"path": "/w/f.txt", "change": replaced.to_value()});
        let args = json!({"path": "f.txt", "content": "one\n2\n"});
        let shown = diffs("write_file", &args, &details, None);
        assert_eq!(
            shown,
            [Diff::new("/w/f.txt", "one\n2\n").old_text("one\ntwo\n".to_owned())]
        );
        assert!(diffs("read_file", &args, &details, None).is_empty());
    }

    #[test]
    fn edit_file_reads_the_file_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let workspace = Workspace::new(&root, false);
        let file = root.join("e.txt");
        std::fs::write(&file, "x\nnew\nz\n").unwrap();
        let edited = change("x\nold\nz\n", "x\nnew\nz\n");
        let details = json!({"path": file.to_str().unwrap(), "change": edited.to_value()});
        let args = json!({"path": "e.txt", "old_text": "old", "new_text": "new"});
        let shown = diffs("edit_file", &args, &details, Some(&workspace));
        assert_eq!(
            shown,
            [Diff::new(&file, "x\nnew\nz\n").old_text("x\nold\nz\n".to_owned())]
        );
        // Replayed: the hunks alone.
        let replayed = diffs("edit_file", &args, &details, None);
        assert_eq!(
            replayed,
            [Diff::new(&file, "x\nnew\nz\n").old_text("x\nold\nz\n".to_owned())]
        );
    }

    /// The model edits a file, then swaps a symlink to a secret outside the workspace in
    /// its place before the diff is read back: the editor is shown the hunks, never the
    /// secret.
    #[test]
    fn a_symlink_swapped_in_after_the_edit_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir(&root).unwrap();
        let secret = dir.path().canonicalize().unwrap().join("secret.txt");
        std::fs::write(&secret, "x\nnew\nz\nTOP-SECRET\n").unwrap();
        let workspace = Workspace::new(&root, false);
        let file = root.join("e.txt");
        std::os::unix::fs::symlink(&secret, &file).unwrap();
        let edited = change("x\nold\nz\n", "x\nnew\nz\n");
        let details = json!({"path": file.to_str().unwrap(), "change": edited.to_value()});
        let args = json!({"path": "e.txt", "old_text": "old", "new_text": "new"});
        let shown = diffs("edit_file", &args, &details, Some(&workspace));
        assert_eq!(shown.len(), 1);
        for diff in &shown {
            assert!(!diff.new_text.contains("TOP-SECRET"), "{diff:?}");
            assert!(
                !diff
                    .old_text
                    .clone()
                    .unwrap_or_default()
                    .contains("TOP-SECRET")
            );
        }
        assert_eq!(shown[0].new_text, "x\nnew\nz\n");
    }
}
