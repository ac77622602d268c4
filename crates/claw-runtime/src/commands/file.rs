//! One command file read: its front matter (what claw-tui honours and what it says it
//! does not), its description and its body.

use super::CustomCommand;
use crate::runtime::context::files::{ProjectFiles, text_of};
use crate::tools::fs::own::OwnFileError;
use serde::Deserialize;
use std::path::Path;

/// The largest command file read, in bytes; a larger one is skipped with a warning.
const MAX_COMMAND_BYTES: u64 = 256 * 1024;

#[derive(Debug, Default, Deserialize)]
struct CommandFront {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<Hint>,
    /// Claude Code's tool allow-list for the command: not honoured, said.
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<serde_yaml_ng::Value>,
    /// Claude Code's model for the command: not honoured, said.
    model: Option<serde_yaml_ng::Value>,
}

/// `argument-hint` as written: `"[file] [focus]"`, or `[path]`, which YAML reads as a
/// list (Claude Code's own examples write it so).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Hint {
    Text(String),
    List(Vec<serde_yaml_ng::Value>),
}

impl Hint {
    fn text(self) -> String {
        match self {
            Self::Text(text) => text,
            Self::List(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|item| match item {
                        serde_yaml_ng::Value::String(s) => s.clone(),
                        other => serde_yaml_ng::to_string(other)
                            .map(|s| s.trim().to_owned())
                            .unwrap_or_default(),
                    })
                    .collect();
                format!("[{}]", items.join(", "))
            }
        }
    }
}

/// Why a command file is skipped (the warning names the file first).
#[derive(Debug, thiserror::Error)]
pub(super) enum CommandFileError {
    /// The file cannot be read, or cannot be used (a symlink leading out of the
    /// project, not a regular file).
    #[error("{0}")]
    Read(#[source] OwnFileError),
    /// The file went away while the commands were read.
    #[error("it is gone")]
    Gone,
    /// The file is larger than a command may be.
    #[error("{size} bytes is more than a command file may have ({MAX_COMMAND_BYTES})")]
    TooLarge {
        /// Its size.
        size: u64,
    },
    /// Its front matter is not valid YAML.
    #[error(transparent)]
    FrontMatter(#[from] crate::front_matter::FrontMatterError),
}

/// The command in `path`, and what is said about it (the parts not honoured).
pub(super) fn read_command(
    files: &ProjectFiles,
    path: &Path,
    name: &str,
    source: &str,
) -> Result<(CustomCommand, Vec<String>), CommandFileError> {
    let capped = files
        .read(path, MAX_COMMAND_BYTES + 1)
        .map_err(CommandFileError::Read)?
        .ok_or(CommandFileError::Gone)?;
    if capped.size > MAX_COMMAND_BYTES {
        return Err(CommandFileError::TooLarge { size: capped.size });
    }
    let text = text_of(capped);
    let (front, body) = crate::front_matter::parse::<CommandFront>(&text);
    let front = front?;
    let mut notes = Vec::new();
    if front.allowed_tools.is_some() {
        notes.push(
            "allowed-tools is not supported: /NAME runs with the session's tools and approvals"
                .replace("NAME", name),
        );
    }
    if front.model.is_some() {
        notes.push(format!(
            "model is not supported: /{name} runs on the session's model"
        ));
    }
    let (body, shell_lines) = shell_lines_as_requests(body.trim());
    if shell_lines > 0 {
        notes.push(format!(
            "its {shell_lines} !`command` line(s) are not run before the prompt is sent; \
             the agent is asked to run them (through exec's sandbox and approval)"
        ));
    }
    let nonblank = |v: Option<String>| v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let description = nonblank(front.description)
        .or_else(|| {
            body.lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let command = CustomCommand {
        name: name.to_owned(),
        description: crate::text::one_line(&description, 120),
        argument_hint: nonblank(front.argument_hint.map(Hint::text)),
        body,
        path: path.to_path_buf(),
        source: source.to_owned(),
    };
    Ok((command, notes))
}

/// The body with each Claude Code context line (`` !`git status` ``, run by Claude Code
/// before the prompt is sent) turned into a request that the agent run the command,
/// and how many there were. claw-tui runs nothing a file asks for on its own: the
/// agent's exec call goes through the sandbox and the approval policy.
fn shell_lines_as_requests(body: &str) -> (String, usize) {
    let mut count = 0;
    let mut out = String::with_capacity(body.len());
    for line in body.split_inclusive('\n') {
        let (text, end) = line
            .strip_suffix('\n')
            .map_or((line, ""), |text| (text, "\n"));
        let mut rewritten = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("!`") {
            let after = &rest[at + 2..];
            let Some(close) = after.find('`') else {
                break;
            };
            rewritten.push_str(&rest[..at]);
            rewritten.push_str(&format!("(run `{}` to get this context)", &after[..close]));
            count += 1;
            rest = &after[close + 1..];
        }
        rewritten.push_str(rest);
        out.push_str(&rewritten);
        out.push_str(end);
    }
    (out, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (CustomCommand, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("c.md"), text).unwrap();
        read_command(&ProjectFiles::open(&root), &root.join("c.md"), "c", "test").unwrap()
    }

    /// The front matter of Claude Code's documented example command.
    #[test]
    fn claude_codes_own_example_reads_with_what_is_not_honoured_said() {
        let (command, notes) = read(
            "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)\n\
             argument-hint: [message]\ndescription: Create a git commit\nmodel: claude-3-5-haiku-20241022\n---\n\n\
             ## Context\n\n- Current git status: !`git status`\n- Current branch: !`git branch --show-current`\n\n\
             ## Your task\n\nCreate a git commit with message: $ARGUMENTS\n",
        );
        assert_eq!(command.argument_hint.as_deref(), Some("[message]"));
        assert_eq!(command.description, "Create a git commit");
        assert!(
            command
                .body
                .contains("- Current git status: (run `git status` to get this context)"),
            "{}",
            command.body
        );
        assert!(!command.body.contains("!`"), "{}", command.body);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].starts_with("allowed-tools is not supported"),
            "{notes:?}"
        );
        assert!(notes[1].starts_with("model is not supported"), "{notes:?}");
        assert!(notes[2].contains("2 !`command` line(s)"), "{notes:?}");
    }

    #[test]
    fn a_description_from_a_heading_loses_its_hashes_and_hints_read_both_ways() {
        let (command, notes) = read("# Review the change\n\nLook at $1.");
        assert_eq!(command.description, "Review the change");
        assert!(notes.is_empty());
        let (command, _) = read("---\nargument-hint: \"[file] [focus]\"\n---\nbody");
        assert_eq!(command.argument_hint.as_deref(), Some("[file] [focus]"));
        let (command, _) = read("---\nargument-hint: [pr, priority]\n---\nbody");
        assert_eq!(command.argument_hint.as_deref(), Some("[pr, priority]"));
        // A lone `!` or an unclosed backtick stays as written.
        let (command, _) = read("Say hi! and `quote` and !`unclosed");
        assert_eq!(command.body, "Say hi! and `quote` and !`unclosed");
    }

    #[test]
    fn a_command_file_too_large_or_with_bad_front_matter_is_skipped_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let files = ProjectFiles::open(&root);
        let big = root.join("big.md");
        std::fs::write(&big, "x".repeat(300 * 1024)).unwrap();
        let error = read_command(&files, &big, "big", "test").unwrap_err();
        assert!(
            matches!(error, CommandFileError::TooLarge { size: 307200 }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "307200 bytes is more than a command file may have (262144)"
        );
        let bad = root.join("bad.md");
        std::fs::write(&bad, "---\ndescription: [unclosed\n---\nbody").unwrap();
        let error = read_command(&files, &bad, "bad", "test").unwrap_err();
        assert!(
            matches!(error, CommandFileError::FrontMatter(_)),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("front matter is not valid YAML: "),
            "{error}"
        );
        let error = read_command(&files, &root.join("gone.md"), "gone", "test").unwrap_err();
        assert!(matches!(error, CommandFileError::Gone), "{error:?}");
        // A symlink leading out of the project is not read.
        std::fs::create_dir(root.join("ws")).unwrap();
        std::os::unix::fs::symlink(&big, root.join("ws/out.md")).unwrap();
        let files = ProjectFiles::open(&root.join("ws"));
        let error = read_command(&files, &root.join("ws/out.md"), "out", "test").unwrap_err();
        assert!(
            matches!(error, CommandFileError::Read(OwnFileError::Outside { .. })),
            "{error:?}"
        );
    }
}
