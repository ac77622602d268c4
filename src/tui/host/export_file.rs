//! `/export`: the client's session written as one HTML file in the workspace, through
//! a handle held on it (no symlink followed: a link the model planted under the file's
//! name is refused, never written through), private to the user (0600).

use crate::export::{HtmlOptions, to_html};
use crate::session::{SessionError, find_session, load, read_subagent_calls};
use crate::tools::fs::own::{OwnFileError, OwnTree};
use std::path::{Path, PathBuf};

/// What `/export` wrote.
#[derive(Debug)]
pub struct Exported {
    /// The HTML file.
    pub path: PathBuf,
    /// What could not be read into it (damaged lines of the subagents' calls).
    pub warnings: Vec<String>,
}

/// Why `/export` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// `--no-session`: nothing was saved.
    #[error("sessions are off (--no-session): there is nothing saved to export")]
    SessionsOff,
    /// The session cannot be found or read.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The HTML file cannot be written (or something other than a file of that name is
    /// in its place, such as a symlink).
    #[error("{source}; nothing was written. Remove or rename it and export again")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why writing failed.
        #[source]
        source: OwnFileError,
    },
}

/// Writes session `id` of `workspace` as `claw-tui-session-ID.html` in the workspace
/// (a regular file of that name is replaced; anything else there is refused), 0600, and
/// returns its path. What was saved of the session is exported: every finished message.
pub fn export_html(
    data_dir: &Path,
    workspace: &Path,
    id: Option<String>,
    code_theme: &str,
) -> Result<Exported, ExportError> {
    let id = id.ok_or(ExportError::SessionsOff)?;
    let data = find_session(data_dir, workspace, &id).and_then(|path| load(&path))?;
    let short: String = data.id().chars().take(8).collect();
    let nested = read_subagent_calls(&data.path);
    let html = to_html(
        &data,
        &nested.calls,
        &HtmlOptions {
            code_theme: code_theme.to_owned(),
        },
    );
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let path = root.join(format!("claw-tui-session-{short}.html"));
    OwnTree::open(&root)
        .and_then(|tree| tree.write_private(&path, html.as_bytes()))
        .map_err(|source| ExportError::Write {
            path: path.clone(),
            source,
        })?;
    Ok(Exported {
        path,
        warnings: nested.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_sessions_or_the_session_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let error = export_html(dir.path(), dir.path(), None, "base16-ocean.dark").unwrap_err();
        assert!(matches!(error, ExportError::SessionsOff), "{error:?}");
        assert_eq!(
            error.to_string(),
            "sessions are off (--no-session): there is nothing saved to export"
        );
        let error = export_html(dir.path(), dir.path(), Some("0ddba11".into()), "x").unwrap_err();
        assert!(matches!(error, ExportError::Session(_)), "{error:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
