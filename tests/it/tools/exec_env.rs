#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Secrets of claw-tui never reach a command, by any route, through the real binary:
//! `claw-tui -p "run . ./probe.sh"` on the demo model (the shell itself runs the probe), with canary secrets in its
//! environment, next to a second claw-tui process holding them too. The probe reads its
//! own environment and `/proc/PID/environ` and `/proc/PID/mem` of its parent, of the
//! claw-tui that runs it and of the other claw-tui; the test also reads the launcher's
//! environment from outside. With and without the pid namespace (then only Landlock,
//! the dropped capabilities and the non-dumpable claw-tui stand in the way), and with the
//! sandbox off.

use crate::support::bin::Sandbox;
use crate::support::exec::DEADLINE;
use crate::support::read_text;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// (variable, value) pairs claw-tui gets; none may reach the command.
const CANARIES: [(&str, &str); 5] = [
    ("CANARY_API_KEY", "canary-value-api-key"),
    ("AWS_SECRET_ACCESS_KEY", "canary-value-aws"),
    ("MY_PASSWORD", "canary-value-password"),
    ("SERVICE_TOKEN", "canary-value-token"),
    ("CORP_LOGIN", "canary-value-scrub-env"),
];

/// Kept on purpose by `pass_env`.
const PASSED: (&str, &str) = ("GITHUB_TOKEN", "passed-on-purpose");

fn with_secrets(mut cmd: Command) -> Command {
    for (name, value) in CANARIES.into_iter().chain([PASSED]) {
        cmd.env(name, value);
    }
    cmd
}

const PROBE: &str = r#"
read main < gate
mkdir -p out
env > out/env
for who in "parent $PPID" "main $main" "sibling $SIBLING"; do
  set -- $who
  { tr '\0' '\n' < "/proc/$2/environ"; } > "out/$1.environ" 2> "out/$1.err"
  echo $? > "out/$1.rc"
  (exec 3< "/proc/$2/mem") 2>> "out/$1.err"
  echo $? > "out/$1.mem.rc"
done
for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; done > out/all.environ 2> /dev/null
echo done > out/finished
"#;

/// Waits (up to the deadline) for the launcher of the probe command (not one of
/// claw-tui's own helpers, such as the checkpoints' `git`, which runs under the same
/// launcher), with `parent` as parent; returns its pid.
fn find_process(needle: &str, parent: u32) -> u32 {
    let what = format!("no process {needle:?} running the probe under {parent}");
    crate::support::poll::until(&what, DEADLINE, || {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            let cmdline = String::from_utf8_lossy(&cmdline);
            if ppid == Some(parent) && cmdline.contains(needle) && cmdline.contains("probe.sh") {
                return Some(pid);
            }
        }
        None
    })
}

fn assert_no_canary(text: &str, what: &str) {
    for (name, value) in CANARIES {
        assert!(!text.contains(value), "{what} holds {name}: {text}");
    }
}

fn wait_with_deadline(child: &mut Child) -> std::process::ExitStatus {
    let give_up = Instant::now() + DEADLINE;
    crate::support::poll::until("claw-tui did not finish", DEADLINE * 2, || {
        let status = child.try_wait().unwrap();
        if status.is_none() && Instant::now() > give_up {
            // Nothing of this test is left running when it fails.
            let _ = child.kill();
            panic!("claw-tui did not finish");
        }
        status
    })
}

/// Runs the probe with `settings` added to `[exec]`; `pid_namespace` says whether the
/// command gets one (then the launcher has a child of its own, the namespace's init).
fn probe_run(settings: &str, pid_namespace: bool) {
    let sb = Sandbox::new();
    sb.write_config(&format!(
        "[exec]\npass_env = [\"{}\"]\nscrub_env = [\"corp_*\"]\n{settings}\n",
        PASSED.0
    ));
    let ws = sb.workspace();
    // Another claw-tui with the same secrets, idle in RPC mode.
    let mut sibling = with_secrets(sb.command())
        .args(["--provider", "demo", "--mode", "rpc", "--no-session"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::fs::write(
        ws.join("probe.sh"),
        format!("SIBLING={}\n{PROBE}", sibling.id()),
    )
    .unwrap();
    nix::unistd::mkfifo(&ws.join("gate"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut main = with_secrets(sb.command())
        .args([
            "--provider",
            "demo",
            "--no-session",
            "-p",
            "run . ./probe.sh",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // From outside, while the probe waits: the launcher (and its children) carry none
    // of the secrets in their own environment, which a command could read.
    let launcher = find_process("__sandbox-exec", main.id());
    let mut chain = vec![launcher];
    if pid_namespace {
        chain.push(find_process("__sandbox-exec", launcher));
    }
    for pid in &chain {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        let environ = String::from_utf8_lossy(&environ);
        assert_no_canary(&environ, "the launcher's environment");
        assert!(environ.contains(&format!("{}={}", PASSED.0, PASSED.1)));
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        assert_no_canary(&String::from_utf8_lossy(&cmdline), "the launcher's cmdline");
    }
    let main_pid = main.id();
    std::thread::spawn(move || {
        let mut gate = std::fs::OpenOptions::new()
            .write(true)
            .open(ws.join("gate"))
            .unwrap();
        writeln!(gate, "{main_pid}").unwrap();
    });
    let status = wait_with_deadline(&mut main);
    let _ = sibling.kill();
    let _ = sibling.wait();
    let mut stderr = String::new();
    std::io::Read::read_to_string(main.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    let out = sb.workspace().join("out");
    assert!(
        out.join("finished").exists(),
        "the probe did not finish: {stderr}"
    );

    let env = read_text(&out.join("env"));
    assert_no_canary(&env, "the command's environment");
    assert!(env.contains(&format!("{}={}", PASSED.0, PASSED.1)), "{env}");
    assert!(env.contains("TMPDIR="), "{env}");
    assert_no_canary(&read_text(&out.join("all.environ")), "some /proc/*/environ");
    for who in ["parent", "main", "sibling"] {
        let environ = read_text(&out.join(format!("{who}.environ")));
        let err = read_text(&out.join(format!("{who}.err")));
        eprintln!(
            "{settings:?}: {who}: environ rc {}, mem rc {}: {}",
            read_text(&out.join(format!("{who}.rc"))).trim(),
            read_text(&out.join(format!("{who}.mem.rc"))).trim(),
            err.trim().replace('\n', " | ")
        );
        assert_no_canary(&environ, &format!("/proc of the {who}"));
        assert_ne!(
            read_text(&out.join(format!("{who}.mem.rc"))).trim(),
            "0",
            "{who}: mem opened"
        );
    }
    for who in ["main", "sibling"] {
        // Not readable at all: refused, or not even visible.
        assert_ne!(
            read_text(&out.join(format!("{who}.rc"))).trim(),
            "0",
            "{who}'s environ was read"
        );
    }
}

#[test]
fn secrets_never_reach_a_command_in_its_pid_namespace() {
    probe_run("", true);
}

#[test]
fn secrets_never_reach_a_command_without_a_pid_namespace() {
    probe_run("pid_namespace = false", false);
}

#[test]
fn secrets_never_reach_a_command_with_the_sandbox_off() {
    // No Landlock, no namespaces: the scrubbed environment, the dropped capabilities and
    // the non-dumpable claw-tui still stand in the way.
    probe_run("sandbox = \"off\"", false);
}
