//! A small tmpfs to fill up: a real full disk for the binary. Mounting needs root (as
//! in CI); where it is refused, `mount` returns `None` and says so on the terminal
//! (the writer's failure path is still covered through a failing sink).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `bytes` at `dir` (created if needed).
    pub fn mount(dir: &Path, bytes: u64) -> Option<Self> {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            super::skip::announce_skip(
                std::thread::current().name().unwrap_or("a test"),
                "a real full disk",
                &format!(
                    "cannot mount a tmpfs at {} without root; the failing-sink tests cover \
                     the writer",
                    dir.display()
                ),
            );
            return None;
        }
        Some(Self {
            dir: dir.to_path_buf(),
        })
    }

    fn filler(&self) -> PathBuf {
        self.dir.join("filler")
    }

    /// Fills every free byte with a filler file.
    pub fn fill(&self) {
        let mut file = std::fs::File::create(self.filler()).unwrap();
        let block = [0u8; 4096];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(nix::libc::ENOSPC) => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
    }

    /// Frees what `fill` took.
    pub fn free(&self) {
        std::fs::remove_file(self.filler()).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
