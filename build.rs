//! Links the binary with packed relative relocations (DT_RELR) where the toolchain and
//! the C library support them, and, in optimised builds, with its functions in the order
//! `scripts/symbol-order.txt` gives.
//!
//! A position-independent binary of this size carries about 2 MB of relative
//! relocations, which the loader reads at every start and which then stay resident;
//! packed, they take a few kilobytes. The linker flag is probed on a tiny program first
//! (GNU ld ≥ 2.38 and glibc ≥ 2.36 are needed), so older toolchains build as before.
//!
//! The order file lists the functions a session runs (written by
//! `scripts/make_symbol_order.py`). Placed first and together, they fill a few hundred
//! pages instead of being scattered over the whole code segment, where the kernel maps
//! each touched page with its neighbours (fault-around): the code resident in a running
//! client falls from most of the binary's text to about what it runs. Only lld (Rust's
//! default linker on x86-64 Linux) and mold know the flag, so it is tried by linking an
//! empty program with the same compiler and flags first; a stale name in the file is
//! skipped by the linker, a missing file leaves the default order.
//!
//! It also names the commit built (`git rev-parse`, in this package's checkout) for
//! `--version`; outside a git checkout the version says "unknown commit".

use std::env;
use std::path::PathBuf;
use std::process::Command;

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

/// The order of the functions a session runs, relative to the package.
const SYMBOL_ORDER: &str = "scripts/symbol-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={SYMBOL_ORDER}");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    commit();
    if env::var("PROFILE").as_deref() == Ok("release") {
        order_functions();
    }
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

/// Passes the order file to the linker when the linker rustc uses accepts it.
fn order_functions() {
    let Some(dir) = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        return;
    };
    let order = dir.join(SYMBOL_ORDER);
    if !order.is_file() {
        return;
    }
    let args = [
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        "-Wl,--no-warn-symbol-ordering".to_owned(),
    ];
    if rustc_links_with(&args) {
        for arg in args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    } else {
        println!(
            "cargo:warning=the linker does not take a symbol order; functions keep the default order"
        );
    }
}

/// Whether rustc, with this build's flags and target, links an empty program with `args`.
fn rustc_links_with(args: &[String]) -> bool {
    let Some(out) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out.join("order_probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let mut command = Command::new(rustc);
    command.arg("--edition=2021").arg("--crate-type=bin");
    if let Ok(target) = env::var("TARGET") {
        command.args(["--target", &target]);
    }
    // The linker the build itself uses when one is configured (`target.<triple>.linker`),
    // which cargo passes to rustc apart from the flags.
    if let Ok(linker) = env::var("RUSTC_LINKER") {
        command.arg(format!("-Clinker={linker}"));
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    command.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    for arg in args {
        command.arg(format!("-Clink-arg={arg}"));
    }
    command.arg("-o").arg(out.join("order_probe")).arg(&source);
    command.output().is_ok_and(|o| o.status.success())
}

/// Sets `CLAW_TUI_COMMIT` to the commit checked out, and builds again when it changes.
fn commit() {
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_owned())
    };
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("packed-refs").display()
        );
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(branch).display());
        }
    }
    let commit =
        git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown commit".to_owned());
    println!("cargo:rustc-env=CLAW_TUI_COMMIT={commit}");
}
