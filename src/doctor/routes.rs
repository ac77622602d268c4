//! The routes out of the sandbox that `claw-tui doctor` tries, from a real command:
//! host unix sockets (a pathname and an abstract one the doctor listens on), UDP and TCP
//! to the host with `network = "deny"`, the capabilities and limits a command runs
//! with, a set-user-ID file (running one, and making one), and writes to protected
//! paths. What counts is what the
//! listeners received and what is on disk afterwards, not what the command printed.
//!
//! The network and protected-path routes run in a throwaway workspace of their own
//! (a `.git` with a config and hooks, a `.mcp.json`), never in the user's.

use super::Doctor;
use super::connect::PROBE_SUBCOMMAND;
use super::probe::{self, ProbeResult};
use crate::tools::exec::{ExecConfig, ExecTool, NetworkMode, SandboxMode};
use std::io::{self, Read};
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};

/// `path` in single quotes for sh.
fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// The host's side: a listener for each route, none of which may hear from a command.
pub(super) struct Listeners {
    _dir: tempfile::TempDir,
    unix_path: PathBuf,
    unix: UnixListener,
    abstract_name: String,
    abstract_socket: UnixListener,
    udp: UdpSocket,
    tcp: TcpListener,
    exe: PathBuf,
}

impl Listeners {
    /// Opens the listeners (non-blocking).
    pub fn open() -> io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("claw-tui-doctor-")
            .tempdir()?;
        let unix_path = dir.path().join("host.sock");
        let unix = UnixListener::bind(&unix_path)?;
        let abstract_name = format!("claw-tui-doctor-{:016x}", fastrand::u64(..));
        let abstract_socket =
            UnixListener::bind_addr(&SocketAddr::from_abstract_name(abstract_name.as_bytes())?)?;
        let udp = UdpSocket::bind("127.0.0.1:0")?;
        let tcp = TcpListener::bind("127.0.0.1:0")?;
        unix.set_nonblocking(true)?;
        abstract_socket.set_nonblocking(true)?;
        udp.set_nonblocking(true)?;
        tcp.set_nonblocking(true)?;
        Ok(Self {
            _dir: dir,
            unix_path,
            unix,
            abstract_name,
            abstract_socket,
            udp,
            tcp,
            exe: std::env::current_exe()?,
        })
    }

    fn probe(&self, name: &str, kind: &str, target: &str) -> String {
        format!(
            "echo \"{name}=$({} {PROBE_SUBCOMMAND} {kind} '{target}' 2>&1)\"\n",
            quote(&self.exe)
        )
    }

    /// Lines for the main probe: connect to both unix sockets.
    pub fn socket_script(&self) -> String {
        self.probe("unix_socket", "unix", &self.unix_path.display().to_string())
            + &self.probe("abstract_socket", "abstract", &self.abstract_name)
    }

    fn network_script(&self) -> io::Result<String> {
        Ok(
            self.probe("udp", "udp", &self.udp.local_addr()?.to_string())
                + &self.probe("tcp", "tcp", &self.tcp.local_addr()?.to_string()),
        )
    }

    fn heard_unix(&self) -> bool {
        self.unix.accept().is_ok()
    }

    fn heard_abstract(&self) -> bool {
        self.abstract_socket.accept().is_ok()
    }

    fn heard_udp(&self) -> bool {
        self.udp.recv_from(&mut [0u8; 64]).is_ok()
    }

    fn heard_tcp(&self) -> bool {
        self.tcp.accept().is_ok()
    }
}

/// The throwaway workspace of the second probe.
struct Routes {
    dir: tempfile::TempDir,
    /// A set-user-ID copy of `cat` owned by nobody (only root can make one).
    suid: bool,
}

const CONFIG: &str = "[core]\n\tbare = false\n";
const MCP: &str = "{\"mcpServers\": {}}\n";

/// What the command of the second probe does.
const SCRIPT: &str = r#"
if (: >> .git/config) 2>/dev/null; then echo git_config=WRITABLE; else echo git_config=refused; fi
if (: > .git/hooks/doctor-probe) 2>/dev/null; then echo git_hooks=WRITABLE; else echo git_hooks=refused; fi
if (: >> .mcp.json) 2>/dev/null; then echo mcp_json=WRITABLE; else echo mcp_json=refused; fi
if mv .git .git-moved 2>/dev/null; then echo git_rename=ALLOWED; mv .git-moved .git; else echo git_rename=refused; fi
mkdir .claw-tui 2>/dev/null && echo made > .claw-tui/probe
cp /bin/sh ./setid-made 2>/dev/null && chmod 6755 ./setid-made 2>/dev/null
if chmod u+s ./setid-made 2>/dev/null; then echo setid=ALLOWED; else echo setid=refused; fi
if [ -x ./suid-cat ]; then
  echo "suid_uid=$(./suid-cat /proc/self/status | sed -n 's/^Uid:[[:space:]]*//p' | tr -s '[:space:]' ' ')"
fi
"#;

impl Routes {
    fn make() -> io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("claw-tui-doctor-ws-")
            .tempdir()?;
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".git/hooks"))?;
        std::fs::write(ws.join(".git/config"), CONFIG)?;
        std::fs::write(ws.join(".mcp.json"), MCP)?;
        let suid = nix::unistd::geteuid().is_root() && make_suid_cat(&ws.join("suid-cat")).is_ok();
        Ok(Self { dir, suid })
    }

    fn path(&self) -> PathBuf {
        self.dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| self.dir.path().to_path_buf())
    }
}

/// A copy of `cat` owned by uid/gid 65534 with the set-user-ID bit.
fn make_suid_cat(to: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let cat = ["/bin/cat", "/usr/bin/cat"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .ok_or_else(|| io::Error::other("no cat"))?;
    std::fs::copy(cat, to)?;
    let nobody = Some(nix::unistd::Uid::from_raw(65534));
    nix::unistd::chown(to, nobody, Some(nix::unistd::Gid::from_raw(65534)))?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o4755))
}

/// What the second probe found, checked on disk and at the listeners.
pub(super) struct RouteResult {
    probe: ProbeResult,
    udp_heard: bool,
    tcp_heard: bool,
    config_kept: bool,
    hook_made: bool,
    mcp_kept: bool,
    git_kept: bool,
    claw_moved: bool,
    suid: bool,
    /// The mode of the copy of `sh` the command tried to make set-user-ID, read on disk.
    setid_mode: Option<u32>,
}

/// Runs the second probe: `exec` as configured, but `network = "deny"`, in a workspace
/// of its own.
pub(super) async fn try_routes(
    exec: &ExecConfig,
    listeners: &Listeners,
) -> io::Result<RouteResult> {
    let routes = Routes::make()?;
    let ws = routes.path();
    let config = ExecConfig {
        network: NetworkMode::Deny,
        ..exec.clone()
    };
    let tool = ExecTool::new(ws.clone(), config);
    let probe = probe::run(&tool, "", &(listeners.network_script()? + SCRIPT)).await;
    let read = |rel: &str| {
        let mut text = String::new();
        std::fs::File::open(ws.join(rel))
            .and_then(|mut f| f.read_to_string(&mut text))
            .ok()?;
        Some(text)
    };
    let moved = std::fs::read_dir(&ws)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".claw-tui.quarantined-")
        });
    Ok(RouteResult {
        udp_heard: listeners.heard_udp(),
        tcp_heard: listeners.heard_tcp(),
        config_kept: read(".git/config").as_deref() == Some(CONFIG),
        hook_made: ws.join(".git/hooks/doctor-probe").exists(),
        mcp_kept: read(".mcp.json").as_deref() == Some(MCP),
        git_kept: ws.join(".git").is_dir() && !ws.join(".git-moved").exists(),
        claw_moved: moved && !ws.join(".claw-tui").exists(),
        suid: routes.suid,
        setid_mode: std::fs::symlink_metadata(ws.join("setid-made"))
            .ok()
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions())),
        probe,
    })
}

impl Doctor {
    /// The "Routes out" section.
    pub(super) fn routes(
        &mut self,
        exec: &ExecConfig,
        main: &ProbeResult,
        listeners: Option<&Listeners>,
        routes: Result<RouteResult, String>,
    ) {
        self.heading("Routes out of the sandbox (tried from a real command)");
        let on = exec.sandbox == SandboxMode::WorkspaceWrite;
        match listeners {
            Some(l) => {
                let unix = l.heard_unix();
                let abs = l.heard_abstract();
                self.route("host unix socket", unix, main.check("unix_socket"));
                self.route("abstract unix socket", abs, main.check("abstract_socket"));
            }
            None => self.problem_line("host sockets", "NOT tried: no listener could be opened"),
        }
        self.capabilities(main, on);
        self.limits(exec, main, on);
        match routes {
            Ok(r) => self.route_result(&r),
            Err(why) => {
                self.problem_line("network and protected paths", &format!("NOT tried: {why}"))
            }
        }
    }

    fn problem_line(&mut self, label: &str, text: &str) {
        self.line(label, text);
        self.problems.push(format!("{label}: {text}"));
    }

    /// One route: fine when the listener heard nothing.
    fn route(&mut self, label: &str, heard: bool, printed: &str) {
        if heard {
            self.problem_line(label, &format!("REACHED from a command ({printed})"));
        } else {
            self.line(label, format!("not reached ({printed})"));
        }
    }

    fn capabilities(&mut self, main: &ProbeResult, on: bool) {
        let sets = ["CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"];
        let values: Vec<String> = sets
            .iter()
            .map(|s| format!("{s} {}", main.check(s)))
            .collect();
        let none = sets
            .iter()
            .all(|s| main.check(s).chars().all(|c| c == '0') && !main.check(s).is_empty());
        let nnp = main.check("NoNewPrivs") == "1";
        let text = format!(
            "{}, NoNewPrivs {}",
            values.join(", "),
            main.check("NoNewPrivs")
        );
        match (none && nnp, on) {
            (true, _) => self.line("capabilities held", format!("none ({text})")),
            (false, true) => self.problem_line("capabilities held", &format!("SOME: {text}")),
            (false, false) => self.line("capabilities held", format!("{text} (sandbox off)")),
        }
    }

    fn limits(&mut self, exec: &ExecConfig, main: &ProbeResult, on: bool) {
        let limit = |n: u64| {
            if n == 0 {
                "none".to_owned()
            } else {
                n.to_string()
            }
        };
        let limits = &main.details["sandbox_report"]["limits"];
        let enforced = limits["processes_enforced"] == true;
        let processes = format!(
            "at most {} (max_processes = {}; the pid namespace's pid_max {}, RLIMIT_NPROC {})",
            limits["processes"]
                .as_u64()
                .map_or_else(|| "-".into(), |n| n.to_string()),
            limit(exec.max_processes),
            main.check("pid_max"),
            main.check("max_processes"),
        );
        if on && exec.max_processes > 0 && !enforced {
            self.problem_line("process limit", &format!("NOT enforced: {processes}"));
        } else {
            self.line("process limit", processes);
        }
        self.line(
            "memory, $TMPDIR",
            format!(
                "address space {} bytes (max_memory_mib = {}), $TMPDIR {} KiB (tmp_size_mib \
                 = {})",
                main.check("max_address_space"),
                limit(exec.max_memory_mib),
                main.check("tmpdir_size"),
                limit(exec.tmp_size_mib),
            ),
        );
    }

    /// Whether the command could make a set-id file: what is on disk decides.
    fn setid_made(&mut self, r: &RouteResult) {
        let label = "make a set-user-ID file";
        let printed = r.probe.check("setid");
        match r.setid_mode {
            Some(mode) if mode & 0o6000 != 0 => self.problem_line(
                label,
                &format!(
                    "MADE: a copy of sh with mode {:o} is on disk ({printed})",
                    mode & 0o7777
                ),
            ),
            Some(mode) => self.line(
                label,
                format!(
                    "refused (the copy of sh on disk has mode {:o}; {printed})",
                    mode & 0o7777
                ),
            ),
            None => self.problem_line(
                label,
                &format!("NOT tried: the copy was not made ({printed})"),
            ),
        }
    }

    fn route_result(&mut self, r: &RouteResult) {
        let p = &r.probe;
        self.route("UDP, network = deny", r.udp_heard, p.check("udp"));
        self.route("TCP, network = deny", r.tcp_heard, p.check("tcp"));
        match p.check("suid_uid").trim() {
            _ if !r.suid => self.line(
                "set-user-ID file",
                "not tried (only root can make one owned by another user)",
            ),
            uid if uid.split_whitespace().all(|u| u == "0") && !uid.is_empty() => self.line(
                "set-user-ID file",
                format!("confers nothing (a nobody-owned one ran with uids {uid})"),
            ),
            uid => self.problem_line("set-user-ID file", &format!("HONOURED (uids {uid})")),
        }
        self.setid_made(r);
        let writes = [
            (".git/config", p.check("git_config"), r.config_kept),
            (".git/hooks/", p.check("git_hooks"), !r.hook_made),
            (".mcp.json", p.check("mcp_json"), r.mcp_kept),
        ];
        for (path, printed, kept) in writes {
            let label = format!("write {path}");
            match (printed, kept) {
                ("refused", true) => self.line(&label, "refused (read-only in the command's view)"),
                (_, true) => self.problem_line(
                    &label,
                    &format!(
                        "{printed}: the command could write; what it changed was put back after it"
                    ),
                ),
                (_, false) => self.problem_line(&label, &format!("{printed}: CHANGED on disk")),
            }
        }
        match (p.check("git_rename"), r.git_kept) {
            ("refused", true) => self.line("mv .git x && mkdir .git", "refused (.git is pinned)"),
            (printed, _) => self.problem_line(
                "mv .git x && mkdir .git",
                &format!("{printed}: .git can be replaced"),
            ),
        }
        if r.claw_moved {
            self.line("a new .claw-tui/", "moved aside after the command");
        } else {
            self.problem_line("a new .claw-tui/", "STAYED in the workspace");
        }
    }
}
