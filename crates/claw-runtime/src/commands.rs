//! Custom slash commands: Markdown files in `.claw-tui/commands/` and `.claude/commands/`
//! of the project (from the workspace up to the git root) and in the config dir's
//! `commands/` and `~/.claude/commands/`, each becoming `/NAME` after its file name.
//!
//! A file in a subdirectory is namespaced by it, as Claude Code names them:
//! `frontend/component.md` is `/frontend:component` (three levels deep at most).
//!
//! Optional front matter gives a `description` and an `argument-hint` (a string, or a
//! YAML list as `[path]` reads); the body is the prompt sent, with `$ARGUMENTS` and
//! `$1`…`$9` replaced by what the user typed after the command ([`expand`]). What
//! claw-tui does not do with a command file is said, never dropped in silence:
//! `allowed-tools` and `model` are not honoured (the command runs with the session's
//! tools and model), and a `` !`cmd` `` context line is not run before the prompt is
//! sent: it becomes a request that the agent run it, so it goes through exec's sandbox
//! and approval like any command the agent runs ([`file`]).
//!
//! A project's command files are opened beneath the workspace or its git root
//! (`runtime::context::files`): one that is a symlink leading out, or not a regular
//! file, is skipped with a warning.

mod expand;
mod file;

pub use expand::{expand, split_arguments};

use file::{CommandFileError, read_command};

use crate::runtime::context::files::ProjectFiles;
use crate::runtime::context::project_chain;
use crate::tools::fs::own::OwnFileError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Command directories of a project directory, in the order they are searched.
pub const PROJECT_COMMAND_DIRS: [&str; 2] = [".claw-tui/commands", ".claude/commands"];
/// claw-tui's global command directory, relative to the config dir.
pub const GLOBAL_COMMANDS_DIR: &str = "commands";
/// The global command directory shared with Claude Code, relative to the home directory.
pub const HOME_COMMANDS_DIR: &str = ".claude/commands";
/// How deep subdirectories of a command directory are read (`a/b/c/name.md`).
const MAX_NAMESPACE_DEPTH: usize = 3;

/// A slash command defined by a Markdown file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomCommand {
    /// The name without the slash (`review` for `review.md`, `git:pr` for
    /// `git/pr.md`).
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
        for (path, name) in markdown_files(&files, &dir, &mut set.warnings) {
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
                Ok((command, notes)) => {
                    set.warnings.extend(
                        notes
                            .into_iter()
                            .map(|n| format!("{}: {n}", path.display())),
                    );
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

/// The `*.md` files in `dir` and its subdirectories (up to [`MAX_NAMESPACE_DEPTH`]
/// deep) with their command names, sorted by path; none when `dir` does not exist (a
/// directory that cannot be listed is a warning).
fn markdown_files(
    files: &ProjectFiles,
    dir: &Path,
    warnings: &mut Vec<String>,
) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    walk(files, dir, &[], warnings, &mut found);
    found
}

fn walk(
    files: &ProjectFiles,
    dir: &Path,
    namespace: &[String],
    warnings: &mut Vec<String>,
    found: &mut Vec<(PathBuf, String)>,
) {
    let names = match files.entries(dir) {
        Ok(names) => names.unwrap_or_default(),
        Err(e) => {
            warnings.push(format!("commands are not read: {e}"));
            return;
        }
    };
    for name in names {
        let path = dir.join(&name);
        let name = name.to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".md") {
            let mut full = namespace.to_vec();
            full.push(stem.to_owned());
            found.push((path, full.join(":")));
        } else if !name.starts_with('.') && namespace.len() < MAX_NAMESPACE_DEPTH {
            // A directory is read as a namespace; a file that is not Markdown lists as
            // nothing (`entries` on it is an error, not said: it is not a command).
            if matches!(files.entries(&path), Ok(Some(_))) {
                let mut inner = namespace.to_vec();
                inner.push(name);
                walk(files, &path, &inner, warnings, found);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdirectories_are_namespaces_and_symlinks_out_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let commands = ws.join(".claude/commands");
        std::fs::create_dir_all(commands.join("frontend/forms/deep/deeper")).unwrap();
        std::fs::write(commands.join("review.md"), "Review $1").unwrap();
        std::fs::write(commands.join("frontend/component.md"), "Make a component").unwrap();
        std::fs::write(commands.join("frontend/forms/field.md"), "A field").unwrap();
        std::fs::write(commands.join("frontend/notes.txt"), "not a command").unwrap();
        std::fs::write(commands.join("frontend/forms/deep/deeper/x.md"), "too deep").unwrap();
        let outside = root.join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("stolen.md"), "from outside").unwrap();
        std::os::unix::fs::symlink(&outside, commands.join("linked")).unwrap();
        let config = root.join("config");
        let set = discover_commands(&ws, &config, None, &["help"]);
        let names: Vec<&str> = set.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["frontend:component", "frontend:forms:field", "review"],
            "{:?}",
            set.warnings
        );
        assert!(set.get("frontend:component").is_some());
    }
}
