//! What `-p` does with stdin when a prompt is given too: a pipe or a file is read and
//! follows the prompt as context; a device (`/dev/null`, a terminal) is not read; too
//! much or not text is refused with the reason. And a `--config` that names no file is
//! an error, not a run on defaults.

use crate::support::bin::{Sandbox, run};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `cmd` with `input` written to its stdin through a pipe that is then closed.
fn run_piped(mut cmd: Command, input: &[u8]) -> (i32, String, String) {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The binary may refuse before reading it all: a broken pipe is its answer.
    let _ = stdin.write_all(input);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The session file's text (one session expected).
fn session_text(sb: &Sandbox) -> String {
    let files = sb.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).unwrap()
}

#[test]
fn a_pipe_or_a_file_on_stdin_follows_the_prompt_as_context() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, out, stderr) = run_piped(cmd, b"the secret word is pineapple\n");
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("offline demo model"), "{out}");
    let text = session_text(&sb);
    assert!(
        text.contains(r#"hello\n\n<stdin>\nthe secret word is pineapple\n</stdin>"#),
        "{text}"
    );

    // A file redirected to stdin, without a final newline.
    let sb = Sandbox::new();
    let input = sb.dir.path().join("input.txt");
    std::fs::write(&input, "line one\nline two").unwrap();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"])
        .stdin(std::fs::File::open(&input).unwrap());
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(session_text(&sb).contains(r#"hello\n\n<stdin>\nline one\nline two\n</stdin>"#));
}

#[test]
fn no_stdin_an_empty_pipe_and_a_device_leave_the_prompt_alone() {
    // /dev/null (the sandbox's default stdin) is a device: not read.
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(!session_text(&sb).contains("<stdin>"));
    // An empty pipe adds nothing.
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, _, stderr) = run_piped(cmd, b"");
    assert_eq!(code, 0, "{stderr}");
    assert!(!session_text(&sb).contains("<stdin>"));
}

#[test]
fn too_much_or_binary_stdin_is_refused_and_nothing_is_sent() {
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.args(["-p", "summarize this"]);
    let (code, out, stderr) = run_piped(cmd, &vec![b'x'; 5 << 20]);
    assert_eq!(code, 2, "{stderr}");
    assert!(out.is_empty(), "{out}");
    assert!(stderr.contains("stdin holds more than 4 MiB"), "{stderr}");
    assert!(sb.session_files().is_empty(), "no run was started");

    let mut cmd = sb.command();
    cmd.args(["-p", "summarize this"]);
    let (code, _, stderr) = run_piped(cmd, b"\xff\xfe binary");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not UTF-8 text"), "{stderr}");
}

#[test]
fn a_config_file_that_does_not_exist_is_an_error_naming_it() {
    let sb = Sandbox::new();
    let missing = sb.dir.path().join("config/typo.toml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_claw-tui"));
    cmd.arg("--config")
        .arg(&missing)
        .arg("--workspace")
        .arg(sb.workspace())
        .args(["-p", "hello"])
        .stdin(Stdio::null());
    sb.isolate(&mut cmd);
    let (code, out, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(out.is_empty(), "{out}");
    assert!(
        stderr.contains(&format!("config file {} does not exist", missing.display())),
        "{stderr}"
    );
    assert!(sb.session_files().is_empty(), "nothing ran on defaults");
}
