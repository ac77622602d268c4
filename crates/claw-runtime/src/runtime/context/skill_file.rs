//! Whether a `SKILL.md` can be read as a skill at all: its bytes are text, and a front
//! matter it opens is closed within what is read of it. One that cannot is a broken
//! skill: named with its file and line, and never offered to the model (its name and
//! description would be made up from the wrong lines, or from replaced bytes).

use std::path::{Path, PathBuf};

/// A skill directory whose `SKILL.md` cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenSkill {
    /// Its directory's name (the name it would have had without a front matter).
    pub name: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// The line (from 1) where the trouble is.
    pub line: usize,
    /// What is wrong, in a few words.
    pub reason: String,
}

impl BrokenSkill {
    /// One line for the start-up warnings and `/skills`.
    pub fn describe(&self) -> String {
        format!(
            "skill {} is broken and not offered to the model: {} line {}: {}",
            self.name,
            self.path.display(),
            self.line,
            self.reason
        )
    }
}

/// Checks the first bytes of a `SKILL.md` (`read` of them, from a file of `size`
/// bytes): its text, or where and why it cannot be used as a skill.
pub(super) fn skill_text(bytes: Vec<u8>, size: u64) -> Result<String, (usize, String)> {
    let read = bytes.len();
    let capped = u64::try_from(read).unwrap_or(u64::MAX) < size;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let utf8 = e.utf8_error();
            let valid = utf8.valid_up_to();
            // A character cut by the read's cap is the cap's doing, not the file's.
            if utf8.error_len().is_some() || !capped {
                return Err((
                    line_at(e.as_bytes(), valid),
                    format!(
                        "it is not valid UTF-8 text (byte {} of the file)",
                        valid + 1
                    ),
                ));
            }
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    };
    if crate::front_matter::unclosed(&text) {
        let reason = if capped {
            let read = if read.is_multiple_of(1024) {
                format!("{} KiB", read / 1024)
            } else {
                format!("{read} bytes")
            };
            format!(
                "its front matter (opened on line 1) is not closed by a `---` line within \
                 the first {read} read of it; a skill's front matter must end before that"
            )
        } else {
            "its front matter (opened on line 1) is never closed by a `---` line".to_owned()
        };
        return Err((1, reason));
    }
    Ok(text)
}

/// The line (from 1) that byte `at` of `bytes` is on.
fn line_at(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The broken skill of directory `name`, whose `SKILL.md` is `path`.
pub(super) fn broken(name: &str, path: &Path, (line, reason): (usize, String)) -> BrokenSkill {
    BrokenSkill {
        name: name.to_owned(),
        path: path.to_path_buf(),
        line,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8], size: usize) -> Result<String, (usize, String)> {
        skill_text(bytes.to_vec(), size as u64)
    }

    #[test]
    fn text_and_closed_front_matter_pass() {
        let file = b"---\nname: a\n---\nbody\n";
        assert_eq!(
            check(file, file.len()).unwrap(),
            "---\nname: a\n---\nbody\n"
        );
        assert_eq!(check(b"no front matter", 15).unwrap(), "no front matter");
    }

    #[test]
    fn an_invalid_byte_is_placed_on_its_line() {
        let file = b"---\nname: a\n---\nline four \xff here\n";
        let (line, reason) = check(file, file.len()).unwrap_err();
        assert_eq!(line, 4);
        assert!(reason.contains("not valid UTF-8"), "{reason}");
        assert!(reason.contains("byte 27"), "{reason}");
    }

    #[test]
    fn a_character_cut_by_the_cap_is_no_fault() {
        let file = "---\nname: a\n---\né".as_bytes();
        let cut = &file[..file.len() - 1];
        assert_eq!(check(cut, file.len()).unwrap(), "---\nname: a\n---\n");
        // The same bytes as the whole file: the file ends inside a character.
        assert!(check(cut, cut.len()).is_err());
    }

    #[test]
    fn a_front_matter_never_closed_or_closed_past_the_cap_is_said() {
        let (line, reason) = check(b"---\nname: a\nbody\n", 17).unwrap_err();
        assert_eq!(line, 1);
        assert!(reason.contains("never closed"), "{reason}");
        let (line, reason) = check(b"---\nname: a\nnotes: long\n", 40_000).unwrap_err();
        assert_eq!(line, 1);
        assert!(
            reason.contains("within the first 24 bytes read"),
            "{reason}"
        );
    }
}
