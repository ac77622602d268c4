//! `$name` in a message mentions a skill: its `SKILL.md` is attached to the message, so
//! the model follows it without having to decide to read it first. A project skill's
//! file is opened beneath the project, like every file claw-tui reads for itself
//! ([`super::files`]).

use super::files::{ProjectFiles, text_of};
use super::skills::{Skill, SkillCatalog};
use crate::tools::fs::own::OwnFileError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most bytes of one skill file attached.
const MAX_ATTACHED_BYTES: u64 = 64 * 1024;

/// The skills `text` mentions as `$name` (a `$` at the start or after a character that
/// is not part of a name), each once, in order of first mention; names that are not
/// skills (`$HOME`, `$1`) are left alone.
pub fn mentioned<'a>(text: &str, catalog: &'a SkillCatalog) -> Vec<&'a Skill> {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    let mut found: Vec<&Skill> = Vec::new();
    let mut previous: Option<char> = None;
    for (at, c) in text.char_indices() {
        if c == '$' && !previous.is_some_and(is_name_char) {
            let rest = &text[at + 1..];
            let end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
            // A sentence may end right after the name: `use $review.`
            let name = rest[..end].trim_end_matches('.');
            if let Some(skill) = catalog.get(name)
                && !found.iter().any(|s| s.name == skill.name)
            {
                found.push(skill);
            }
        }
        previous = Some(c);
    }
    found
}

/// A mentioned skill's file cannot be attached; the message is not sent without it.
#[derive(Clone, Debug, thiserror::Error)]
pub enum SkillAttachError {
    /// The file cannot be read (gone, unreadable, a symlink leading out of the
    /// project, not a regular file).
    #[error("cannot attach skill {name}: {source}")]
    Read {
        /// The skill.
        name: String,
        /// Its `SKILL.md`.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: Arc<OwnFileError>,
    },
    /// The file is larger than a mention attaches.
    #[error(
        "cannot attach skill {name}: {} is {size} bytes, more than the {limit} a mention \
         attaches; ask for it to be read instead",
        .path.display()
    )]
    TooLarge {
        /// The skill.
        name: String,
        /// Its `SKILL.md`.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The most a mention attaches.
        limit: u64,
    },
}

/// `text` with each skill it mentions attached after it: the skill's name, path and
/// its `SKILL.md` (a project's read beneath `workspace` or its git root). An unreadable
/// or oversized skill file is an error naming it, so the message is not sent without
/// what the user asked for.
pub fn attach_skills(
    workspace: &Path,
    text: &str,
    skills: &[(String, std::path::PathBuf)],
) -> Result<String, SkillAttachError> {
    let files = ProjectFiles::open(workspace);
    let mut out = text.to_owned();
    for (name, path) in skills {
        let body = read_skill(&files, name, path)?;
        out.push_str(&format!(
            "\n\n<skill name=\"{name}\" path=\"{}\">\n{}\n</skill>",
            path.display(),
            body.trim_end()
        ));
    }
    Ok(out)
}

fn read_skill(files: &ProjectFiles, name: &str, path: &Path) -> Result<String, SkillAttachError> {
    let read = |e| SkillAttachError::Read {
        name: name.to_owned(),
        path: path.to_path_buf(),
        source: Arc::new(e),
    };
    let capped = files
        .read(path, MAX_ATTACHED_BYTES + 1)
        .map_err(read)?
        .ok_or_else(|| {
            read(OwnFileError::Io {
                path: path.to_path_buf(),
                source: std::io::ErrorKind::NotFound.into(),
            })
        })?;
    if capped.size > MAX_ATTACHED_BYTES {
        return Err(SkillAttachError::TooLarge {
            name: name.to_owned(),
            path: path.to_path_buf(),
            size: capped.size,
            limit: MAX_ATTACHED_BYTES,
        });
    }
    Ok(text_of(capped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_file_too_big_or_gone_is_named_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("SKILL.md");
        std::fs::write(&path, "x".repeat(70 * 1024)).unwrap();
        let skills = [("deploy".to_owned(), path.clone())];
        let error = attach_skills(&root, "use $deploy", &skills).unwrap_err();
        assert!(
            matches!(
                error,
                SkillAttachError::TooLarge {
                    size: 71680,
                    limit: 65536,
                    ..
                }
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "cannot attach skill deploy: {} is 71680 bytes, more than the 65536 a mention \
                 attaches; ask for it to be read instead",
                path.display()
            )
        );
        std::fs::remove_file(&path).unwrap();
        let error = attach_skills(&root, "use $deploy", &skills).unwrap_err();
        assert!(matches!(error, SkillAttachError::Read { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot attach skill deploy: {}: ", path.display())),
            "{error}"
        );
        assert!(std::error::Error::source(&error).is_some());
    }
}
