//! A hook runs the workspace files it names exactly as they were checked: the bytes
//! the trust hashed are written to a directory of claw-tui's own, and the command is
//! changed to name those copies.
//!
//! Why copies, and not the files: the check and the moment the hook's program opens a
//! file again are apart, and in between the file could change (a write through a name
//! the read-only bind does not cover, a process that held it open from before) or its
//! directory be swapped for another. A copy made from the hashed bytes, in a directory
//! no command may write (Landlock grants commands the workspace and their own temp dir
//! only), cannot. What changes for the hook: `$0` (and `__file__`) is the copy, so a
//! script that finds its neighbours by its own path finds them next to the copy, not in
//! the workspace; those neighbours were never pinned either.

use crate::tools::exec::replace_words;
use crate::trust::{option_value, word_path};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The copies of one hook run; removed when dropped.
pub(crate) struct Copies {
    /// Each checked file (as the trust names it) and its copy.
    made: Vec<(PathBuf, PathBuf)>,
    _dir: Option<tempfile::TempDir>,
}

impl Copies {
    /// Writes `checked` (path, the bytes found trusted) into a new private directory
    /// under `under` (claw-tui's data dir, which commands may not write even where
    /// `[exec] writable_paths` opens the temp dir to them), else the temp dir.
    pub fn make(checked: Vec<(PathBuf, Vec<u8>)>, under: Option<&Path>) -> std::io::Result<Self> {
        if checked.is_empty() {
            return Ok(Self {
                made: Vec::new(),
                _dir: None,
            });
        }
        let mut builder = tempfile::Builder::new();
        builder
            .prefix("claw-tui-hook-")
            .permissions(std::fs::Permissions::from_mode(0o700));
        let dir = match under {
            Some(under) => {
                let runs = under.join("hook-runs");
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&runs)?;
                builder.tempdir_in(runs)?
            }
            None => builder.tempdir()?,
        };
        let mut made = Vec::new();
        for (n, (path, bytes)) in checked.into_iter().enumerate() {
            let name = path.file_name().unwrap_or_else(|| "file".as_ref());
            let sub = dir.path().join(n.to_string());
            std::fs::create_dir(&sub)?;
            let copy = sub.join(name);
            // Executable as the original was; never writable.
            let mode = std::fs::metadata(&path).map_or(0o400, |m| m.permissions().mode()) & 0o555;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&copy)?;
            file.write_all(&bytes)?;
            file.set_permissions(std::fs::Permissions::from_mode(mode | 0o400))?;
            made.push((path, copy));
        }
        Ok(Self {
            made,
            _dir: Some(dir),
        })
    }

    /// `command` (run in `cwd`) with every word that names a checked file naming its copy
    /// instead (an `--option=FILE` word too); `Err` with the words that name one where
    /// no word can be replaced (a here-document, backticks with escapes).
    pub fn rewrite(&self, command: &str, cwd: &Path) -> Result<String, Vec<String>> {
        if self.made.is_empty() {
            return Ok(command.to_owned());
        }
        let copy_of = |word: &str| {
            let path = word_path(word, cwd)?;
            self.made
                .iter()
                .find(|(checked, _)| *checked == path)
                .map(|(_, copy)| copy.display().to_string())
        };
        // An `--option=FILE` word is read as the option first: `..` in its value would
        // otherwise climb out of the option's name.
        let (rewritten, stuck) = replace_words(command, |word| {
            option_value(word)
                .and_then(|(option, value)| copy_of(value).map(|copy| format!("{option}{copy}")))
                .or_else(|| copy_of(word))
        });
        if stuck.is_empty() {
            Ok(rewritten)
        } else {
            Err(stuck)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_names_the_copies_of_the_checked_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir(ws.join("scripts")).unwrap();
        let script = ws.join("scripts/check.sh");
        std::fs::write(&script, "echo now\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let copies =
            Copies::make(vec![(script.clone(), b"echo checked\n".to_vec())], None).unwrap();
        let copy = copies.made[0].1.clone();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "echo checked\n");
        assert_eq!(
            std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777,
            0o555
        );
        let quoted = format!("'{}'", copy.display());
        assert_eq!(
            copies.rewrite("sh scripts/check.sh x && ./scripts/check.sh", &ws),
            Ok(format!("sh {quoted} x && {quoted}"))
        );
        assert_eq!(
            copies.rewrite("run --hook=scripts/../scripts/check.sh", &ws),
            Ok(format!("run '--hook={}'", copy.display()))
        );
        assert_eq!(
            copies.rewrite("sh <<EOF\nsh scripts/check.sh\nEOF", &ws),
            Err(vec!["scripts/check.sh".to_owned()])
        );
        let parent = copy.parent().unwrap().parent().unwrap().to_path_buf();
        drop(copies);
        assert!(!parent.exists(), "the copies are removed");
    }
}
