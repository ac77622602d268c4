#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The routes out of the sandbox besides files, tried from a real command through the
//! real launcher: host unix sockets (pathname and abstract) against listeners of the
//! test, UDP, TCP, raw and packet sockets with `network = "deny"`, capabilities, a
//! set-user-ID file, and the resource limits. What counts is what the listeners got
//! and what the kernel shows the command (`/proc/self/status`, `/proc/self/limits`).
//! Where this machine lacks namespaces, root or a Landlock ABI, the test says so and
//! checks that the result says so.

use crate::support::bin::Sandbox;
use crate::support::exec::*;
use claw_tui::tools::exec::{ExecConfig, ExecTool, NetworkMode};
use serde_json::json;
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;

/// A listening pathname socket in a directory of its own, and an abstract one.
struct HostSockets {
    _dir: tempfile::TempDir,
    path: PathBuf,
    pathname: UnixListener,
    name: String,
    abstract_socket: UnixListener,
}

impl HostSockets {
    fn open() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        let pathname = UnixListener::bind(&path).unwrap();
        let name = format!("claw-test-{}", marker());
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let abstract_socket = UnixListener::bind_addr(&address).unwrap();
        pathname.set_nonblocking(true).unwrap();
        abstract_socket.set_nonblocking(true).unwrap();
        Self {
            _dir: dir,
            path,
            pathname,
            name,
            abstract_socket,
        }
    }

    fn script(&self) -> String {
        probe_line("pathname", "unix", &self.path.display().to_string())
            + &probe_line("abstract", "abstract", &self.name)
    }
}

/// A command binding a unix socket of its own (pathname in the workspace and in
/// `$TMPDIR`, and abstract) and talking to it.
const OWN_SOCKETS: &str = r#"python3 - <<'EOF'
import os, socket
for where in ["own.sock", os.environ["TMPDIR"] + "/own.sock", "\0own-" + str(os.getpid())]:
    server = socket.socket(socket.AF_UNIX)
    server.bind(where)
    server.listen()
    client = socket.socket(socket.AF_UNIX)
    client.connect(where)
    server.accept()[0].sendall(b"x")
    assert client.recv(1) == b"x"
print("own=ok")
EOF
"#;

#[tokio::test]
async fn host_unix_sockets_are_out_of_reach_but_allowed_and_own_ones_work() {
    let workspace = tempfile::tempdir().unwrap();
    let host = HostSockets::open();
    let allowed = HostSockets::open();
    let tool = ExecTool::new(
        workspace.path(),
        ExecConfig {
            allow_sockets: vec![allowed.path.clone()],
            ..config()
        },
    );
    let mut command =
        host.script() + &probe_line("allowed", "unix", &allowed.path.display().to_string());
    if python3() {
        command.push_str(OWN_SOCKETS);
    } else {
        eprintln!("no python3 here: not checking the command's own sockets");
    }
    let result = call(&tool, json!({ "command": command })).await;
    let content = &result.content;
    assert!(
        allowed.pathname.accept().is_ok(),
        "allow_sockets: {content}"
    );
    assert_eq!(printed(content, "allowed"), "delivered", "{content}");
    if python3() {
        assert_eq!(printed(content, "own"), "ok", "{content}");
    }
    if had_mounts(&result) {
        eprintln!("the command has a mount namespace: the host's pathname socket is masked");
        assert!(host.pathname.accept().is_err(), "reached: {content}");
        assert!(
            printed(content, "pathname").starts_with("refused"),
            "{content}"
        );
    } else {
        eprintln!("no mount namespace here: checking that the result says sockets are not masked");
        assert!(content.contains("host unix sockets are not"), "{content}");
    }
    if landlock_abi() >= 6 {
        eprintln!(
            "Landlock ABI {}: abstract sockets are scoped",
            landlock_abi()
        );
        assert!(host.abstract_socket.accept().is_err(), "reached: {content}");
        assert!(
            printed(content, "abstract").starts_with("refused"),
            "{content}"
        );
    } else {
        eprintln!("Landlock ABI {} (< 6): checking the note", landlock_abi());
        assert!(content.contains("abstract unix sockets"), "{content}");
    }
}

#[tokio::test]
async fn a_tmux_server_of_the_user_runs_nothing_for_a_command() {
    let have_tmux = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_tmux {
        eprintln!("no tmux here: skipping the tmux server check");
        return;
    }
    let host = tempfile::tempdir().unwrap();
    let socket = host.path().join("tmux.sock");
    let started = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["new-session", "-d", "sleep 60"])
        .status()
        .unwrap();
    assert!(started.success());
    let workspace = tempfile::tempdir().unwrap();
    let marker = host.path().join("ran-outside");
    let command = format!(
        "tmux -S '{}' new-window 'touch {}' && echo \"new-window=ok\"",
        socket.display(),
        marker.display()
    );
    let result = call(&tool(workspace.path()), json!({ "command": command })).await;
    // Whatever tmux would run has had time to start: the window was made or refused.
    let listed = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["list-windows", "-F", "#{window_index}"])
        .output()
        .unwrap();
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .arg("kill-server")
        .status();
    let windows = String::from_utf8_lossy(&listed.stdout).lines().count();
    if had_mounts(&result) {
        assert_eq!(windows, 1, "a window was opened: {}", result.content);
        assert!(
            !marker.exists(),
            "ran outside the sandbox: {}",
            result.content
        );
        assert_eq!(printed(&result.content, "new-window"), "(not printed)");
    } else {
        eprintln!("no mount namespace here: the tmux socket is not masked (the result says so)");
        assert!(
            result.content.contains("host unix sockets are not"),
            "{}",
            result.content
        );
    }
}

#[test]
fn host_service_variables_are_not_passed_unless_pass_env_names_them() {
    let sb = Sandbox::new();
    sb.write_config("[exec]\npass_env = [\"DISPLAY\"]\n");
    let mut cmd = sb.command();
    cmd.args(["--provider", "demo", "--no-session", "-p", "run env"])
        .env("TMUX", "/tmp/tmux-0/default,123,0")
        .env("TMUX_PANE", "%1")
        .env("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus")
        .env("XDG_RUNTIME_DIR", "/run/user/0")
        .env("DISPLAY", ":7");
    let (code, stdout, stderr) = crate::support::bin::run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("DISPLAY=:7"), "pass_env keeps it: {stdout}");
    for gone in [
        "TMUX=",
        "TMUX_PANE=",
        "SSH_AUTH_SOCK=",
        "DBUS_SESSION_BUS_ADDRESS=",
        "XDG_RUNTIME_DIR=",
    ] {
        assert!(
            !stdout.contains(gone),
            "{gone} reached the command: {stdout}"
        );
    }
}

#[tokio::test]
async fn network_deny_is_no_network_at_all() {
    let workspace = tempfile::tempdir().unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    tcp.set_nonblocking(true).unwrap();
    let mut command = probe_line("udp", "udp", &udp.local_addr().unwrap().to_string())
        + &probe_line("tcp", "tcp", &tcp.local_addr().unwrap().to_string())
        + "echo \"interfaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,)\"\n";
    if python3() {
        // Raw and packet sockets, and a server on the command's own loopback.
        command.push_str(
            r#"python3 - <<'EOF'
import socket
for name, args in [("packet", (socket.AF_PACKET, socket.SOCK_RAW)),
                   ("raw", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))]:
    try:
        socket.socket(*args)
        print(name + "=OPENED")
    except OSError as e:
        print(name + "=refused: " + str(e))
server = socket.create_server(("127.0.0.1", 0))
client = socket.create_connection(server.getsockname())
server.accept()[0].sendall(b"x")
print("loopback=" + ("ok" if client.recv(1) == b"x" else "FAILED"))
EOF
"#,
        );
    } else {
        eprintln!("no python3 here: not checking raw, packet and loopback sockets");
    }
    for network in [NetworkMode::Deny, NetworkMode::Allow] {
        let tool = ExecTool::new(
            workspace.path(),
            ExecConfig {
                network,
                ..config()
            },
        );
        let result = call(&tool, json!({ "command": command })).await;
        let content = &result.content;
        let udp_heard = udp.recv_from(&mut [0u8; 64]).is_ok();
        let tcp_heard = tcp.accept().is_ok();
        if python3() {
            assert_eq!(printed(content, "loopback"), "ok", "{network:?}: {content}");
            for kind in ["packet", "raw"] {
                assert!(
                    printed(content, kind).starts_with("refused"),
                    "{kind}: {content}"
                );
            }
        }
        if network == NetworkMode::Allow {
            assert!(udp_heard && tcp_heard, "allow reaches the host: {content}");
            continue;
        }
        let netns = result.details["containment_report"]["network_namespace"] == true;
        if netns {
            eprintln!("network = deny: a network namespace of its own");
            assert!(!udp_heard, "UDP reached the host: {content}");
            assert!(!tcp_heard, "TCP reached the host: {content}");
            assert_eq!(printed(content, "interfaces"), "lo,", "{content}");
        } else {
            eprintln!("no network namespace here: checking that the result says so");
            assert!(content.contains("network = \"deny\""), "{content}");
        }
    }
}

#[tokio::test]
async fn commands_hold_no_capabilities() {
    let workspace = tempfile::tempdir().unwrap();
    let result = call(
        &tool(workspace.path()),
        json!({"command": "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status"}),
    )
    .await;
    let content = &result.content;
    let field = |name: &str| {
        content
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
            .unwrap_or("(missing)")
    };
    assert_eq!(field("NoNewPrivs"), "1", "{content}");
    for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert_eq!(field(set), "0000000000000000", "{set}: {content}");
    }
    let root = nix::unistd::geteuid().is_root();
    if root || result.details["containment_report"]["user_namespace"] == true {
        assert_eq!(field("CapBnd"), "0000000000000000", "{content}");
    } else {
        eprintln!("not root and no user namespace: the bounding set cannot be cleared here");
    }
}

#[tokio::test]
async fn a_set_user_id_file_confers_nothing() {
    let workspace = tempfile::tempdir().unwrap();
    let root = nix::unistd::geteuid().is_root();
    let cat = ["/bin/cat", "/usr/bin/cat"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .unwrap();
    if root {
        // One planted by someone else: owned by nobody, set-user-ID.
        use std::os::unix::fs::PermissionsExt;
        let planted = workspace.path().join("nobody-cat");
        std::fs::copy(cat, &planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o4755)).unwrap();
    } else {
        eprintln!("not root: cannot make a set-user-ID file owned by another user");
    }
    let command = format!(
        "cp {cat} mine && (chmod u+s mine; echo \"mode=$(stat -c %A mine)\")\n\
         echo \"mine=$(./mine /proc/self/status | grep -E '^(Uid|CapEff)' | tr -s '[:space:]' ' ')\"\n\
         [ -e nobody-cat ] && echo \"planted=$(./nobody-cat /proc/self/status | sed -n 's/^Uid:[[:space:]]*//p' | tr -s '[:space:]' ' ')\"\n\
         echo \"mount=$(awk -v d=\"$PWD\" '$5 == d {{print $6}}' /proc/self/mountinfo | tail -n 1)\"\n"
    );
    let result = call(&tool(workspace.path()), json!({ "command": command })).await;
    let content = &result.content;
    // The command cannot set the bit at all (the seccomp filter); one planted from
    // outside still confers nothing (nosuid, no capabilities).
    assert!(printed(content, "mode").starts_with("-rwx"), "{content}");
    let uid = nix::unistd::geteuid().as_raw();
    assert!(
        printed(content, "mine").contains("CapEff: 0000000000000000"),
        "{content}"
    );
    if root {
        assert_eq!(
            printed(content, "planted").trim(),
            "0 0 0 0",
            "set-user-ID honoured: {content}"
        );
    }
    if had_mounts(&result) {
        assert!(printed(content, "mount").contains("nosuid"), "{content}");
    } else {
        eprintln!("no mount namespace here (uid {uid}): no_new_privs alone stands in the way");
    }
}

#[tokio::test]
async fn the_resource_limits_hold_and_show_in_proc_self_limits() {
    let workspace = tempfile::tempdir().unwrap();
    let tool = ExecTool::new(
        workspace.path(),
        ExecConfig {
            max_processes: 300,
            max_memory_mib: 512,
            tmp_size_mib: 4,
            ..config()
        },
    );
    // A fork bomb in a subshell (a shell whose fork fails gives up), then builtins only:
    // at the limit nothing more can fork. The sleeps are killed at the time limit (20 s,
    // room for a loaded machine to start them all).
    let command = "grep -E '^Max (processes|address space)' /proc/self/limits | tr -s ' '\n\
         echo \"tmp=$(df -Pk \"$TMPDIR\" | awk 'NR==2 {print $2}')\"\n\
         head -c 8M /dev/zero > \"$TMPDIR/big\" 2>/dev/null; echo \"big=$?\"\n\
         ( i=0; while [ $i -lt 400 ]; do sleep 30 & i=$((i+1)); done ) 2>/dev/null\n\
         n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo running=$n\n";
    let result = call(&tool, json!({ "command": command, "timeout": 20 })).await;
    let content = &result.content;
    assert!(
        content.contains("Max address space 536870912 536870912 bytes"),
        "{content}"
    );
    if had_mounts(&result) {
        assert_eq!(printed(content, "tmp"), "4096", "{content}");
        assert_ne!(
            printed(content, "big"),
            "0",
            "8 MiB fit in a 4 MiB $TMPDIR: {content}"
        );
    } else {
        eprintln!("no mount namespace here: $TMPDIR is not size-limited");
    }
    let limits = &result.details["sandbox_report"]["limits"];
    if limits["processes_enforced"] == true {
        let limit = limits["processes"].as_u64().unwrap();
        let running: u64 = printed(content, "running").trim().parse().unwrap();
        eprintln!("{running} processes ran under a limit of {limit}");
        assert!(limit <= 300 && running <= limit, "{content}");
        if !nix::unistd::geteuid().is_root() {
            assert!(content.contains("Max processes 300 300"), "{content}");
        }
    } else {
        eprintln!("the process limit is not enforced here: checking the note");
        assert!(
            content.contains("process limit is not enforced"),
            "{content}"
        );
    }
}
