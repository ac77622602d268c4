//! The shell's own confinement, applied in the forked child just before exec: a session
//! of its own (no controlling terminal), resource limits, no capabilities at all and
//! `no_new_privs`, and the Landlock ruleset.
//!
//! Why every capability goes: as root, `NET_RAW` sniffs claw-tui's own requests on `lo`,
//! `NET_ADMIN` changes the host's interfaces, `DAC_OVERRIDE` and `FOWNER` pass file
//! permissions, `SETUID` becomes anyone, `SYS_ADMIN` or `PERFMON` read
//! `/proc/PID/environ` of any process through Landlock. The user's own commands (hooks,
//! `sandbox = "off"`) lose only the ones that reach other processes or the kernel
//! ([`DROPPED`]).

use super::super::report::{CapabilityState, LandlockState, LimitsReport, Report, SandboxReport};
use super::contain::Inside;
use super::options::LauncherOptions;
use super::setid;
use super::{EXIT_EXEC_FAILED, EXIT_SETUP_FAILED, Reporter, exit_now};
use caps::{CapSet, Capability};
use landlock::{
    ABI, AccessFs, AccessNet, LandlockStatus, RulesetAttr, RulesetCreatedAttr, RulesetError,
    RulesetStatus, Scope, path_beneath_rules,
};
use std::io::Write as _;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// Landlock ABI the rules are written for; older kernels get what they support.
const TARGET_ABI: ABI = ABI::V6;
/// The first ABI that restricts TCP bind and connect.
const NETWORK_ABI: u8 = 4;
/// The first ABI that scopes signals and abstract unix sockets to the domain.
const SCOPE_ABI: u8 = 6;

/// Capabilities the user's own commands (hooks, `sandbox = "off"`) never keep; sandboxed
/// commands keep none at all.
const DROPPED: [Capability; 12] = [
    Capability::CAP_SYS_ADMIN,
    Capability::CAP_SYS_PTRACE,
    Capability::CAP_PERFMON,
    Capability::CAP_BPF,
    Capability::CAP_SYS_RAWIO,
    Capability::CAP_SYS_MODULE,
    Capability::CAP_SYS_BOOT,
    Capability::CAP_MKNOD,
    Capability::CAP_MAC_ADMIN,
    Capability::CAP_MAC_OVERRIDE,
    Capability::CAP_SYSLOG,
    Capability::CAP_CHECKPOINT_RESTORE,
];

/// In the forked shell child: confines this process, reports, and execs the program.
pub(super) fn exec_shell(options: &LauncherOptions, reporter: &Reporter, inside: Inside) -> ! {
    // A session of its own: no controlling terminal, so /dev/tty cannot reach the
    // user's terminal, and a group the command may signal as a whole.
    let _ = nix::unistd::setsid();
    let limits = match set_limits(options, inside) {
        Ok(limits) => limits,
        Err(e) => fail(reporter, format!("cannot set the resource limits: {e}")),
    };
    let dropped = if options.keep_capabilities {
        match drop_capabilities() {
            Ok(dropped) => dropped,
            Err(reason) => fail(reporter, reason.to_string()),
        }
    } else {
        clear_capabilities();
        Vec::new()
    };
    let mut sandbox = if options.landlock {
        match restrict(options, inside) {
            Ok(report) => report,
            Err(e) => fail(reporter, format!("Landlock refused the ruleset: {e}")),
        }
    } else {
        SandboxReport {
            landlock: LandlockState::Off,
            abi: kernel_abi(),
            ..SandboxReport::default()
        }
    };
    sandbox.dropped_capabilities = dropped;
    // After Landlock and `no_new_privs`, which the filter needs; hooks and `sandbox =
    // "off"` (the user's own commands) are not filtered.
    if !options.keep_capabilities {
        match setid::forbid_setid_files() {
            Ok(()) => sandbox.setid_refused = true,
            Err(e @ setid::SetidError::Refused(_)) => fail(reporter, e.to_string()),
            // Reported as missing (`setid_refused` false), and noted by claw-tui.
            Err(_) => {}
        }
    }
    // Read after Landlock, which sets no_new_privs as well.
    sandbox.capabilities = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| CapabilityState::parse(&status));
    sandbox.limits = limits;
    reporter.send(&Report::Sandbox(sandbox));
    close_inherited_descriptors();
    let Some((first, rest)) = options.program.split_first() else {
        exit_now(EXIT_EXEC_FAILED)
    };
    // Resets the signal mask and SIGPIPE before exec; the environment is inherited.
    let error = std::process::Command::new(first).args(rest).exec();
    let _ = writeln!(
        std::io::stderr(),
        "claw-tui sandbox: cannot run {}: {error}",
        Path::new(first).display()
    );
    exit_now(EXIT_EXEC_FAILED)
}

/// Marks every descriptor above stderr close-on-exec: one opened before the sandbox
/// (by claw-tui or a library, without the flag) would be a way past Landlock.
fn close_inherited_descriptors() {
    const CLOSE_RANGE_CLOEXEC: u32 = 4;
    // SAFETY: close_range only changes flags of this process's descriptors.
    let done = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_close_range,
            3u32,
            u32::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        return;
    }
    // Kernels before 5.11: one by one.
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: sets a flag on a descriptor number; a closed one just fails.
        unsafe { nix::libc::fcntl(fd, nix::libc::F_SETFD, nix::libc::FD_CLOEXEC) };
    }
}

fn fail(reporter: &Reporter, reason: String) -> ! {
    reporter.send(&Report::Failed { reason });
    exit_now(EXIT_SETUP_FAILED)
}

/// Why the capabilities could not be dropped; the text is the failure report's reason.
#[derive(Debug, thiserror::Error)]
enum CapsDropError {
    #[error("{0}")]
    Read(#[from] caps::errors::CapsError),
    #[error("cannot drop {cap}: {source}")]
    Drop {
        cap: Capability,
        source: caps::errors::CapsError,
    },
}

/// Removes [`DROPPED`] from the bounding and inheritable sets (and clears the ambient
/// set), so no exec gets them back. Only root has them: another user's command loses
/// every capability at exec. Returns the names of those this process had.
fn drop_capabilities() -> Result<Vec<String>, CapsDropError> {
    let _ = caps::clear(None, CapSet::Ambient);
    if !nix::unistd::geteuid().is_root() {
        return Ok(Vec::new());
    }
    let bounding = caps::read(None, CapSet::Bounding)?;
    let permitted = caps::read(None, CapSet::Permitted)?;
    let mut dropped = Vec::new();
    for cap in DROPPED.into_iter().filter(|cap| bounding.contains(cap)) {
        caps::drop(None, CapSet::Bounding, cap)
            .and_then(|()| caps::drop(None, CapSet::Inheritable, cap))
            .map_err(|source| CapsDropError::Drop { cap, source })?;
        if permitted.contains(&cap) {
            dropped.push(cap.to_string());
        }
    }
    Ok(dropped)
}

/// Applies the ruleset: writes only beneath `options.writes` (never device nodes),
/// signals and abstract unix sockets scoped to the command's own domain, and TCP refused
/// for `--deny-network` when no network namespace does better.
fn restrict(options: &LauncherOptions, inside: Inside) -> Result<SandboxReport, RulesetError> {
    let write = AccessFs::from_write(TARGET_ABI);
    let grant = write & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let mut ruleset = landlock::Ruleset::default()
        .handle_access(write)?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?;
    let tcp_by_landlock = options.deny_network && !inside.network_namespace;
    if tcp_by_landlock {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let status = ruleset
        .create()?
        .add_rules(path_beneath_rules(&options.writes, grant))?
        .restrict_self()?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as u8,
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => 0,
    };
    let enforced = status.ruleset != RulesetStatus::NotEnforced;
    Ok(SandboxReport {
        landlock: match status.ruleset {
            RulesetStatus::FullyEnforced => LandlockState::Enforced,
            RulesetStatus::PartiallyEnforced => LandlockState::Partial,
            RulesetStatus::NotEnforced => LandlockState::NotEnforced,
        },
        abi,
        write_confined: enforced,
        network_denied: enforced && tcp_by_landlock && abi >= NETWORK_ABI,
        signals_scoped: enforced && abi >= SCOPE_ABI,
        abstract_sockets_scoped: enforced && abi >= SCOPE_ABI,
        ..SandboxReport::default()
    })
}

/// Sets the command's resource limits (soft and hard, so it cannot raise them again).
/// Processes: the pid namespace's size when the init could set it (contain.rs), and
/// `RLIMIT_NPROC`, which counts the user's processes and never applies to root: in the
/// command's own user namespace those are the command's; outside one the limit is added
/// to the number of tasks on the machine now (an upper bound of the user's).
fn set_limits(options: &LauncherOptions, inside: Inside) -> nix::Result<LimitsReport> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let lower = |resource, wanted: u64| -> nix::Result<u64> {
        let (_, hard) = getrlimit(resource)?;
        let value = wanted.min(hard);
        setrlimit(resource, value, value)?;
        Ok(value)
    };
    let mut report = LimitsReport::default();
    if let Some(bytes) = options.limits.address_space {
        report.address_space = Some(lower(Resource::RLIMIT_AS, bytes)?);
    }
    if let Some(processes) = options.limits.processes {
        let root = nix::unistd::geteuid().is_root();
        let nproc = if root {
            None
        } else if inside.user_namespace {
            Some(lower(Resource::RLIMIT_NPROC, processes)?)
        } else {
            let base = tasks_on_this_machine();
            lower(Resource::RLIMIT_NPROC, processes.saturating_add(base))?;
            Some(processes)
        };
        report.processes = match (inside.pid_limit, nproc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        report.processes_enforced = report.processes.is_some();
        if report.processes.is_none() {
            report.processes = Some(processes);
        }
    }
    Ok(report)
}

/// The number of tasks (processes and threads) on the machine, from /proc/loadavg.
fn tasks_on_this_machine() -> u64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| {
            let field = text.split_whitespace().nth(3)?;
            field.split_once('/')?.1.parse().ok()
        })
        .unwrap_or(0)
}

/// Clears every capability set and sets `no_new_privs`: securebits first (no
/// capabilities for root at exec, locked), then the bounding set (each capability the
/// kernel knows), the ambient set, and effective, permitted and inheritable together.
/// Each step needs what the one before removes, hence the order; a step the process is
/// not allowed (no `CAP_SETPCAP`: an ordinary user outside a user namespace) changes
/// nothing, and the state read back afterwards is what is reported.
fn clear_capabilities() {
    use nix::libc::{
        PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, PR_CAPBSET_DROP, PR_SET_SECUREBITS,
        SECBIT_KEEP_CAPS_LOCKED, SECBIT_NO_CAP_AMBIENT_RAISE, SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
        SECBIT_NO_SETUID_FIXUP, SECBIT_NO_SETUID_FIXUP_LOCKED, SECBIT_NOROOT, SECBIT_NOROOT_LOCKED,
        c_ulong,
    };
    let bits = SECBIT_NOROOT
        | SECBIT_NOROOT_LOCKED
        | SECBIT_NO_SETUID_FIXUP
        | SECBIT_NO_SETUID_FIXUP_LOCKED
        | SECBIT_KEEP_CAPS_LOCKED
        | SECBIT_NO_CAP_AMBIENT_RAISE
        | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    // SAFETY: prctl with integer arguments only changes this process's credentials.
    unsafe {
        nix::libc::prctl(PR_SET_SECUREBITS, bits as c_ulong, 0, 0, 0);
        for cap in 0..64 as c_ulong {
            if nix::libc::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0
                && nix::errno::Errno::last() == nix::errno::Errno::EINVAL
            {
                break; // Past the last capability this kernel knows.
            }
        }
        nix::libc::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL as c_ulong, 0, 0, 0);
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let empty = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a v3 header and two data structs, both valid here.
    unsafe { nix::libc::syscall(nix::libc::SYS_capset, &header, empty.as_ptr()) };
    let _ = nix::sys::prctl::set_no_new_privs();
}

/// The kernel's Landlock ABI version (0 without Landlock).
pub(crate) fn kernel_abi() -> u8 {
    // SAFETY: with a null attribute and size 0, LANDLOCK_CREATE_RULESET_VERSION only
    // returns the ABI version (or -1); nothing is created.
    let abi = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    u8::try_from(abi.max(0)).unwrap_or(u8::MAX)
}
