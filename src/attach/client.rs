//! `claw-tui attach`: the live sessions listed, or one joined. With `--mode rpc` stdin
//! and stdout are joined to the session's JSON lines (after the `attach` handshake), so
//! a script drives the session as it would drive `--mode rpc`.

use super::listing::{LiveSession, live_sessions, pick};
use crate::cli::Mode;
use crate::config::Settings;
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED};
use crate::visible::for_stdout;
use color_eyre::eyre::{bail, eyre};
use std::path::PathBuf;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// Which session to attach to.
pub enum Target {
    /// By id or id prefix among the live sessions; `None` lists them.
    Id(Option<String>),
    /// Through this socket (e.g. one forwarded with `ssh -L`).
    Socket(PathBuf),
}

/// Runs `claw-tui attach`; returns the exit code.
pub fn run(settings: &Settings, target: Target, mode: Option<Mode>) -> color_eyre::Result<i32> {
    if let Some(other) = mode.filter(|m| *m != Mode::Rpc) {
        bail!("attach --mode {other:?} is not supported: use rpc, or no --mode for the client");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| eyre!("cannot start the async runtime: {e}"))?;
    let found = runtime.block_on(async {
        let socket = match target {
            Target::Socket(path) => path,
            Target::Id(id) => {
                let dir = super::socket_dir(&settings.state_dir)?;
                let live = live_sessions(&dir).await;
                let Some(id) = id else {
                    print_list(&live);
                    return Ok(None);
                };
                pick(&live, &id).map_err(|e| eyre!(e))?.socket.clone()
            }
        };
        if mode == Some(Mode::Rpc) {
            return bridge(&socket).await.map(|code| Some(Found::Done(code)));
        }
        Ok::<_, color_eyre::Report>(Some(Found::Socket(socket)))
    });
    runtime.shutdown_background();
    match found? {
        None => Ok(EXIT_OK),
        Some(Found::Done(code)) => Ok(code),
        // The client runs on a runtime of its own, as the local one does.
        Some(Found::Socket(socket)) => crate::tui::host::remote::attach(settings, &socket),
    }
}

/// Where `run` got to before the client takes over.
enum Found {
    /// The bridge ran; its exit code.
    Done(i32),
    /// The socket the client attaches to.
    Socket(PathBuf),
}

/// The listing: one session a line, most useful first.
fn print_list(live: &[LiveSession]) {
    if live.is_empty() {
        println!("No live sessions. Start one with `claw-tui serve`.");
        return;
    }
    for s in live {
        let prompt = s.first_prompt.as_deref().unwrap_or("(no prompt yet)");
        // A listing, not data: what a prompt holds is shown, never obeyed.
        println!(
            "{}  {:<7}  {} attached  pid {}  {}  {}",
            s.session.id,
            s.state,
            s.clients.len(),
            s.session.pid,
            for_stdout(&s.session.workspace.display().to_string()),
            for_stdout(prompt)
        );
    }
}

/// Joins stdin and stdout to the socket: `attach` first, then both ways until either
/// side ends.
async fn bridge(socket: &std::path::Path) -> color_eyre::Result<i32> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|e| eyre!("cannot connect to {}: {e}", socket.display()))?;
    let (read, mut write) = stream.into_split();
    write
        .write_all(b"{\"type\":\"attach\",\"name\":\"claw-tui attach --mode rpc\"}\n")
        .await
        .map_err(|e| eyre!("cannot attach: {e}"))?;
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let mut from_server = BufReader::new(read);
    let upstream = async {
        let _ = tokio::io::copy(&mut stdin, &mut write).await;
        // End of stdin: the server answers what it was sent, then hangs up (a detach).
        let _ = write.shutdown().await;
        std::future::pending::<()>().await;
    };
    let downstream = tokio::io::copy_buf(&mut from_server, &mut stdout);
    tokio::select! {
        () = upstream => Ok(EXIT_OK),
        done = downstream => match done {
            Ok(_) => Ok(EXIT_OK),
            Err(e) => {
                eprintln!("claw-tui: lost the connection: {e}");
                Ok(EXIT_RUN_FAILED)
            }
        },
    }
}
