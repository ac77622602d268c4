//! One connection to a served session: `hello` first; commands answered one by one;
//! after `attach`, the snapshot and then every line in the common order. A client that
//! falls too far behind is told (`resync`) and given a fresh snapshot; one that stops
//! reading for longer than [`WRITE_STALL`] is dropped, so it never holds up the agent
//! or anyone else.

use super::hub::{ClientInfo, Hub};
use super::peer::Peer;
use super::pump::Line;
use crate::headless::rpc::failure;
use crate::headless::{Input, LineReader};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::net::UnixStream;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// How long a write to a client may take before the client is dropped.
pub const WRITE_STALL: Duration = Duration::from_secs(30);

/// Why the connection ended early.
enum Ended {
    /// The client hung up, detached, or could not be written to.
    Gone,
}

/// Serves one accepted connection until it ends.
pub async fn serve(hub: Arc<Hub>, stream: UnixStream, peer: Peer, max_line_bytes: usize) {
    let (read, write) = stream.into_split();
    let mut conn = Conn {
        hub: hub.clone(),
        out: BufWriter::with_capacity(1 << 16, write),
        peer,
        client: None,
        lines: None,
    };
    if conn.write(&hub.hello()).await.is_err() {
        return;
    }
    let mut reader = LineReader::new(read, max_line_bytes);
    let _ = conn.run(&mut reader).await;
    if let Some(client) = conn.client.take() {
        hub.detach(client.id);
    }
}

struct Conn<W> {
    hub: Arc<Hub>,
    out: BufWriter<W>,
    peer: Peer,
    /// Set once the client attached.
    client: Option<ClientInfo>,
    lines: Option<broadcast::Receiver<Line>>,
}

impl<W: AsyncWrite + Unpin> Conn<W> {
    async fn run<R: tokio::io::AsyncRead + Unpin>(
        &mut self,
        reader: &mut LineReader<R>,
    ) -> Result<(), Ended> {
        loop {
            tokio::select! {
                input = reader.next() => match input {
                    Ok(Input::Line(line)) if line.trim().is_empty() => {}
                    Ok(Input::Line(line)) => self.line(&line).await?,
                    Ok(Input::Bad(why)) => self.write(&failure(None, why)).await?,
                    Ok(Input::End) | Err(_) => return Err(Ended::Gone),
                },
                line = next_line(&mut self.lines) => match line {
                    Ok(line) => self.forward(&line).await?,
                    Err(RecvError::Lagged(skipped)) => self.resync(skipped).await?,
                    Err(RecvError::Closed) => return Err(Ended::Gone),
                },
            }
        }
    }

    /// One command line: the connection's own (`attach`, `detach`, `get_clients`), or
    /// the session's.
    async fn line(&mut self, line: &str) -> Result<(), Ended> {
        let command = serde_json::from_str::<Value>(line).ok();
        let name = command
            .as_ref()
            .and_then(|c| c.get("type"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match name.as_deref() {
            Some("attach") => self.attach(command.as_ref()).await,
            Some("detach") => {
                self.write(&json!({"type": "response", "command": "detach", "ok": true}))
                    .await?;
                Err(Ended::Gone)
            }
            Some("get_clients") => {
                let clients = self.hub.clients();
                self.write(&json!({
                    "type": "response", "command": "get_clients", "ok": true,
                    "clients": clients,
                    "you": self.client.as_ref().map(|c| c.id),
                }))
                .await
            }
            _ => {
                let response = self.hub.command(self.client.as_ref(), line).await;
                self.write(&response).await
            }
        }
    }

    /// `attach`: registers the client, then the snapshot; the live lines follow.
    async fn attach(&mut self, command: Option<&Value>) -> Result<(), Ended> {
        if self.client.is_some() {
            let refused = failure(Some("attach"), "this connection is attached already".into());
            return self.write(&refused).await;
        }
        let name = command
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str)
            .map(|n| crate::text::one_line(n, 60));
        let client = self.hub.attach("socket", self.peer.pid, name);
        let response = json!({
            "type": "response", "command": "attach", "ok": true, "client": client,
        });
        self.client = Some(client);
        self.write(&response).await?;
        self.join().await
    }

    /// Takes a place in the common order and writes the state it follows.
    async fn join(&mut self) -> Result<(), Ended> {
        let Some(joined) = self.hub.join().await else {
            return Err(Ended::Gone);
        };
        let snapshot = self.hub.snapshot(&joined);
        self.lines = Some(joined.lines);
        self.write(&snapshot).await
    }

    /// Fell behind by `skipped` lines: told, then a fresh snapshot.
    async fn resync(&mut self, skipped: u64) -> Result<(), Ended> {
        tracing::info!("attach: a client fell {skipped} lines behind; resynchronised");
        self.write(&json!({
            "type": "resync",
            "skipped": skipped,
            "reason": format!(
                "this client fell {skipped} lines behind; a new snapshot follows"
            ),
        }))
        .await?;
        self.join().await
    }

    /// A live line; flushed when no other line is ready, so a burst goes out in few
    /// writes.
    async fn forward(&mut self, line: &str) -> Result<(), Ended> {
        self.put(line.as_bytes()).await?;
        // The serving client switched sessions: the new one's snapshot follows.
        if line.starts_with("{\"type\":\"session_switched\"") && self.client.is_some() {
            self.flush().await?;
            return self.join().await;
        }
        let more = self.lines.as_ref().is_some_and(|l| !l.is_empty());
        if !more {
            self.flush().await?;
        }
        Ok(())
    }

    async fn write(&mut self, value: &Value) -> Result<(), Ended> {
        let Some(line) = crate::session::event_json(value) else {
            return Ok(());
        };
        self.put(line.as_bytes()).await?;
        self.flush().await
    }

    async fn put(&mut self, line: &[u8]) -> Result<(), Ended> {
        let write = async {
            self.out.write_all(line).await?;
            self.out.write_all(b"\n").await
        };
        stalled(tokio::time::timeout(WRITE_STALL, write).await)
    }

    async fn flush(&mut self) -> Result<(), Ended> {
        stalled(tokio::time::timeout(WRITE_STALL, self.out.flush()).await)
    }
}

/// A write that failed or took longer than [`WRITE_STALL`] ends the connection.
fn stalled(outcome: Result<std::io::Result<()>, tokio::time::error::Elapsed>) -> Result<(), Ended> {
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Ended::Gone),
        Err(_) => {
            tracing::warn!("attach: a client stopped reading for {WRITE_STALL:?}; dropped");
            Err(Ended::Gone)
        }
    }
}

/// The next live line, or never before the client attached.
async fn next_line(lines: &mut Option<broadcast::Receiver<Line>>) -> Result<Line, RecvError> {
    match lines {
        Some(lines) => lines.recv().await,
        None => std::future::pending().await,
    }
}
