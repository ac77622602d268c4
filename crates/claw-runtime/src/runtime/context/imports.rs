//! `@path` imports in instructions files, as Claude Code reads them in `CLAUDE.md`:
//! `See @README.md and @docs/style.md` puts those files in the prompt too (each after
//! the file that imports it), relative to the importing file's directory, `@~/…` from
//! the home directory, up to [`MAX_DEPTH`] imports deep and [`MAX_IMPORTED`] files in
//! all. An `@` inside code (a fenced block or a `span`) or inside a word
//! (`user@example.com`) is not an import.
//!
//! The model can write the workspace, so an import in a workspace file is confined to
//! the workspace: `@~/.ssh/id_rsa` or `@../../etc/passwd` in a workspace `CLAUDE.md` is
//! not read, and the user is told, even when the git root above takes in the home
//! directory (a dotfiles repository). A file above the workspace, up to the git root
//! (the user's own tree), imports from that tree; the user's own files outside the
//! project (the config dir's, `~/.claude/CLAUDE.md`) import what they name.

use super::files::{ProjectFiles, text_of};
use std::path::{Component, Path, PathBuf};

/// How many imports deep a chain of files is followed (Claude Code's limit too).
pub(super) const MAX_DEPTH: usize = 5;
/// The most files imported for one prompt.
pub(super) const MAX_IMPORTED: usize = 32;
/// The most bytes of a file read to find its imports.
const SCAN_BYTES: u64 = 256 * 1024;

/// What following the imports found: files in prompt order and what was skipped.
#[derive(Debug, Default)]
pub(super) struct Imports {
    /// Every file read so far (real paths), so none is read twice.
    pub seen: Vec<PathBuf>,
    /// Files for the prompt, in order.
    pub found: Vec<PathBuf>,
    /// Why imports were not read.
    pub skipped: Vec<String>,
    imported: usize,
}

impl Imports {
    /// Adds `path` (a file that exists) and, after it, what it imports, depth first.
    pub(super) fn add(&mut self, files: &ProjectFiles, path: &Path, home: Option<&Path>) {
        self.add_at(files, path, home, 0);
    }

    fn add_at(&mut self, files: &ProjectFiles, path: &Path, home: Option<&Path>, depth: usize) {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if self.seen.contains(&key) {
            return;
        }
        self.seen.push(key);
        self.found.push(path.to_path_buf());
        if depth >= MAX_DEPTH {
            return;
        }
        let Ok(Some(capped)) = files.read(path, SCAN_BYTES) else {
            return;
        };
        let text = text_of(capped);
        let dir = path.parent().unwrap_or(Path::new("/"));
        let confinement = if files.in_workspace(path) {
            Some((
                "the workspace",
                ProjectFiles::in_workspace as fn(&ProjectFiles, &Path) -> bool,
            ))
        } else if files.holds(path) {
            Some((
                "the project",
                ProjectFiles::holds as fn(&ProjectFiles, &Path) -> bool,
            ))
        } else {
            None
        };
        for token in imported(&text) {
            let Some(target) = resolve(&token, dir, home) else {
                continue;
            };
            if let Some((place, inside)) = confinement
                && !inside(files, &target)
            {
                self.skipped.push(format!(
                    "{} imports @{token}, which is outside {place}: not read (a file the \
                     model can write may import only files beside it)",
                    path.display()
                ));
                continue;
            }
            match files.read(&target, 0) {
                Ok(Some(_)) => {}
                // `@alice` in prose names no file: only a path-like one is worth a word.
                Ok(None) if !token.contains(['/', '.']) => continue,
                Ok(None) => {
                    self.skipped.push(format!(
                        "{} imports @{token}, which does not exist",
                        path.display()
                    ));
                    continue;
                }
                Err(e) => {
                    self.skipped
                        .push(format!("{} imports @{token}: {e}", path.display()));
                    continue;
                }
            }
            if self.imported >= MAX_IMPORTED {
                self.skipped.push(format!(
                    "{} imports @{token}: not read, {MAX_IMPORTED} imported files are the most \
                     one prompt takes",
                    path.display()
                ));
                continue;
            }
            self.imported += 1;
            self.add_at(files, &target, home, depth + 1);
        }
    }
}

/// The `@path` tokens of `text`, in order, outside fenced code and code spans.
fn imported(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_span = false;
        let mut previous = ' ';
        for (at, c) in line.char_indices() {
            if c == '`' {
                in_span = !in_span;
            } else if c == '@' && !in_span && previous.is_whitespace() {
                let rest = &line[at + 1..];
                let end = rest
                    .find(|c: char| c.is_whitespace() || matches!(c, '`' | ')' | ']' | '"' | '\''))
                    .unwrap_or(rest.len());
                // A sentence may end right after the path: `see @README.md.`
                let token = rest[..end].trim_end_matches([',', ';', ':', '.']);
                if !token.is_empty() {
                    tokens.push(token.to_owned());
                }
            }
            previous = c;
        }
    }
    tokens
}

/// Where `@token` in a file in `dir` points, with `.` and `..` worked out (so the
/// confinement check sees the real place); `None` for `~/…` without a home.
fn resolve(token: &str, dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let joined = match token.strip_prefix("~/") {
        Some(rest) => home?.join(rest),
        None => dir.join(token),
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_found_outside_code_and_words() {
        let text = "See @README.md and @docs/style.md.\nMail me@example.com or ask @alice.\n\
                    `@not/this.md` and\n```\n@nor/this.md\n```\n- @~/.claude/mine.md, please\n(@paren.md)";
        assert_eq!(
            imported(text),
            ["README.md", "docs/style.md", "alice", "~/.claude/mine.md"]
        );
    }

    #[test]
    fn paths_are_resolved_without_dot_dot() {
        let dir = Path::new("/ws/sub");
        assert_eq!(
            resolve("../x.md", dir, None),
            Some(PathBuf::from("/ws/x.md"))
        );
        assert_eq!(
            resolve("../../../etc/passwd", dir, None),
            Some(PathBuf::from("/etc/passwd"))
        );
        assert_eq!(
            resolve("~/.ssh/id_rsa", dir, Some(Path::new("/home/u"))),
            Some(PathBuf::from("/home/u/.ssh/id_rsa"))
        );
        assert_eq!(resolve("~/x", dir, None), None);
    }
}
