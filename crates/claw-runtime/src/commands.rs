//! Custom slash commands: Markdown files in `.claw-tui/commands/` and `.claude/commands/`
//! of the project (from the workspace up to the git root) and in the config dir's
//! `commands/` and `~/.claude/commands/`, each becoming `/NAME` after its file name.
//!
//! Optional front matter gives a `description` and an `argument-hint`; the body is the
//! prompt sent, with `$ARGUMENTS` and `$1`…`$9` replaced by what the user typed after the
//! command ([`expand`]).
//!
//! A project's command files are opened beneath the workspace or its git root
//! (`runtime::context::files`): one that is a symlink leading out, or not a regular
//! file, is skipped with a warning.

mod expand;

pub use expand::{expand, split_arguments};

use crate::runtime::context::files::{ProjectFiles, text_of};
use crate::runtime::context::project_chain;
use crate::tools::fs::own::OwnFileError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Command directories of a project directory, in the order they are searched.
pub const PROJECT_COMMAND_DIRS: [&str; 2] = [".claw-tui/commands", ".claude/commands"];
/// claw-tui's global command directory, relative to the config dir.
pub const GLOBAL_COMMANDS_DIR: &str = "commands";
/// The global command directory shared with Claude Code, relative to the home directory.
pub const HOME_COMMANDS_DIR: &str = ".claude/commands";
/// The largest command file read, in bytes; a larger one is skipped with a warning.
const MAX_COMMAND_BYTES: u64 = 256 * 1024;

/// A slash command defined by a Markdown file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomCommand {
    /// The name without the slash (`review` for `review.md`).
    pub name: String,
    /// The front matter's `description`, else the body's first line.
    pub description: String,
    /// The front matter's `argument-hint` (`[file] [focus]`), if any.
    pub argument_hint: Option<String>,
    /// The prompt template (the file without its front matter).
    pub body: String,
    /// The file.
    pub path: PathBuf,
    /// Where it was found, as the user would write it (`.claude/commands`,
    /// `~/.claude/commands`, ...).
    pub source: String,
}

impl CustomCommand {
    /// The prompt for `arguments` (what followed the command).
    pub fn prompt(&self, arguments: &str) -> String {
        expand(&self.body, arguments)
    }
}

/// The custom commands that apply, by name, and what was skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandSet {
    /// Each name once (the nearest file), sorted by name.
    pub commands: Vec<CustomCommand>,
    /// Files not used, and why (a built-in of that name, unreadable, bad front matter).
    pub warnings: Vec<String>,
}

impl CommandSet {
    /// The command `/name` (given without the slash).
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|c| c.name == name)
    }
}

#[derive(Debug, Default, Deserialize)]
struct CommandFront {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<String>,
}

/// The command directories, nearest first: `.claw-tui/commands` then
/// `.claude/commands` of each directory from the workspace up to the git root, then the
/// config dir's `commands/` and `~/.claude/commands/`.
pub fn command_dirs(
    workspace: &Path,
    config_dir: &Path,
    home: Option<&Path>,
) -> Vec<(PathBuf, String)> {
    let mut dirs: Vec<(PathBuf, String)> = project_chain(workspace)
        .iter()
        .rev()
        .flat_map(|dir| {
            PROJECT_COMMAND_DIRS
                .iter()
                .map(move |rel| (dir.join(rel), (*rel).to_owned()))
        })
        .collect();
    dirs.push((
        config_dir.join(GLOBAL_COMMANDS_DIR),
        format!("{}/{GLOBAL_COMMANDS_DIR}", config_dir.display()),
    ));
    if let Some(home) = home {
        dirs.push((
            home.join(HOME_COMMANDS_DIR),
            format!("~/{HOME_COMMANDS_DIR}"),
        ));
    }
    dirs
}

/// The custom commands for `workspace`; a file named like one of `builtin` (names
/// without the slash) is not used, and said once in the warnings.
pub fn discover_commands(
    workspace: &Path,
    config_dir: &Path,
    home: Option<&Path>,
    builtin: &[&str],
) -> CommandSet {
    let files = ProjectFiles::open(workspace);
    let mut set = CommandSet::default();
    let mut by_name: BTreeMap<String, CustomCommand> = BTreeMap::new();
    let mut shadowed_builtins = Vec::new();
    for (dir, source) in command_dirs(workspace, config_dir, home) {
        for path in markdown_files(&files, &dir, &mut set.warnings) {
            let Some(name) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            if builtin.contains(&name.as_str()) {
                if !shadowed_builtins.contains(&name) {
                    set.warnings.push(format!(
                        "/{name} is a built-in command; {} is not used",
                        path.display()
                    ));
                    shadowed_builtins.push(name);
                }
                continue;
            }
            if by_name.contains_key(&name) {
                continue;
            }
            match read_command(&files, &path, &name, &source) {
                Ok(command) => {
                    by_name.insert(name, command);
                }
                // A directory named like a command file is not one.
                Err(CommandFileError::Read(OwnFileError::NotRegular {
                    what: "a directory",
                    ..
                })) => {}
                Err(why) => set.warnings.push(format!("{}: {why}", path.display())),
            }
        }
    }
    set.commands = by_name.into_values().collect();
    set
}

/// The `*.md` names directly in `dir`, sorted; none when it does not exist (a directory
/// that cannot be listed is a warning).
fn markdown_files(files: &ProjectFiles, dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    match files.entries(dir) {
        Ok(names) => names
            .unwrap_or_default()
            .into_iter()
            .map(|name| dir.join(name))
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect(),
        Err(e) => {
            warnings.push(format!("commands are not read: {e}"));
            Vec::new()
        }
    }
}

/// Why a command file is skipped (the warning names the file first).
#[derive(Debug, thiserror::Error)]
enum CommandFileError {
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

fn read_command(
    files: &ProjectFiles,
    path: &Path,
    name: &str,
    source: &str,
) -> Result<CustomCommand, CommandFileError> {
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
    let nonblank = |v: Option<String>| v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let body = body.trim().to_owned();
    let description = nonblank(front.description)
        .or_else(|| {
            body.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_default();
    Ok(CustomCommand {
        name: name.to_owned(),
        description: crate::text::one_line(&description, 120),
        argument_hint: nonblank(front.argument_hint),
        body,
        path: path.to_path_buf(),
        source: source.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
