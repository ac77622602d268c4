//! Damaged sessions through the real binary: `-c` twice after a torn line (the original
//! loss), `-c` on a newest session with a bad line, `sessions` and `--session ID`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run, session_lines, session_roles};
use std::io::Write;
use std::path::Path;

const FRAGMENT: &str = r#"{"type":"message","timestamp":3,"message":{"role":"user","con"#;

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

fn run_args(sb: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut cmd = sb.command();
    cmd.args(args);
    run(cmd)
}

#[test]
fn continuing_twice_after_a_torn_line_keeps_the_session_whole() {
    let sb = Sandbox::new();
    assert_eq!(run_args(&sb, &["-p", "hello"]).0, 0);
    let file = sb.only_session();
    // A crash (or a full disk) while the last line was written.
    append(&file, FRAGMENT);

    let (code, _, stderr) = run_args(&sb, &["-c", "-p", "hello again"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("the last line was incomplete") && stderr.contains(".damaged"),
        "the user is told: {stderr}"
    );
    let damaged = std::fs::read_to_string(claw_tui::session::damaged_path(&file)).unwrap();
    assert!(
        damaged.contains(FRAGMENT),
        "the fragment's bytes are kept: {damaged}"
    );

    let (code, _, stderr) = run_args(&sb, &["-c", "-p", "and once more"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("no earlier session"), "{stderr}");
    assert!(
        !stderr.contains("damaged"),
        "the file is clean now: {stderr}"
    );
    assert_eq!(
        sb.session_files(),
        std::slice::from_ref(&file),
        "no new session replaced it"
    );
    assert_eq!(session_roles(&file), ["user", "assistant"].repeat(3));
    assert!(
        session_lines(&file).len() == std::fs::read_to_string(&file).unwrap().lines().count(),
        "every line of the file is readable"
    );

    let (code, stdout, _) = run_args(&sb, &["sessions"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("6 messages"), "{stdout}");
    let id = session_lines(&file)[0]["id"].as_str().unwrap().to_owned();
    let (code, _, stderr) = run_args(&sb, &["--session", &id[..10], "-p", "by id"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(session_roles(&file).len(), 8);
}

#[test]
fn continue_takes_the_newest_session_despite_a_bad_line_and_says_so() {
    let sb = Sandbox::new();
    assert_eq!(run_args(&sb, &["-p", "older"]).0, 0);
    assert_eq!(run_args(&sb, &["--no-session", "-p", "x"]).0, 0);
    let older = sb.only_session();
    // The newest: a session written later, with a line of a role this build does not know.
    assert_eq!(run_args(&sb, &["-p", "newer"]).0, 0);
    let newer = sb
        .session_files()
        .into_iter()
        .find(|f| *f != older)
        .unwrap();
    let text = std::fs::read_to_string(&newer).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let wizard = r#"{"type":"message","timestamp":1,"message":{"role":"wizard","content":"?"}}"#;
    lines.insert(3, wizard);
    std::fs::write(&newer, lines.join("\n") + "\n").unwrap();

    let (code, stdout, _) = run_args(&sb, &["sessions"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout.lines().next().unwrap().contains("newer") && stdout.contains("(1 damaged line)"),
        "{stdout}"
    );

    let (code, _, stderr) = run_args(&sb, &["-c", "-p", "which one?"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("skipped 1 damaged line"), "{stderr}");
    assert!(stderr.contains("wizard"), "the problem is named: {stderr}");
    assert_eq!(
        session_roles(&older),
        ["user", "assistant"],
        "the older is untouched"
    );
    assert_eq!(
        session_roles(&newer),
        ["user", "wizard", "assistant", "user", "assistant"],
        "the newest continued, its bad line kept as it was"
    );
}
