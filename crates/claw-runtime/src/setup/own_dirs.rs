//! claw-tui's own directories as the runtime set-up sees them: which they are, and making
//! the missing ones that a workspace holds, before any command runs.

use crate::config::Settings;
use std::path::{Path, PathBuf};

/// The config directory (holds the global AGENTS.md and skills).
pub fn config_dir(settings: &Settings) -> PathBuf {
    settings
        .config_path
        .parent()
        .map_or_else(|| settings.workspace.clone(), PathBuf::from)
}

/// claw-tui's own directories: where its configuration (with the user's commands and
/// skills), sessions, trust answers and logs live. A workspace may contain them (`$HOME`),
/// and what is written there runs or is obeyed outside the sandbox.
pub(super) fn own_dirs(settings: &Settings) -> Vec<PathBuf> {
    let config = settings
        .config_path
        .parent()
        .map_or_else(|| settings.config_path.clone(), Path::to_path_buf);
    vec![
        config,
        settings.config_path.clone(),
        settings.data_dir.clone(),
        settings.state_dir.clone(),
    ]
}

/// Makes those of claw-tui's own directories that the workspace holds and that do not
/// exist yet, so that commands find them held read-only rather than free to create
/// (a command that made `.config/claw-tui/config.toml` would configure the next start).
pub(super) fn make_own_dirs(settings: &Settings, dirs: &[PathBuf]) {
    use std::os::unix::fs::DirBuilderExt;
    for dir in dirs.iter().filter(|d| d.starts_with(&settings.workspace)) {
        let is_file = *dir == settings.config_path;
        if is_file || dir.symlink_metadata().is_ok() {
            continue;
        }
        if let Err(e) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
        {
            tracing::warn!("cannot make {}: {e}", dir.display());
        }
    }
}
