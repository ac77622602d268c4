//! The tree walk behind `list_dir`: directory by directory through held-open handles,
//! so a directory swapped for a symlink meanwhile is never followed, with `.ignore`,
//! `.gitignore` and `.git/info/exclude` rules applied the way the `ignore` crate's
//! walker (ripgrep's) applies them, their files read through the same handles.

use cap_std::fs::{Dir, FileType, OpenOptions, OpenOptionsExt};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use nix::fcntl::OFlag;
use std::ffi::OsString;
use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The ignore rules one directory sets.
struct Rules {
    /// `.ignore`: wins over git's own files.
    ignore: Gitignore,
    /// `.gitignore`.
    gitignore: Gitignore,
    /// `.git/info/exclude`, in a repository's top directory.
    exclude: Gitignore,
    /// Whether this directory is a repository's top: git's rules above it do not count.
    has_git: bool,
}

impl Rules {
    /// The rules in `dir`, whose absolute path is `path`; a rule file that cannot be read
    /// (or that is a symlink leading out of `dir`) counts as absent.
    fn load(dir: &Dir, path: &Path) -> Self {
        let has_git = dir.symlink_metadata(".git").is_ok();
        let exclude = if dir.is_dir(".git") {
            matcher(dir, path, ".git/info/exclude")
        } else {
            Gitignore::empty()
        };
        Self {
            ignore: matcher(dir, path, ".ignore"),
            gitignore: matcher(dir, path, ".gitignore"),
            exclude,
            has_git,
        }
    }
}

/// The most of a rule file read: more is no list of patterns anyone wrote.
const MAX_RULES_BYTES: u64 = 1024 * 1024;

/// The patterns of the rule file `name` in `dir`, matching below `path`. Only a regular
/// file is read (opened without blocking: a FIFO there cannot hang the walk), and only
/// its first [`MAX_RULES_BYTES`] (a link to `/dev/zero` or a huge file cannot exhaust
/// memory).
fn matcher(dir: &Dir, path: &Path, name: &str) -> Gitignore {
    use std::io::Read;
    let Ok(file) = super::open_nonblocking(dir, Path::new(name)) else {
        return Gitignore::empty();
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Gitignore::empty();
    }
    let mut bytes = Vec::new();
    if file.take(MAX_RULES_BYTES).read_to_end(&mut bytes).is_err() {
        return Gitignore::empty();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut builder = GitignoreBuilder::new(path);
    for line in text.trim_start_matches('\u{feff}').lines() {
        // A broken line is skipped, as git does; the rest of the file still counts.
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The ignore rules of a directory and its ancestors, nearest last.
#[derive(Clone, Default)]
pub(super) struct RuleStack(Vec<Arc<Rules>>);

impl RuleStack {
    /// These rules plus those of `dir` (at absolute `path`), nearest.
    pub(super) fn with(&self, dir: &Dir, path: &Path) -> Self {
        let mut stack = self.0.clone();
        stack.push(Arc::new(Rules::load(dir, path)));
        Self(stack)
    }

    /// Whether the entry at absolute `path` is ignored: the nearest `.ignore` rule that
    /// matches decides, else the nearest `.gitignore` one up to the repository's top,
    /// else its `.git/info/exclude`; a `!` rule re-includes.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let (mut by_ignore, mut by_git, mut by_exclude) = (Match::None, Match::None, Match::None);
        let mut saw_git = false;
        for rules in self.0.iter().rev() {
            if by_ignore.is_none() {
                by_ignore = rules.ignore.matched(path, is_dir).map(|_| ());
            }
            if !saw_git {
                if by_git.is_none() {
                    by_git = rules.gitignore.matched(path, is_dir).map(|_| ());
                }
                if by_exclude.is_none() {
                    by_exclude = rules.exclude.matched(path, is_dir).map(|_| ());
                }
            }
            saw_git |= rules.has_git;
        }
        by_ignore.or(by_git).or(by_exclude).is_ignore()
    }
}

/// One entry the walk found.
pub(super) struct Found<'a> {
    /// The directory holding it, held open.
    pub dir: &'a Dir,
    /// Its name in `dir`.
    pub name: &'a OsString,
    /// Its path relative to the listed directory.
    pub rel: &'a Path,
    /// Its own type: a symlink is a symlink here.
    pub file_type: FileType,
}

/// Why a walk stopped early.
pub(super) enum Stop {
    /// The caller had enough.
    Done,
    /// The call was aborted.
    Cancelled,
}

/// How a walk goes.
pub(super) struct Walk<'a> {
    /// Levels to descend (1: the listed directory's own entries).
    pub max_depth: usize,
    /// Apply the ignore rules and skip `.git`.
    pub filtered: bool,
    /// Skip entries whose names start with a dot (and what they hold).
    pub skip_hidden: bool,
    /// Checked between entries.
    pub cancel: &'a tokio_util::sync::CancellationToken,
    /// Directories and entries that could not be read, as `path: reason`.
    pub unreadable: Vec<String>,
}

impl Walk<'_> {
    /// Visits the entries under `dir` (at absolute `path`, with the rules of its
    /// ancestors in `rules`) in order: siblings by name, each directory followed by what
    /// it holds.
    pub(super) fn run(
        &mut self,
        dir: &Dir,
        path: &Path,
        rules: &RuleStack,
        visit: &mut dyn FnMut(&Found<'_>) -> ControlFlow<Stop>,
    ) -> ControlFlow<Stop> {
        let rules = if self.filtered {
            rules.with(dir, path)
        } else {
            RuleStack::default()
        };
        self.level(dir, path, Path::new(""), 1, &rules, visit)
    }

    fn level(
        &mut self,
        dir: &Dir,
        path: &Path,
        rel: &Path,
        depth: usize,
        rules: &RuleStack,
        visit: &mut dyn FnMut(&Found<'_>) -> ControlFlow<Stop>,
    ) -> ControlFlow<Stop> {
        let entries = match sorted_entries(dir) {
            Ok(entries) => entries,
            Err(e) => {
                self.unreadable.push(format!("{}: {e}", shown(rel)));
                return ControlFlow::Continue(());
            }
        };
        for (name, file_type) in entries {
            if self.cancel.is_cancelled() {
                return ControlFlow::Break(Stop::Cancelled);
            }
            let file_type = match file_type {
                Ok(t) => t,
                Err(e) => {
                    self.unreadable
                        .push(format!("{}: {e}", shown(&rel.join(&name))));
                    continue;
                }
            };
            let entry_rel = rel.join(&name);
            let entry_path = path.join(&name);
            if self.filtered && (name == ".git" || rules.ignored(&entry_path, file_type.is_dir())) {
                continue;
            }
            if self.skip_hidden && name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            visit(&Found {
                dir,
                name: &name,
                rel: &entry_rel,
                file_type,
            })?;
            if !file_type.is_dir() || depth >= self.max_depth {
                continue;
            }
            match open_subdir(dir, &name) {
                Ok(sub) => {
                    let sub_rules = if self.filtered {
                        rules.with(&sub, &entry_path)
                    } else {
                        RuleStack::default()
                    };
                    self.level(&sub, &entry_path, &entry_rel, depth + 1, &sub_rules, visit)?;
                }
                Err(e) => self.unreadable.push(format!("{}: {e}", shown(&entry_rel))),
            }
        }
        ControlFlow::Continue(())
    }
}

/// The entries of `dir` with their own types, sorted by name.
fn sorted_entries(dir: &Dir) -> io::Result<Vec<(OsString, io::Result<FileType>)>> {
    let mut entries = Vec::new();
    for entry in dir.entries()? {
        let entry = entry?;
        entries.push((entry.file_name(), entry.file_type()));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// Opens the subdirectory `name` of `dir`, refusing a symlink put in its place since it
/// was listed.
fn open_subdir(dir: &Dir, name: &OsString) -> io::Result<Dir> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW).bits());
    Ok(Dir::from_std_file(
        dir.open_with(name, &options)?.into_std(),
    ))
}

fn shown(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        rel.display().to_string()
    }
}

/// The ignore rules of the directories from the top of `tree` (at absolute `top`) down
/// to, not including, `rel`: a deep listing of a subdirectory still honours the
/// workspace's `.gitignore`.
pub(super) fn inherited_rules(tree: &Dir, top: &Path, rel: &Path) -> RuleStack {
    let mut stack = RuleStack::default();
    let mut ancestor = PathBuf::new();
    for component in rel.components() {
        let dir = if ancestor.as_os_str().is_empty() {
            tree.try_clone()
        } else {
            tree.open_dir(&ancestor)
        };
        if let Ok(dir) = dir {
            stack = stack.with(&dir, &top.join(&ancestor));
        }
        ancestor.push(component);
    }
    stack
}
