//! The check every connection passes before it is read: the process on the other end
//! runs as this user (`SO_PEERCRED`, which the kernel fills in; the peer cannot forge
//! it). Anyone else is refused and logged.

use tokio::net::UnixStream;

/// Who is on the other end of an accepted connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Its user id.
    pub uid: u32,
    /// Its process id, when the kernel knows it.
    pub pid: Option<i32>,
}

/// The peer of `stream` if it is this process's user; otherwise why it is refused.
pub fn check(stream: &UnixStream) -> Result<Peer, String> {
    let cred = stream
        .peer_cred()
        .map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
    let peer = Peer {
        uid: cred.uid(),
        pid: cred.pid(),
    };
    let me = super::socket_dir::euid();
    if peer.uid != me {
        let pid = peer.pid.map_or_else(|| "?".to_owned(), |p| p.to_string());
        return Err(format!(
            "refused a connection from user {} (pid {pid}): only user {me} may attach",
            peer.uid
        ));
    }
    Ok(peer)
}
