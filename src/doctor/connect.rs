//! `claw-tui __sandbox-probe KIND TARGET`: the one thing `doctor`'s probe cannot do
//! with a shell alone — open a unix socket (pathname or abstract), or send one UDP
//! datagram or TCP message — run inside the sandbox like any command. It prints
//! `delivered` (`sent` for UDP, which cannot know; exit 0) or `refused: WHY` (exit 1).
//! Whether anything arrived, only the listener can say.

use std::io::Write as _;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};

/// The hidden subcommand.
pub const PROBE_SUBCOMMAND: &str = "__sandbox-probe";

/// What the probe sends.
const MESSAGE: &[u8] = b"claw-tui doctor probe\n";

/// Runs the probe: `args` are the arguments after [`PROBE_SUBCOMMAND`]; returns the exit
/// code.
pub fn probe_main(args: &[std::ffi::OsString]) -> i32 {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let sent = match args.as_slice() {
        [kind, target] => send(kind, target).map(|()| kind == "udp"),
        _ => Err(std::io::Error::other(format!(
            "usage: {PROBE_SUBCOMMAND} unix|abstract|udp|tcp TARGET"
        ))),
    };
    let mut out = std::io::stdout();
    match sent {
        Ok(udp) => {
            let _ = writeln!(out, "{}", if udp { "sent" } else { "delivered" });
            0
        }
        Err(e) => {
            let _ = writeln!(out, "refused: {e}");
            1
        }
    }
}

fn send(kind: &str, target: &str) -> std::io::Result<()> {
    match kind {
        "unix" => UnixStream::connect(target)?.write_all(MESSAGE),
        "abstract" => {
            let address = SocketAddr::from_abstract_name(target.as_bytes())?;
            UnixStream::connect_addr(&address)?.write_all(MESSAGE)
        }
        "udp" => {
            let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
            socket.send_to(MESSAGE, target).map(drop)
        }
        "tcp" => std::net::TcpStream::connect(target)?.write_all(MESSAGE),
        other => Err(std::io::Error::other(format!("unknown kind {other}"))),
    }
}
