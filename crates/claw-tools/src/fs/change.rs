//! The structured diff of one file change, as `write_file` and `edit_file` put it in
//! their result details (`details.change`) and `/diff` shows it: hunks with old and new
//! line numbers, and the added and removed counts.

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};
use std::time::Duration;

/// Lines of context around each change.
pub const CONTEXT_LINES: usize = 3;
/// Beyond this size (either side) no hunks are computed: counting the lines of a huge
/// file is cheap, diffing it is not.
pub const MAX_DIFF_BYTES: usize = 2 * 1024 * 1024;
/// The diff gives up refining after this long and reports a coarser (still correct) one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// What happened to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It did not exist before: every line is added.
    Created,
    /// Part of it changed.
    Edited,
    /// It was replaced as a whole (`write_file` over an existing file).
    Overwritten,
    /// It is gone: every line is removed.
    Deleted,
}

/// Whether a diff line is kept, added or removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Unchanged context.
    Context,
    /// Only in the new content.
    Added,
    /// Only in the old content.
    Removed,
}

/// One line of a hunk, with its 1-based numbers on each side it is on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    /// Kept, added or removed.
    pub kind: LineKind,
    /// Its number in the old content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<usize>,
    /// Its number in the new content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<usize>,
    /// The text, without its line ending.
    pub text: String,
}

/// A run of changed lines with their context.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    /// First old line (1-based; 0 when the old side is empty).
    pub old_start: usize,
    /// Old lines covered.
    pub old_count: usize,
    /// First new line (1-based; 0 when the new side is empty).
    pub new_start: usize,
    /// New lines covered.
    pub new_count: usize,
    /// The lines, in order.
    pub lines: Vec<DiffLine>,
}

/// The change of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The path as the call named it.
    pub path: String,
    /// What happened.
    pub kind: ChangeKind,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The hunks (empty when `omitted` says why).
    #[serde(default)]
    pub hunks: Vec<Hunk>,
    /// Why there are no hunks: the content is binary or too large to diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<String>,
}

impl FileChange {
    /// The change from `before` to `after` (`None`: the file is absent on that side).
    /// `overwrite` marks a whole-file replacement of an existing file.
    pub fn between(
        path: &str,
        before: Option<&[u8]>,
        after: Option<&[u8]>,
        overwrite: bool,
    ) -> Self {
        let kind = match (before, after) {
            (None, _) => ChangeKind::Created,
            (Some(_), None) => ChangeKind::Deleted,
            (Some(_), Some(_)) if overwrite => ChangeKind::Overwritten,
            (Some(_), Some(_)) => ChangeKind::Edited,
        };
        let mut change = FileChange {
            path: path.to_owned(),
            kind,
            added: 0,
            removed: 0,
            hunks: Vec::new(),
            omitted: None,
        };
        let (old, new) = match (text_of(before), text_of(after)) {
            (Ok(old), Ok(new)) => (old, new),
            (Err(why), _) | (_, Err(why)) => {
                change.omitted = Some(why.to_owned());
                return change;
            }
        };
        if old.len() > MAX_DIFF_BYTES || new.len() > MAX_DIFF_BYTES {
            change.removed = old.lines().count();
            change.added = new.lines().count();
            // Without a diff, the counts are the two sides' line counts.
            change.omitted = Some("too large to show".into());
            return change;
        }
        let diff = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old.as_str(), new.as_str());
        for group in diff.grouped_ops(CONTEXT_LINES) {
            let mut lines = Vec::new();
            for op in &group {
                for c in diff.iter_changes(op) {
                    let kind = match c.tag() {
                        ChangeTag::Equal => LineKind::Context,
                        ChangeTag::Insert => {
                            change.added += 1;
                            LineKind::Added
                        }
                        ChangeTag::Delete => {
                            change.removed += 1;
                            LineKind::Removed
                        }
                    };
                    lines.push(DiffLine {
                        kind,
                        old: c.old_index().map(|i| i + 1),
                        new: c.new_index().map(|i| i + 1),
                        text: c.value().trim_end_matches(['\n', '\r']).to_owned(),
                    });
                }
            }
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let start = |range: &std::ops::Range<usize>| {
                if range.is_empty() {
                    range.start
                } else {
                    range.start + 1
                }
            };
            change.hunks.push(Hunk {
                old_start: start(&old_range),
                old_count: old_range.len(),
                new_start: start(&new_range),
                new_count: new_range.len(),
                lines,
            });
        }
        change
    }

    /// A change of `kind` whose lines are not shown, for the reason `why`.
    pub fn omitted(path: &str, kind: ChangeKind, why: &str) -> Self {
        FileChange {
            path: path.to_owned(),
            kind,
            added: 0,
            removed: 0,
            hunks: Vec::new(),
            omitted: Some(why.to_owned()),
        }
    }

    /// The change as a JSON value (for result details).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The change a tool result's details carry (`details.change`), if any.
    pub fn from_details(details: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(details.get("change")?.clone()).ok()
    }
}

/// The text of one side (absent: empty), with CRLF shown as LF; binary content is not
/// text.
fn text_of(bytes: Option<&[u8]>) -> Result<String, &'static str> {
    let Some(bytes) = bytes else {
        return Ok(String::new());
    };
    if bytes.contains(&0) {
        return Err("binary content");
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.replace("\r\n", "\n")),
        Err(_) => Err("not UTF-8 text"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_has_numbered_hunks_and_counts() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n";
        let change = FileChange::between(
            "x.txt",
            Some(before.as_bytes()),
            Some(after.as_bytes()),
            false,
        );
        assert_eq!(change.kind, ChangeKind::Edited);
        assert_eq!((change.added, change.removed), (2, 1));
        assert_eq!(change.hunks.len(), 1, "{change:#?}");
        let hunk = &change.hunks[0];
        assert_eq!((hunk.old_start, hunk.old_count), (2, 9));
        assert_eq!((hunk.new_start, hunk.new_count), (2, 10));
        let removed = hunk
            .lines
            .iter()
            .find(|l| l.kind == LineKind::Removed)
            .unwrap();
        assert_eq!(
            (removed.old, removed.new, removed.text.as_str()),
            (Some(5), None, "e")
        );
        let added: Vec<_> = hunk
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Added)
            .collect();
        assert_eq!((added[0].new, added[1].new), (Some(5), Some(11)));
    }

    #[test]
    fn a_new_file_is_all_added_and_binary_has_no_hunks() {
        let change = FileChange::between("n.rs", None, Some(b"fn main() {}\n// end\n"), false);
        assert_eq!(
            (change.kind, change.added, change.removed),
            (ChangeKind::Created, 2, 0)
        );
        assert_eq!(change.hunks[0].old_start, 0);
        assert_eq!(change.hunks[0].new_start, 1);
        let binary = FileChange::between("b", Some(b"\0\x01"), Some(b"x"), true);
        assert_eq!(binary.omitted.as_deref(), Some("binary content"));
        assert!(binary.hunks.is_empty());
        let gone = FileChange::between("g", Some(b"one\ntwo\n"), None, false);
        assert_eq!(
            (gone.kind, gone.added, gone.removed),
            (ChangeKind::Deleted, 0, 2)
        );
    }
}
