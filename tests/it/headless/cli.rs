//! The command line itself: completion scripts that a real shell loads and completes
//! with, and a mistyped subcommand refused with a suggestion instead of being sent to
//! the model as a prompt.

use crate::support::bin::{Sandbox, run};

#[test]
fn the_bash_completion_script_completes_subcommands_and_flags_in_bash() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["completions", "bash"]);
    let (code, script, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let path = sb.dir.path().join("claw-tui.bash");
    std::fs::write(&path, script).unwrap();
    // Bash loads the script and asks its completion function, as Tab would.
    let probe = format!(
        "source {}; complete -p claw-tui >/dev/null || exit 3; \
         COMP_WORDS=(claw-tui se); COMP_CWORD=1; COMP_LINE='claw-tui se'; COMP_POINT=11; \
         _claw__tui claw-tui se claw-tui; printf '%s\\n' \"${{COMPREPLY[@]}}\"; \
         COMP_WORDS=(claw-tui --con); COMP_CWORD=1; \
         _claw__tui claw-tui --con claw-tui; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<&str> = words.lines().collect();
    assert!(
        words.contains(&"sessions") && words.contains(&"serve"),
        "{words:?}"
    );
    assert!(
        words.contains(&"--continue") && words.contains(&"--config"),
        "{words:?}"
    );
}

#[test]
fn every_shell_clap_knows_gets_a_script_and_others_are_refused() {
    let sb = Sandbox::new();
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let mut cmd = sb.command();
        cmd.args(["completions", shell]);
        let (code, script, stderr) = run(cmd);
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(
            script.contains("claw-tui") && script.contains("sessions"),
            "{shell}"
        );
    }
    let mut cmd = sb.command();
    cmd.args(["completions", "tcsh"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("possible values: bash"), "{stderr}");
}

#[test]
fn a_mistyped_subcommand_is_refused_with_the_command_meant() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["--provider", "demo", "sesions"]);
    let (code, out, stderr) = run(cmd);
    assert_eq!(code, 2, "{out}");
    assert!(
        stderr.contains("'sesions' is not a command; did you mean 'claw-tui sessions'?"),
        "{stderr}"
    );
    // Nothing was sent to the model: no session was recorded.
    assert!(sb.session_files().is_empty());
    // With another word it is a prompt.
    let mut cmd = sb.command();
    cmd.args(["--provider", "demo", "-p", "sesions please"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(sb.session_files().len(), 1);
}

#[test]
fn the_version_names_the_commit_built() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.arg("--version");
    let (code, out, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let commit = head.unwrap_or_else(|| "unknown commit".to_owned());
    assert_eq!(
        out.trim(),
        format!("claw-tui {} ({commit})", env!("CARGO_PKG_VERSION"))
    );
}
