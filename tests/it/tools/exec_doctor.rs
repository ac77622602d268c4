#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `claw-tui doctor` through the real binary: it prints every section, its exit code
//! matches what this kernel offers (Landlock ABI and pid namespaces, detected here
//! independently), and it fails when a protection is switched off or a secret leaks.

use crate::support::bin::{Sandbox, run};
use crate::support::exec::{landlock_abi, pid_namespaces_available};

fn doctor(config: &str) -> (i32, String) {
    let sb = Sandbox::new();
    sb.write_config(config);
    let mut cmd = sb.command();
    cmd.arg("doctor");
    let (code, stdout, stderr) = run(cmd);
    eprintln!("{stdout}{stderr}");
    (code, stdout)
}

/// The value printed after `label` on its line.
fn field<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find_map(|line| line.trim_start().strip_prefix(label))
        .map_or("(missing)", str::trim)
}

#[test]
fn doctor_prints_what_protects_this_machine_and_exits_by_it() {
    let (code, out) = doctor("");
    for section in [
        "Sandbox of exec ([exec] sandbox = \"workspace-write\")",
        "Landlock",
        "write confinement",
        "network",
        "signal scoping",
        "abstract sockets",
        "process containment",
        "command's mounts",
        "probe: write to /tmp",
        "Routes out of the sandbox (tried from a real command)",
        "host unix socket",
        "abstract unix socket",
        "capabilities held",
        "process limit",
        "memory, $TMPDIR",
        "UDP, network = deny",
        "TCP, network = deny",
        "set-user-ID file",
        "set-id files",
        "make a set-user-ID file",
        "write .git/config",
        "write .git/hooks/",
        "write .mcp.json",
        "mv .git x && mkdir .git",
        "a new .claw-tui/",
        "Secrets (a sandboxed command looked for CLAW_TUI_DOCTOR_CANARY_TOKEN",
        "/proc/$PPID/environ",
        "claw-tui's environ",
        "approval",
        "workspace",
        "config",
        "data",
        "state",
    ] {
        assert!(out.contains(section), "no {section:?} in:\n{out}");
    }
    assert!(!out.contains("LEAKS"), "{out}");
    for broken in ["REACHED", "HONOURED", "CHANGED on disk", "STAYED", "MADE"] {
        assert!(!out.contains(broken), "{broken}: {out}");
    }
    if landlock_abi() > 0 {
        assert_eq!(field(&out, "probe: write to /tmp"), "refused", "{out}");
    }
    let abi = landlock_abi();
    match pid_namespaces_available() {
        None => eprintln!("no unshare tool here: not checking the exit code against it"),
        Some(namespaces) => {
            let full = abi >= 6 && namespaces;
            eprintln!("Landlock ABI {abi}, pid namespaces {namespaces}: fully in force {full}");
            assert_eq!(code, if full { 0 } else { 1 }, "{out}");
            assert_eq!(out.contains("Result: the sandbox is fully in force."), full);
            if abi == 0 {
                assert!(out.contains("not available in this kernel"), "{out}");
            }
            if !namespaces {
                assert!(out.contains("child subreaper"), "{out}");
            }
        }
    }
}

#[test]
fn doctor_fails_with_the_sandbox_off() {
    let (code, out) = doctor("[exec]\nsandbox = \"off\"\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("NOT fully in force"), "{out}");
    assert!(
        out.contains("[exec] sandbox = \"off\": commands are not confined"),
        "{out}"
    );
    assert_eq!(field(&out, "probe: write to /tmp"), "ALLOWED", "{out}");
    // Without the sandbox nothing stops it: the doctor finds the file on disk.
    assert!(
        field(&out, "make a set-user-ID file").starts_with("MADE"),
        "{out}"
    );
}

#[test]
fn doctor_reports_a_secret_passed_on_purpose_as_a_leak() {
    let (code, out) = doctor("[exec]\npass_env = [\"CLAW_TUI_DOCTOR_CANARY_TOKEN\"]\n");
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        field(&out, "its own environment"),
        "LEAKS the canary",
        "{out}"
    );
}

#[test]
fn doctor_checks_network_deny() {
    let (_, out) = doctor("[exec]\nnetwork = \"deny\"\n");
    if pid_namespaces_available() == Some(true) {
        assert!(out.contains("in force: none at all"), "{out}");
    } else if landlock_abi() >= 4 {
        assert!(out.contains("refuses only TCP"), "{out}");
    } else {
        eprintln!(
            "Landlock ABI {} (< 4): network deny is reported missing",
            landlock_abi()
        );
        assert!(
            out.contains("NOT in force: [exec] network = \"deny\""),
            "{out}"
        );
    }
}

#[test]
fn doctor_lists_what_runs_outside_the_sandbox_and_whether_its_files_are_trusted() {
    let sb = Sandbox::new();
    let hooks = sb.workspace().join(".claw-tui/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("no-rm.sh"), "cat > /dev/null\n").unwrap();
    std::fs::write(
        sb.workspace().join(".mcp.json"),
        r#"{"mcpServers": {"proj": {"command": "node", "args": ["server.js"]}}}"#,
    )
    .unwrap();
    sb.write_config(
        "[[hooks.before_tool]]\nmatch = \".*\"\ncommand = \"sh .claw-tui/hooks/no-rm.sh\"\n\n\
         [mcp.servers.mine]\ncommand = \"my-server\"\n",
    );
    let mut cmd = sb.command();
    cmd.arg("doctor");
    let (_, out, stderr) = run(cmd);
    eprintln!("{out}{stderr}");
    let section = out
        .split_once("Outside the sandbox (runs as you; what protects each)")
        .expect("no section about what runs outside the sandbox")
        .1;
    let section = section.split_once("\nSettings").unwrap().0;
    let flat = section.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "before_tool hook `sh .claw-tui/hooks/no-rm.sh`",
        "runs .claw-tui/hooks/no-rm.sh only with the content you trusted: NOT trusted now",
        "MCP server \"mine\" (your config)",
        "`my-server` as you",
        "MCP server \"proj\" (the project's .mcp.json)",
        "not started: the whole entry waits for your trust",
        "git, for the checkpoints",
        "$VISUAL / $EDITOR",
    ] {
        assert!(flat.contains(expected), "no {expected:?} in:\n{section}");
    }
    if landlock_abi() > 0 {
        assert!(flat.contains("tried now: Landlock in force"), "{section}");
    }
}
