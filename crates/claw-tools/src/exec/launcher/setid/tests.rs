//! The filter installed in forked children, each call tried for real.
use super::*;

#[test]
fn every_jump_lands_inside_the_program() {
    let program = program();
    assert!(program.len() < 200, "{}", program.len());
    for (at, insn) in program.iter().enumerate() {
        if insn.code & 0x07 == 0x05 {
            let far = at + 1 + usize::from(insn.jt.max(insn.jf));
            assert!(far < program.len(), "instruction {at} jumps out");
        }
    }
    assert_eq!(program.last().map(|i| (i.code, i.k)), Some((RET_K, ENOSYS)));
}

/// Runs `checks` in a forked child under the filter; the child's exit code is the
/// number of the first check that failed (0: all held).
#[cfg(target_arch = "x86_64")]
fn in_filtered_child(checks: impl Fn() -> i32) -> i32 {
    let program = program();
    // SAFETY: the child only makes system calls and leaves with _exit: nothing that
    // could wait on a lock another thread of the test process held at the fork.
    match unsafe { nix::unistd::fork() }.unwrap() {
        nix::unistd::ForkResult::Child => unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            if install(&program).is_err() {
                libc::_exit(100);
            }
            libc::_exit(checks())
        },
        nix::unistd::ForkResult::Parent { child } => {
            match nix::sys::wait::waitpid(child, None).unwrap() {
                nix::sys::wait::WaitStatus::Exited(_, code) => code,
                other => panic!("{other:?}"),
            }
        }
    }
}

/// A system call's result: the return value, or minus the errno.
#[cfg(target_arch = "x86_64")]
fn sys(result: libc::c_long) -> libc::c_long {
    if result < 0 {
        -libc::c_long::from(nix::errno::Errno::last_raw())
    } else {
        result
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn set_id_bits_are_refused_by_every_call_and_other_modes_pass() {
    use std::ffi::CString;
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| CString::new(dir.path().join(name).to_str().unwrap()).unwrap();
    let (file, fresh) = (
        path("file"),
        [path("n1"), path("n2"), path("n3"), path("n4")],
    );
    let (made, nodes) = (path("made"), [path("m1"), path("m2")]);
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let fd = std::fs::File::open(dir.path().join("file")).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&fd);
    let (eperm, enosys) = (
        -libc::c_long::from(libc::EPERM),
        -libc::c_long::from(libc::ENOSYS),
    );
    let (creat_w, at) = (libc::O_CREAT | libc::O_WRONLY, libc::AT_FDCWD);
    let code = in_filtered_child(|| unsafe {
        let checks: [(libc::c_long, bool); 16] = [
            (libc::syscall(libc::SYS_chmod, file.as_ptr(), 0o4755), true),
            (libc::syscall(libc::SYS_chmod, file.as_ptr(), 0o2755), true),
            (libc::syscall(libc::SYS_fchmod, fd, 0o4755), true),
            (
                libc::syscall(libc::SYS_fchmodat, at, file.as_ptr(), 0o6755, 0),
                true,
            ),
            (libc::syscall(452, at, file.as_ptr(), 0o4755, 0), true),
            (
                libc::syscall(libc::SYS_open, fresh[0].as_ptr(), creat_w, 0o4755),
                true,
            ),
            (
                libc::syscall(libc::SYS_openat, at, fresh[1].as_ptr(), creat_w, 0o2755),
                true,
            ),
            (
                libc::syscall(libc::SYS_creat, fresh[2].as_ptr(), 0o4755),
                true,
            ),
            (
                libc::syscall(
                    libc::SYS_mknod,
                    nodes[0].as_ptr(),
                    libc::S_IFREG | 0o4755,
                    0,
                ),
                true,
            ),
            (
                libc::syscall(
                    libc::SYS_mknodat,
                    at,
                    nodes[1].as_ptr(),
                    libc::S_IFREG | 0o2755,
                    0,
                ),
                true,
            ),
            // x32's number for chmod: the filter sees it as chmod.
            (
                libc::syscall(0x4000_0000 | libc::SYS_chmod, file.as_ptr(), 0o4755),
                true,
            ),
            // Allowed: other modes, and a mode on an open that creates nothing.
            (libc::syscall(libc::SYS_chmod, file.as_ptr(), 0o755), false),
            (
                libc::syscall(libc::SYS_open, file.as_ptr(), libc::O_RDONLY, 0o4755),
                false,
            ),
            (
                libc::syscall(libc::SYS_open, made.as_ptr(), creat_w, 0o755),
                false,
            ),
            (libc::syscall(libc::SYS_fchmod, fd, 0o1777), false),
            (
                libc::syscall(libc::SYS_openat, at, fresh[3].as_ptr(), creat_w, 0o644),
                false,
            ),
        ];
        for (n, (result, refused)) in checks.into_iter().enumerate() {
            let result = sys(result);
            if (result == eperm) != refused {
                return n as i32 + 1;
            }
        }
        let how = [0u64; 3];
        let result = sys(libc::syscall(
            libc::SYS_openat2,
            at,
            file.as_ptr(),
            how.as_ptr(),
            24,
        ));
        if result != enosys {
            return 50;
        }
        0
    });
    assert_eq!(code, 0, "check {code} failed (100: not installed)");
    use std::os::unix::fs::PermissionsExt;
    for name in ["file", "made"] {
        let mode = std::fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o6000, 0, "{name}: {mode:o}");
    }
    for name in ["n1", "n2", "n3", "m1", "m2"] {
        assert!(!dir.path().join(name).exists(), "{name} was made");
    }
}

/// The 32-bit compat ABI (`int 0x80`, where `chmod` is number 15) is checked too.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_32_bit_abi_is_checked_too() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    // `int 0x80` passes 32-bit pointers: the path goes in a page below 4 GiB.
    let bytes = file.to_str().unwrap().as_bytes();
    // SAFETY: a fresh anonymous mapping; nothing else refers to it.
    let low = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_32BIT,
            -1,
            0,
        )
    };
    assert_ne!(low, libc::MAP_FAILED);
    assert!(bytes.len() < 4095);
    // SAFETY: the mapping is 4096 bytes, the path and its NUL fit.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), low.cast::<u8>(), bytes.len());
        *low.cast::<u8>().add(bytes.len()) = 0;
    }
    let address = low as usize as u32;
    let chmod32 = move |mode: u32| -> i32 {
        let mut eax: u32 = 15;
        // SAFETY: the compat chmod reads the NUL-terminated path at `address`.
        unsafe {
            // rbx is LLVM's: swapped in and out around the call.
            std::arch::asm!(
                "xchg {path:r}, rbx",
                "int 0x80",
                "xchg {path:r}, rbx",
                path = inout(reg) u64::from(address) => _,
                inout("eax") eax,
                in("ecx") mode,
                out("r8") _,
                out("r9") _,
                out("r10") _,
                out("r11") _,
            );
        }
        eax as i32
    };
    // Without the compat ABI (a kernel built or booted without it) there is nothing to
    // check: every `int 0x80` call fails alike.
    if chmod32(0o644) == -libc::ENOSYS {
        eprintln!("no 32-bit compat ABI on this kernel");
        return;
    }
    let code = in_filtered_child(|| {
        if chmod32(0o4755) != -libc::EPERM {
            return 1;
        }
        if chmod32(0o755) != 0 {
            return 2;
        }
        0
    });
    assert_eq!(code, 0, "check {code} failed (100: not installed)");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o755);
}
