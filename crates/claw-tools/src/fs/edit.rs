//! `edit_file`: replaces one exact, unique snippet, keeping the file's line endings.

use super::change::FileChange;
use super::{
    Buffers, Kept, MAX_KEPT_BYTES, NOT_UNDOABLE, Observer, Prior, before_change, io_failure,
    located_then, read_regular, replace_file,
};
use crate::Workspace;
use crate::args;
use crate::workspace::{Access, Located};
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use similar::TextDiff;
use std::io;
use std::sync::Arc;
use std::sync::LazyLock;
use tokio_util::sync::CancellationToken;

/// Most diff lines shown to the model; `details` always has the whole diff.
const MAX_DIFF_LINES: usize = 80;
const BOM: &str = "\u{feff}";

/// Edits files inside the workspace by exact replacement.
pub struct EditFileTool {
    workspace: Arc<Workspace>,
    observer: Observer,
    buffers: Buffers,
}

impl EditFileTool {
    /// The tool over `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self {
            workspace,
            observer: None,
            buffers: None,
        }
    }

    /// The same tool, telling `observer` about each change it makes.
    pub fn observed(mut self, observer: Observer) -> Self {
        self.observer = observer;
        self
    }

    /// The same tool, editing the text an editor's `buffers` (when given) hold instead
    /// of the disk's.
    pub fn with_buffers(mut self, buffers: Buffers) -> Self {
        self.buffers = buffers;
        self
    }
}

/// The arguments of `edit_file`.
#[derive(Deserialize, JsonSchema)]
pub struct EditFileArgs {
    /// File to edit
    path: String,
    /// Exact text to find (must occur once)
    old_text: String,
    /// Text to put in its place
    new_text: String,
}

#[async_trait]
impl TypedTool for EditFileTool {
    type Args = EditFileArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "edit_file",
                "Edit file",
                "Replace exact text in a file. old_text must match the file exactly (including \
         whitespace and indentation) and occur exactly once; include enough surrounding \
         lines to make it unique. Line endings are kept as the file has them. Returns a \
         diff of the change.",
                args::schema::<EditFileArgs>(),
            )
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: EditFileArgs,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let EditFileArgs {
            path: shown,
            old_text,
            new_text,
        } = args;
        // Not cancellable once started: reading, replacing and one atomic write are quick.
        let target = shown.clone();
        let observer = self.observer.clone();
        let buffers = self.buffers.clone();
        located_then(&self.workspace, &target, Access::Write, move |located| {
            edit(&located, &shown, &old_text, &new_text, &observer, &buffers)
        })
        .await
    }
}

fn edit(
    located: &Located,
    shown: &str,
    old_text: &str,
    new_text: &str,
    observer: &Observer,
    buffers: &Buffers,
) -> ToolResult {
    // The editor only while nothing the model started can swap a link in meanwhile.
    let editor = super::buffers::editor_now(buffers, located);
    let buffers = editor.as_ref().map(super::buffers::Editor::buffers);
    let old_lf = old_text.replace("\r\n", "\n");
    let new_lf = new_text.replace("\r\n", "\n");
    if old_lf.is_empty() {
        return ToolResult::error(
            "Error: old_text is empty. Give the exact text to replace; to write a whole file, \
             use write_file.",
        );
    }
    if old_lf == new_lf {
        return ToolResult::error(format!(
            "Error: old_text and new_text are the same, so nothing would change in {shown}."
        ));
    }
    let Some((parent, name)) = located.parent_and_name() else {
        return not_a_file(shown);
    };
    // The file is read and replaced in the one directory held open here.
    let dir = match located.dir().open_dir(parent) {
        Ok(dir) => dir,
        Err(e) => return read_failure(shown, located, &e),
    };
    if let Err(refused) = located.check_held(&dir, name) {
        return ToolResult::error(refused.to_string());
    }
    let (bytes, mode) = match read_regular(&dir, name) {
        Ok(Some((Kept::Bytes(bytes), mode))) => (bytes, mode),
        Ok(Some((Kept::TooLarge(size), _))) => {
            return ToolResult::error(format!(
                "Error: {shown} is {}; edit_file edits files up to {}. Use exec (e.g. sed) \
                 for a file this large.",
                claw_text::byte_size(size),
                claw_text::byte_size(MAX_KEPT_BYTES)
            ));
        }
        Ok(None) => return not_a_file(shown),
        Err(e) => return read_failure(shown, located, &e),
    };
    // A regular file of the workspace: its text as the editor has it, if one is in use.
    let bytes = match buffers {
        Some(buffers) => match buffers.read(located.path()) {
            Ok(text) => text.into_bytes(),
            Err(e) => return read_failure(shown, located, &e),
        },
        None => bytes,
    };
    let Ok(original) = String::from_utf8(bytes.clone()) else {
        return ToolResult::error(format!(
            "Error: {shown} is not UTF-8 text; edit_file only edits text files."
        ));
    };
    let (bom, body) = match original.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", original.as_str()),
    };
    let eol = line_ending(body);

    // The model writes LF; match in the file's own line endings. A file with mixed
    // endings may hold the snippet with LF, so that form is tried too.
    let mut forms = vec![(old_lf.replace('\n', eol), new_lf.replace('\n', eol))];
    if eol != "\n" {
        forms.push((old_lf.clone(), new_lf.clone()));
    }
    let found = forms
        .iter()
        .map(|(old, new)| (old, new, count_overlapping(body, old)))
        .find(|(_, _, n)| *n > 0);
    let (old, new) = match found {
        None => {
            return ToolResult::error(format!("Error: old_text not found in {shown}"));
        }
        Some((_, _, n)) if n > 1 => {
            return ToolResult::error(format!(
                "Warning: old_text found {n} times in {shown}. Please provide a more unique \
                 text snippet. No changes made."
            ));
        }
        Some((old, new, _)) => (old, new),
    };

    let mut updated = body.replacen(old.as_str(), new, 1);
    restore_final_newline(body, &mut updated, eol);
    let written = format!("{bom}{updated}");
    // Before the file changes: a change that cannot be undone is said, or not made.
    let note = match before_change(observer, located, shown, Prior::Content(&bytes), "edited") {
        Ok(note) => note,
        Err(refused) => return refused,
    };
    let saved = match buffers {
        Some(buffers) => buffers.write(located.path(), &written),
        None => replace_file(&dir, name, written.as_bytes(), Some(mode)),
    };
    if let Err(e) = saved {
        return ToolResult::error(io_failure("write", shown, located, &e));
    }
    if let Some(observer) = observer {
        observer.after_change(located.path(), written.as_bytes());
    }

    let before = body.replace("\r\n", "\n");
    let after = updated.replace("\r\n", "\n");
    let diff = TextDiff::from_lines(&before, &after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    let first_changed_line = before
        .lines()
        .zip(after.lines())
        .take_while(|(a, b)| a == b)
        .count()
        + 1;
    let lead = note.as_ref().map(|n| format!("{n}\n")).unwrap_or_default();
    let mut details = json!({
        "path": located.path().to_string_lossy(),
        "diff": diff,
        "first_changed_line": first_changed_line,
        "change": FileChange::between(shown, Some(&bytes), Some(written.as_bytes()), false).to_value(),
    });
    if let Some(note) = note {
        details[NOT_UNDOABLE] = json!(note);
    }
    ToolResult::text(format!(
        "{lead}Edited {shown}: replaced 1 occurrence.\n\n{}",
        short_diff(&diff)
    ))
    .with_details(details)
}

fn not_a_file(shown: &str) -> ToolResult {
    ToolResult::error(format!(
        "Error: {shown} is not a regular file; edit_file only edits files."
    ))
}

fn read_failure(shown: &str, located: &Located, e: &io::Error) -> ToolResult {
    if e.kind() == io::ErrorKind::NotFound {
        return ToolResult::error(format!(
            "Error: File not found: {shown}. Check the path, or use write_file to create it."
        ));
    }
    ToolResult::error(io_failure("read", shown, located, e))
}

/// The file's dominant line ending.
fn line_ending(text: &str) -> &'static str {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf { "\r\n" } else { "\n" }
}

/// How many times `needle` occurs, overlaps included: `aa` in `aaa` is ambiguous.
fn count_overlapping(haystack: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut start = 0;
    while let Some(pos) = haystack[start..].find(needle) {
        count += 1;
        let at = start + pos;
        start = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

/// Gives `updated` the final newline `original` had, or did not have: an edit at the
/// end of the file must not add or drop it by accident.
fn restore_final_newline(original: &str, updated: &mut String, eol: &str) {
    let had = original.ends_with('\n');
    let has = updated.ends_with('\n');
    if had && !has && !updated.is_empty() {
        updated.push_str(eol);
    } else if !had && has {
        let cut = if updated.ends_with("\r\n") { 2 } else { 1 };
        updated.truncate(updated.len() - cut);
    }
}

/// The diff, cut to a length worth showing a model.
fn short_diff(diff: &str) -> String {
    let total = diff.lines().count();
    if total <= MAX_DIFF_LINES {
        return diff.trim_end().to_owned();
    }
    let head: Vec<&str> = diff.lines().take(MAX_DIFF_LINES).collect();
    format!(
        "{}\n... ({} more diff lines not shown)",
        head.join("\n"),
        total - MAX_DIFF_LINES
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_matches_count() {
        assert_eq!(count_overlapping("aaa", "aa"), 2);
        assert_eq!(count_overlapping("abcabc", "abc"), 2);
        assert_eq!(count_overlapping("\u{e9}\u{e9}", "\u{e9}"), 2);
        assert_eq!(count_overlapping("abc", "x"), 0);
    }

    #[test]
    fn dominant_line_ending_wins() {
        assert_eq!(line_ending("a\r\nb\r\nc\n"), "\r\n");
        assert_eq!(line_ending("a\nb\r\nc\n"), "\n");
        assert_eq!(line_ending("no newline"), "\n");
    }

    #[test]
    fn final_newline_state_is_kept() {
        let mut s = "a\r\nb".to_owned();
        restore_final_newline("a\r\nx\r\n", &mut s, "\r\n");
        assert_eq!(s, "a\r\nb\r\n");
        let mut s = "a\nb\n".to_owned();
        restore_final_newline("a\nx", &mut s, "\n");
        assert_eq!(s, "a\nb");
    }
}
