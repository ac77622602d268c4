//! `$name` in a message mentions a skill: its `SKILL.md` is attached to the message, so
//! the model follows it without having to decide to read it first.

use super::skills::{Skill, SkillCatalog};
use std::path::Path;

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

/// `text` with each skill it mentions attached after it: the skill's name, path and
/// its `SKILL.md`. An unreadable or oversized skill file is an error naming it, so the
/// message is not sent without what the user asked for.
pub fn attach_skills(
    text: &str,
    skills: &[(String, std::path::PathBuf)],
) -> Result<String, String> {
    let mut out = text.to_owned();
    for (name, path) in skills {
        let body = read_skill(path).map_err(|e| format!("cannot attach skill {name}: {e}"))?;
        out.push_str(&format!(
            "\n\n<skill name=\"{name}\" path=\"{}\">\n{}\n</skill>",
            path.display(),
            body.trim_end()
        ));
    }
    Ok(out)
}

fn read_skill(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if size > MAX_ATTACHED_BYTES {
        return Err(format!(
            "{} is {size} bytes, more than the {MAX_ATTACHED_BYTES} a mention attaches; \
             ask for it to be read instead",
            path.display()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}
