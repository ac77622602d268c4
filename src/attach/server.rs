//! The listening socket of a served session: bound in the private socket directory,
//! made 0600, each connection's peer checked before anything is read from it or
//! written to it. The socket file goes when the server does.

use super::hub::Hub;
use super::peer;
use super::socket_dir::{SocketDirError, socket_path};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::net::UnixListener;
use tokio::task::JoinHandle;

/// How many clients may be connected at once; more are turned away (a runaway script
/// would otherwise spend the process's file descriptors).
pub const MAX_CONNECTIONS: usize = 64;

/// Why a session cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The socket directory or path is unusable.
    #[error(transparent)]
    Dir(#[from] SocketDirError),
    /// A live process serves this session already.
    #[error("session {id} is served already (socket {})", path.display())]
    Taken {
        /// The session.
        id: String,
        /// Its socket.
        path: PathBuf,
    },
    /// Binding or securing the socket failed.
    #[error("cannot listen on {}: {source}", path.display())]
    Bind {
        /// The socket.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// A session being served; dropping it stops listening and removes the socket.
pub struct AttachServer {
    path: PathBuf,
    accept: JoinHandle<()>,
}

impl AttachServer {
    /// Listens for `hub`'s session in `dir` (see [`super::socket_dir::socket_dir`]).
    pub async fn start(
        dir: &Path,
        hub: Arc<Hub>,
        max_line_bytes: usize,
    ) -> Result<Self, ServeError> {
        let path = socket_path(dir, &hub.session().id)?;
        let bind = |source| ServeError::Bind {
            path: path.clone(),
            source,
        };
        if path.exists() {
            // A live server answers; a dead one's socket only refuses: then it is stale.
            if tokio::net::UnixStream::connect(&path).await.is_ok() {
                return Err(ServeError::Taken {
                    id: hub.session().id,
                    path,
                });
            }
            std::fs::remove_file(&path).map_err(bind)?;
        }
        let listener = UnixListener::bind(&path).map_err(bind)?;
        // The directory (0700) already keeps others out while this narrows the mode.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(bind)?;
        let accept = tokio::spawn(accept_loop(listener, hub, max_line_bytes));
        Ok(Self { path, accept })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for AttachServer {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

async fn accept_loop(listener: UnixListener, hub: Arc<Hub>, max_line_bytes: usize) {
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, say: wait a moment rather than spin.
                tracing::warn!("attach: cannot accept a connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let peer = match peer::check(&stream) {
            Ok(peer) => peer,
            Err(refusal) => {
                tracing::warn!("attach: {refusal}");
                eprintln!("claw-tui: attach: {refusal}");
                continue;
            }
        };
        if open.load(std::sync::atomic::Ordering::SeqCst) >= MAX_CONNECTIONS {
            tracing::warn!("attach: refused a connection: {MAX_CONNECTIONS} are open already");
            continue;
        }
        open.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (hub, open) = (hub.clone(), open.clone());
        tokio::spawn(async move {
            super::conn::serve(hub, stream, peer, max_line_bytes).await;
            open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
}
