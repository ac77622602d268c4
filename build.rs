//! Links the binary with packed relative relocations (DT_RELR) where the toolchain and
//! the C library support them.
//!
//! A position-independent binary of this size carries about 2 MB of relative
//! relocations, which the loader reads at every start and which then stay resident;
//! packed, they take a few kilobytes. The linker flag is probed on a tiny program first
//! (GNU ld ≥ 2.38 and glibc ≥ 2.36 are needed), so older toolchains build as before.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    let linux_gnu = env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    // Cross builds would probe the wrong machine's linker and C library.
    let native = env::var("TARGET").ok() == env::var("HOST").ok();
    if linux_gnu && native && links_and_runs_with_relr() {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
}

/// Whether a C program linked with the flag builds and runs on this machine.
fn links_and_runs_with_relr() -> bool {
    let Some(out) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out.join("relr_probe.c");
    let program = out.join("relr_probe");
    let code = "static const char *t[] = {\"a\", \"b\"};\nint main(int c, char **v) { (void)v; return t[c % 2][0] == 'a' || t[c % 2][0] == 'b' ? 0 : 1; }\n";
    if std::fs::write(&source, code).is_err() {
        return false;
    }
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let linked = Command::new(cc)
        .args(["-pie", "-fPIE", FLAG, "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}
