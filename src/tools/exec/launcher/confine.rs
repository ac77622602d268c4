//! The shell's own confinement, applied in the forked child just before exec: a session
//! of its own (no controlling terminal), no capabilities that reach into other processes
//! or the kernel, and the Landlock ruleset.
//!
//! Why the capabilities go: on a kernel tested for this, a root process with
//! `CAP_SYS_ADMIN` or `CAP_PERFMON` reads `/proc/PID/environ` of any process, Landlock
//! domain or not; `CAP_SYS_PTRACE` reads it outside Landlock. The others reach memory or
//! the kernel directly (raw I/O, modules, BPF, device nodes, kexec).

use super::super::report::{LandlockState, Report, SandboxReport};
use super::{EXIT_EXEC_FAILED, EXIT_SETUP_FAILED, LauncherOptions, Reporter, exit_now};
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
/// The first ABI that scopes signals to the domain.
const SIGNAL_ABI: u8 = 6;

/// Capabilities a command never keeps.
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
pub(super) fn exec_shell(options: &LauncherOptions, reporter: &Reporter) -> ! {
    // A session of its own: no controlling terminal, so /dev/tty cannot reach the
    // user's terminal, and a group the command may signal as a whole.
    let _ = nix::unistd::setsid();
    let dropped = match drop_capabilities() {
        Ok(dropped) => dropped,
        Err(reason) => fail(reporter, reason.to_string()),
    };
    let mut sandbox = if options.landlock {
        match restrict(options) {
            Ok(report) => report,
            Err(e) => fail(reporter, format!("Landlock refused the ruleset: {e}")),
        }
    } else {
        SandboxReport {
            landlock: LandlockState::Off,
            abi: kernel_abi(),
            write_confined: false,
            network_denied: false,
            signals_scoped: false,
            dropped_capabilities: Vec::new(),
        }
    };
    sandbox.dropped_capabilities = dropped;
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

/// Applies the ruleset: writes only beneath `options.writes` (never device nodes), TCP
/// refused when asked, signals scoped to the command's own domain.
fn restrict(options: &LauncherOptions) -> Result<SandboxReport, RulesetError> {
    let write = AccessFs::from_write(TARGET_ABI);
    let grant = write & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let mut ruleset = landlock::Ruleset::default()
        .handle_access(write)?
        .scope(Scope::Signal)?;
    if options.deny_network {
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
        network_denied: enforced && options.deny_network && abi >= NETWORK_ABI,
        signals_scoped: enforced && abi >= SIGNAL_ABI,
        dropped_capabilities: Vec::new(),
    })
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
