//! Choosing the session a process writes: new, resumed (`-c`, `--session`), forked, or none.

use super::SessionError;
use super::file::{create_dir, in_use, sessions_dir};
use super::list::{find_session, latest_session};
use super::load::{SessionData, load};
use super::writer::SessionWriter;
use crate::config::Settings;

/// The session a process runs in.
pub struct OpenedSession {
    /// Appends to the file.
    pub writer: SessionWriter,
    /// What was resumed (history, queues), if anything.
    pub resumed: Option<SessionData>,
    /// Things to tell the user (torn line skipped, nothing to continue...).
    pub notes: Vec<String>,
}

/// Which session a process asks for: a front-end fills it from its own arguments
/// (`--no-session`, `--session`, `--continue`, `--fork`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionChoice {
    /// Write no session file.
    pub no_session: bool,
    /// Resume this session: an id, an id prefix or a file path.
    pub session: Option<String>,
    /// Resume the workspace's most recent session.
    pub continue_session: bool,
    /// When the resumed session is open elsewhere, continue in a new copy of it.
    pub fork: bool,
}

/// Opens the session `choice` asks for; `None` when it asks for none.
pub fn open_session(
    choice: &SessionChoice,
    settings: &Settings,
) -> Result<Option<OpenedSession>, SessionError> {
    if choice.no_session {
        return Ok(None);
    }
    let (data_dir, workspace) = (&settings.data_dir, &settings.workspace);
    // Private, including what an older version left open to others.
    create_dir(data_dir, &sessions_dir(data_dir, workspace))?;
    let (provider, model) = (&settings.provider.name, &settings.provider.model);
    let mut notes = Vec::new();
    let target = if let Some(key) = &choice.session {
        Some(find_session(data_dir, workspace, key)?)
    } else if choice.continue_session {
        let latest = latest_session(data_dir, workspace);
        match &latest {
            None => notes.push("no earlier session in this workspace; starting a new one".into()),
            Some(latest) => {
                // One another process is writing is simply new, not lost.
                for empty in latest.passed_over.iter().filter(|p| !in_use(p)) {
                    notes.push(format!(
                        "the more recent session file {} holds no message (claw-tui may have \
                         stopped right after creating it, or could not save it); continuing the \
                         latest session that has messages",
                        empty.display()
                    ));
                }
            }
        }
        latest.map(|l| l.path)
    } else {
        None
    };
    let Some(path) = target else {
        let writer = SessionWriter::create(data_dir, workspace, provider, model)?;
        return Ok(Some(OpenedSession {
            writer,
            resumed: None,
            notes,
        }));
    };
    let (writer, data) = match SessionWriter::resume_file(&path) {
        Ok(pair) => pair,
        Err(SessionError::Locked { .. }) if choice.fork => {
            let data = load(&path)?;
            let writer = SessionWriter::fork(&data, data_dir, workspace, provider, model)?;
            notes.push(format!(
                "session {} is open elsewhere; continuing in a new session {} with a copy of its history",
                data.id(),
                writer.id()
            ));
            (writer, data)
        }
        Err(e) => return Err(e),
    };
    notes.splice(0..0, data.warnings.iter().cloned());
    Ok(Some(OpenedSession {
        writer,
        resumed: Some(data),
        notes,
    }))
}
