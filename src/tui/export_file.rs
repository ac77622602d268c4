//! `/export`: the client's session written as one HTML file in the workspace.

use crate::export::{HtmlOptions, to_html};
use crate::session::{find_session, load, read_subagent_calls};
use std::path::{Path, PathBuf};

/// Writes session `id` of `workspace` as `claw-tui-session-ID.html` in the workspace
/// (a file of that name is replaced) and returns its path. What was saved of the
/// session is exported: every finished message.
pub fn export_html(
    data_dir: &Path,
    workspace: &Path,
    id: Option<String>,
    code_theme: &str,
) -> Result<PathBuf, String> {
    let id = id.ok_or("sessions are off (--no-session): there is nothing saved to export")?;
    let data = find_session(data_dir, workspace, &id)
        .and_then(|path| load(&path))
        .map_err(|e| e.to_string())?;
    let short: String = data.id().chars().take(8).collect();
    let html = to_html(
        &data,
        &read_subagent_calls(&data.path),
        &HtmlOptions {
            code_theme: code_theme.to_owned(),
        },
    );
    let path = workspace.join(format!("claw-tui-session-{short}.html"));
    std::fs::write(&path, html).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
