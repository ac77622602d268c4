//! A seccomp filter that keeps a sandboxed command from making a set-user-ID or
//! set-group-ID file. `nosuid` makes such a file confer nothing inside the sandbox, but
//! the file stays in the workspace, where it works for whoever runs it next: a root
//! shell left behind by `cp /bin/sh x; chmod 4755 x`.
//!
//! Refused with `EPERM`: `chmod`, `fchmod`, `fchmodat` and `fchmodat2` with `S_ISUID` or
//! `S_ISGID` in the mode, and `open`, `openat`, `creat`, `mknod`, `mknodat` creating a
//! file (`O_CREAT`, `O_TMPFILE`; `creat` and `mknod` always create) with those bits.
//! `openat2` takes its mode inside a struct the filter cannot read, so it answers
//! `ENOSYS` and libc falls back to `openat`. A set-group-ID directory cannot be told
//! apart from a file by a path, so `chmod g+s DIR` is refused too. What else could set
//! the bits is closed already: a write or truncate clears them (the command lacks
//! `CAP_FSETID`), and `io_uring` can only create an empty file, which the first write
//! then clears.
//!
//! The filter is a small BPF program written here rather than with a filter crate:
//! it handles every ABI a process of this machine can call the kernel with (64-bit,
//! x32, and the 32-bit compat one: `int 0x80` reaches `chmod` as number 15), and lets
//! every other call through, so a 32-bit program still runs. `seccompiler`, the
//! well-kept choice, kills any process making a call of another ABI (every 32-bit
//! program) and does not know x32 numbers, which would pass unchecked.

use nix::libc;

#[cfg(test)]
mod tests;

/// The bits that must never be set.
const SETID: u32 = libc::S_ISUID | libc::S_ISGID;

/// `O_TMPFILE` without `O_DIRECTORY`: the bit that makes an open create an unnamed file.
const TMPFILE_BIT: u32 = 0o20_000_000;

/// What a system call is checked for.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// Argument `mode` must not hold a set-id bit.
    Mode { mode: u32 },
    /// When argument `flags` creates a file, argument `mode` must not hold one.
    Create { flags: u32, mode: u32 },
    /// Refused with `ENOSYS`, so that libc uses another call.
    NoSys,
}

/// One system call of one ABI.
#[derive(Clone, Copy, Debug)]
struct Call {
    nr: u32,
    check: Check,
}

const fn call(nr: u32, check: Check) -> Call {
    Call { nr, check }
}

const fn mode(mode: u32) -> Check {
    Check::Mode { mode }
}

const fn create(flags: u32, mode: u32) -> Check {
    Check::Create { flags, mode }
}

/// An ABI: its `AUDIT_ARCH_*` value and its calls.
struct Abi {
    arch: u32,
    /// A bit its call numbers may carry that does not change the call (x32's).
    ignored_bit: u32,
    calls: &'static [Call],
}

// The numbers below are the kernel's (arch/*/entry/syscalls, include/uapi/asm-generic);
// `fchmodat2` (452) and `openat2` (437) are the same everywhere.
const FCHMODAT2: u32 = 452;
const OPENAT2: u32 = 437;

#[cfg(target_arch = "x86_64")]
const ABIS: [Abi; 2] = [
    Abi {
        arch: 0xC000_003E, // AUDIT_ARCH_X86_64, x32 included
        ignored_bit: 0x4000_0000,
        calls: &[
            call(90, mode(1)),  // chmod
            call(91, mode(1)),  // fchmod
            call(268, mode(2)), // fchmodat
            call(FCHMODAT2, mode(2)),
            call(2, create(1, 2)),   // open
            call(257, create(2, 3)), // openat
            call(85, mode(1)),       // creat
            call(133, mode(1)),      // mknod
            call(259, mode(2)),      // mknodat
            call(OPENAT2, Check::NoSys),
        ],
    },
    Abi {
        arch: 0x4000_0003, // AUDIT_ARCH_I386
        ignored_bit: 0,
        calls: &[
            call(15, mode(1)),  // chmod
            call(94, mode(1)),  // fchmod
            call(306, mode(2)), // fchmodat
            call(FCHMODAT2, mode(2)),
            call(5, create(1, 2)),   // open
            call(295, create(2, 3)), // openat
            call(8, mode(1)),        // creat
            call(14, mode(1)),       // mknod
            call(297, mode(2)),      // mknodat
            call(OPENAT2, Check::NoSys),
        ],
    },
];

#[cfg(target_arch = "aarch64")]
const ABIS: [Abi; 2] = [
    Abi {
        arch: 0xC000_00B7, // AUDIT_ARCH_AARCH64: only the *at calls exist
        ignored_bit: 0,
        calls: &[
            call(52, mode(1)), // fchmod
            call(53, mode(2)), // fchmodat
            call(FCHMODAT2, mode(2)),
            call(56, create(2, 3)), // openat
            call(33, mode(2)),      // mknodat
            call(OPENAT2, Check::NoSys),
        ],
    },
    Abi {
        arch: 0x4000_0028, // AUDIT_ARCH_ARM (the 32-bit compat ABI)
        ignored_bit: 0,
        calls: &[
            call(15, mode(1)),  // chmod
            call(94, mode(1)),  // fchmod
            call(333, mode(2)), // fchmodat
            call(FCHMODAT2, mode(2)),
            call(5, create(1, 2)),   // open
            call(322, create(2, 3)), // openat
            call(8, mode(1)),        // creat
            call(14, mode(1)),       // mknod
            call(324, mode(2)),      // mknodat
            call(OPENAT2, Check::NoSys),
        ],
    },
];

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ABIS: [Abi; 0] = [];

// Classic BPF, as seccomp runs it (linux/filter.h, linux/seccomp.h): BPF_LD | BPF_W
// | BPF_ABS (the first two are 0).
const LD_W_ABS: u16 = 0x20;
const ALU_AND_K: u16 = 0x04 | 0x50;
const JMP_JEQ_K: u16 = 0x05 | 0x10;
const JMP_JSET_K: u16 = 0x05 | 0x40;
const RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`: the call number, the ABI, the arguments (the low
/// half of each 64-bit slot on these little-endian machines).
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg(n: u32) -> u32 {
    16 + 8 * n
}

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The instructions that check one call, once its number matched; each path returns.
fn check_block(check: Check) -> Vec<libc::sock_filter> {
    let mode_check = |mode: u32| {
        [
            stmt(LD_W_ABS, arg(mode)),
            jump(JMP_JSET_K, SETID, 0, 1),
            stmt(RET_K, EPERM),
            stmt(RET_K, ALLOW),
        ]
    };
    match check {
        Check::Mode { mode } => mode_check(mode).to_vec(),
        Check::Create { flags, mode } => {
            let creating = libc::O_CREAT as u32 | TMPFILE_BIT;
            let mut block = vec![
                stmt(LD_W_ABS, arg(flags)),
                // Not creating: skip to the mode check's last instruction (ALLOW).
                jump(JMP_JSET_K, creating, 0, 3),
            ];
            block.extend(mode_check(mode));
            block
        }
        Check::NoSys => vec![stmt(RET_K, ENOSYS)],
    }
}

/// The instructions for one ABI, its number loaded first; falls off the end (to the
/// next instruction, ALLOW) for every call it does not check.
fn abi_block(abi: &Abi) -> Vec<libc::sock_filter> {
    let mut block = vec![stmt(LD_W_ABS, NR)];
    if abi.ignored_bit != 0 {
        block.push(stmt(ALU_AND_K, !abi.ignored_bit));
    }
    for call in abi.calls {
        let body = check_block(call.check);
        // Small by construction: at most nine instructions.
        let skip = u8::try_from(body.len()).unwrap_or(u8::MAX);
        block.push(jump(JMP_JEQ_K, call.nr, 0, skip));
        block.extend(body);
    }
    block.push(stmt(RET_K, ALLOW));
    block
}

/// The whole program: each known ABI's block, and `ENOSYS` for an ABI this machine
/// should not have (its numbers would mean other calls).
fn program() -> Vec<libc::sock_filter> {
    let mut program = vec![stmt(LD_W_ABS, ARCH)];
    let blocks: Vec<Vec<libc::sock_filter>> = ABIS.iter().map(abi_block).collect();
    for (abi, block) in ABIS.iter().zip(&blocks) {
        let skip = u8::try_from(block.len()).unwrap_or(u8::MAX);
        program.push(jump(JMP_JEQ_K, abi.arch, 0, skip));
        program.extend(block.iter().copied());
    }
    program.push(stmt(RET_K, ENOSYS));
    program
}

/// Why the filter is not in force.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetidError {
    /// This build knows no system call numbers for the machine's architecture.
    #[error("no set-id filter is written for this architecture")]
    Architecture,
    /// The kernel has no seccomp filters.
    #[error("the kernel has no seccomp filters ({0})")]
    Unsupported(nix::errno::Errno),
    /// The kernel refused the filter.
    #[error("the kernel refused the seccomp filter ({0})")]
    Refused(nix::errno::Errno),
}

/// Installs the filter on this process (and so on everything it starts). Needs
/// `no_new_privs` or `CAP_SYS_ADMIN`; this process must be single-threaded.
pub(crate) fn forbid_setid_files() -> Result<(), SetidError> {
    if ABIS.is_empty() {
        return Err(SetidError::Architecture);
    }
    install(&program())
}

fn install(program: &[libc::sock_filter]) -> Result<(), SetidError> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).unwrap_or(u16::MAX),
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: PR_SET_SECCOMP reads `fprog` and the instructions it points to, both
    // alive for the call; the kernel verifies the program before installing it.
    let done = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &fprog as *const libc::sock_fprog,
        )
    };
    if done == 0 {
        return Ok(());
    }
    match nix::errno::Errno::last() {
        errno @ nix::errno::Errno::EINVAL => Err(SetidError::Unsupported(errno)),
        errno => Err(SetidError::Refused(errno)),
    }
}
