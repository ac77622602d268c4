//! The fences around a served session, tried from the attacker's side: the modes on
//! disk, another user's connection, and the network (no TCP listener at all).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::attach::{Client, Served};
use crate::support::bin::Sandbox;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;

/// The user id of `nobody`.
const NOBODY: u32 = 65534;

fn served() -> Served {
    Served::start(Sandbox::new(), 0, &["--provider", "demo"])
}

#[test]
fn the_socket_is_0600_in_a_0700_directory_of_ours() {
    let served = served();
    let socket = std::fs::metadata(&served.socket).unwrap();
    assert_eq!(socket.mode() & 0o777, 0o600);
    let dir = std::fs::metadata(served.socket.parent().unwrap()).unwrap();
    assert_eq!(dir.mode() & 0o777, 0o700);
    assert_eq!(dir.uid(), nix::unistd::geteuid().as_raw());
    // Stopped, it removes its socket.
    let socket = served.socket.clone();
    served.stop();
    assert!(!socket.exists(), "the socket outlived its server");
}

#[test]
fn no_tcp_port_is_open_while_a_session_is_served_and_attached() {
    let served = served();
    let _client = served.attach("watcher");
    let inodes = socket_inodes(served.pid());
    assert!(
        !inodes.is_empty(),
        "the served process has no socket at all?"
    );
    for table in [
        "/proc/net/tcp",
        "/proc/net/tcp6",
        "/proc/net/udp",
        "/proc/net/udp6",
    ] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for row in text.lines().skip(1) {
            let fields: Vec<&str> = row.split_whitespace().collect();
            let inode = fields.get(9).copied().unwrap_or_default();
            assert!(
                !inodes.contains(&inode.to_owned()),
                "the served process holds a network socket: {table}: {row}"
            );
        }
    }
}

/// The inodes of the sockets process `pid` holds open.
fn socket_inodes(pid: u32) -> Vec<String> {
    let mut inodes = Vec::new();
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            let target = target.to_string_lossy().into_owned();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|t| t.strip_suffix(']'))
            {
                inodes.push(inode.to_owned());
            }
        }
    }
    inodes
}

#[test]
fn another_user_cannot_reach_the_socket_and_is_refused_when_the_fences_are_opened() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "SKIPPED another_user_cannot_reach_the_socket...: running a client as another \
             user needs root (CI runs it as root)"
        );
        return;
    }
    let served = served();
    let dir = served.socket.parent().unwrap().to_owned();
    // The tempdir above the socket directory is 0700 too: let `nobody` walk down to it.
    let mut up = dir.parent();
    while let Some(parent) = up {
        if parent == std::path::Path::new("/tmp") || parent.as_os_str().is_empty() {
            break;
        }
        let mode = std::fs::metadata(parent).unwrap().mode() & 0o777;
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(mode | 0o711)).unwrap();
        up = parent.parent();
    }
    // Fence one: the 0700 directory keeps `nobody` from even connecting.
    let tried = connect_as_nobody(&served.socket);
    assert!(
        tried.contains("Permission denied"),
        "nobody connected through the private directory: {tried}"
    );
    // Fences one and two opened by hand (as a careless admin might): the peer check
    // still refuses, says so in the server's log, and sends nothing.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&served.socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let tried = connect_as_nobody(&served.socket);
    assert!(tried.starts_with("connected"), "{tried}");
    assert!(
        tried.ends_with("read 0 bytes"),
        "the server spoke to another user: {tried}"
    );
    let said = served.stderr();
    assert!(
        said.contains(&format!("refused a connection from user {NOBODY}")),
        "{said}"
    );
    // Our own user still gets in.
    let ok = Client::connect(&served.socket);
    assert_eq!(ok.hello["type"], "hello");
}

/// Runs a tiny client as `nobody`: connects to `socket`, reads what comes until EOF, and
/// prints what happened.
fn connect_as_nobody(socket: &std::path::Path) -> String {
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused:", e.strerror); sys.exit(0)
s.settimeout(5)
data = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk: break
        data += chunk
except socket.timeout:
    print("connected, then silence", len(data)); sys.exit(0)
print("connected, read", len(data), "bytes")
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(socket)
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if text.starts_with("refused:") {
        return text.replace("refused: ", "");
    }
    text
}

#[test]
fn a_models_command_cannot_reach_the_sessions_socket() {
    let served = served();
    let watcher = served.attach("watcher");
    // The model's command tries the socket it would need to approve its own calls.
    let probe = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({:?})\n    \
         s.sendall(b'{{\"type\":\"attach\"}}\\n')\n    print('REACHED', s.recv(100))\nexcept OSError as e:\n    \
         print('REFUSED', e)\n",
        served.socket.display().to_string()
    );
    std::fs::write(served.sandbox.workspace().join("probe.py"), probe).unwrap();
    watcher.send(r#"{"type":"prompt","content":"run python3 probe.py"}"#);
    let lines = watcher.until(|l| l["type"] == "tool_execution_end");
    let output = lines.last().unwrap()["result"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        output.contains("REFUSED"),
        "the command reached the socket: {output}"
    );
    assert!(!output.contains("REACHED"), "{output}");
    watcher.until(|l| l["type"] == "agent_end");
    watcher.send(r#"{"type":"get_clients"}"#);
    let clients = watcher.response("get_clients");
    assert_eq!(clients["clients"].as_array().unwrap().len(), 1, "{clients}");
}
