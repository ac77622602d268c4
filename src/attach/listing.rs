//! The live sessions of this user: each socket in the socket directory is asked for its
//! `hello`; a socket nobody answers on is a dead server's and is removed.

use super::hub::{ClientInfo, SessionInfo};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::UnixStream;

/// How long a server has to say `hello` before it is left out of the list.
const HELLO_WAIT: Duration = Duration::from_secs(2);

/// A live session, as its server introduced itself.
#[derive(Clone, Debug, Deserialize)]
pub struct LiveSession {
    /// Which session, where and who serves it.
    pub session: SessionInfo,
    /// Its first prompt, on one line.
    pub first_prompt: Option<String>,
    /// `idle`, `working` or `waiting`.
    pub state: String,
    /// Who is attached.
    pub clients: Vec<ClientInfo>,
    /// The socket it was found on.
    #[serde(skip)]
    pub socket: PathBuf,
}

/// Every live session with a socket in `dir`, by id.
pub async fn live_sessions(dir: &Path) -> Vec<LiveSession> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "sock") {
            continue;
        }
        match hello(&path).await {
            Ok(Some(live)) => found.push(live),
            Ok(None) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                // Nobody listens: its server died without removing it.
                let _ = std::fs::remove_file(&path);
            }
            Err(e) => tracing::warn!("attach: {}: {e}", path.display()),
        }
    }
    found.sort_by(|a, b| a.session.id.cmp(&b.session.id));
    found
}

/// The session on `socket`, from its `hello` line; `None` if it said something else.
pub async fn hello(socket: &Path) -> std::io::Result<Option<LiveSession>> {
    let stream = UnixStream::connect(socket).await?;
    let mut lines = BufReader::new(stream).lines();
    let line = match tokio::time::timeout(HELLO_WAIT, lines.next_line()).await {
        Ok(line) => line?,
        Err(_) => return Ok(None),
    };
    let live = line.and_then(|l| serde_json::from_str::<LiveSession>(&l).ok());
    Ok(live.map(|mut live| {
        live.socket = socket.to_owned();
        live
    }))
}

/// The one live session whose id starts with `prefix`; an error that lists the
/// candidates when there are none or several.
pub fn pick<'a>(sessions: &'a [LiveSession], prefix: &str) -> Result<&'a LiveSession, String> {
    let matching: Vec<&LiveSession> = sessions
        .iter()
        .filter(|s| s.session.id.starts_with(prefix))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "no live session has an id starting with \"{prefix}\" ({} live; `claw-tui attach` \
             lists them)",
            sessions.len()
        )),
        several => Err(format!(
            "\"{prefix}\" matches {} live sessions ({}); give more of the id",
            several.len(),
            several
                .iter()
                .map(|s| s.session.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
