//! A session's name (`/name`): one line of text in a side file beside the session,
//! `<session>.name`, so naming never rewrites the session file and a session written by
//! an older version keeps loading. Listing a workspace's sessions reads it.

use super::file::create_side;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Longest name kept, in characters (a picker row shows much less).
pub const MAX_NAME_CHARS: usize = 80;

/// Where the name of the session at `session` is kept.
pub fn name_path(session: &Path) -> PathBuf {
    session.with_extension("name")
}

/// The name of the session at `session`, if it has one.
pub fn read_name(session: &Path) -> Option<String> {
    let text = std::fs::read_to_string(name_path(session)).ok()?;
    let name = clean(&text);
    (!name.is_empty()).then_some(name)
}

/// Names the session at `session` (an empty name removes it); returns the name kept.
pub fn write_name(session: &Path, name: &str) -> std::io::Result<String> {
    let name = clean(name);
    let path = name_path(session);
    if name.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(name),
        };
    }
    let mut file = create_side(&path)?;
    file.write_all(name.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    Ok(name)
}

/// One line, control characters out, at most [`MAX_NAME_CHARS`].
fn clean(text: &str) -> String {
    let one_line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect();
    one_line.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_kept_beside_the_session_as_one_clean_line() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("20260101T000000Z_abc.jsonl");
        assert_eq!(read_name(&session), None);
        let kept = write_name(&session, "  parser\n rewrite\u{7}  ").unwrap();
        assert_eq!(kept, "parser rewrite");
        assert_eq!(read_name(&session).as_deref(), Some("parser rewrite"));
        let long = "x".repeat(200);
        assert_eq!(write_name(&session, &long).unwrap().len(), MAX_NAME_CHARS);
        assert_eq!(write_name(&session, " ").unwrap(), "");
        assert_eq!(read_name(&session), None);
        use std::os::unix::fs::PermissionsExt;
        write_name(&session, "private").unwrap();
        let mode = std::fs::metadata(name_path(&session))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
