//! Hooks through the real binary (`claw-tui -p` on the demo model) and the README's two
//! worked examples, taken from the README itself: the `rm` guard blocks a command
//! outside `build/` (the directory survives), also when the model disguises it (`/bin/rm`,
//! `build/../src`, a second command, quoting), and lets one inside run; the formatter
//! formats what `write_file` wrote. And a hook's environment holds none of claw-tui's
//! secrets.

use crate::support::bin::{Sandbox, run};
use crate::support::control::Rig;
use crate::support::readme::block;
use crate::support::{Reply, sent_results};
use serde_json::{Value, json};
use std::path::Path;

/// Where the README keeps the hook scripts: the config dir's `hooks/`.
const README_HOOKS: &str = "${XDG_CONFIG_HOME:-$HOME/.config}/claw-tui/hooks";

/// Writes the README's script `name` into `dir`.
fn install(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(name),
        block("sh", &format!("claw-tui/hooks/{name}")),
    )
    .unwrap();
}

/// The README's config block for `name`, with the scripts in the rig's scripts dir
/// (the test process's own config dir is not the test's to write).
fn rig_config(name: &str) -> String {
    let config = block("toml", name);
    assert!(config.contains(README_HOOKS), "{config}");
    config.replace(README_HOOKS, "{scripts}")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_rm_guard_blocks_rm_outside_build_and_lets_it_run_inside() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    install(
        &sandbox.dir.path().join("config/claw-tui/hooks"),
        "no-rm.sh",
    );
    sandbox.write_config(&format!(
        "provider = \"demo\"\n\n{}",
        block("toml", "no-rm.sh")
    ));
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(ws.join("build/out.o"), "obj").unwrap();

    let mut cmd = sandbox.command();
    cmd.args(["-p", "run rm -rf src"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert!(ws.join("src/main.rs").exists(), "the guard kept src/");
    assert!(
        stderr.contains(
            "✗ exec rm -rf src — Blocked by a hook: rm outside build/ is not allowed (src)"
        ),
        "code {code}\nstdout: {stdout}\nstderr: {stderr}"
    );

    let mut cmd = sandbox.command();
    cmd.args(["-p", "run rm -f build/out.o"]);
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(!ws.join("build/out.o").exists(), "rm under build/ ran");
    assert!(stderr.contains("✓ exec rm -f build/out.o"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_rm_guard_holds_against_rm_in_disguise() {
    let disguised = [
        "rm -f build/out.o; rm -rf src",
        "/bin/rm -rf src",
        "rm -rf build/../src",
        "\\rm -rf src",
        "\"rm\" -rf src",
        "rm -rf 'src'",
        "rm -f build/out.o\nrm -rf src",
        "find src | xargs rm",
        "rm -rf -- src",
    ];
    let named: Vec<(String, Value)> = disguised
        .iter()
        .enumerate()
        .map(|(i, command)| (format!("c{i}"), json!({ "command": command })))
        .collect();
    let borrowed: Vec<(&str, &str, Value)> = named
        .iter()
        .map(|(id, args)| (id.as_str(), "exec", args.clone()))
        .collect();
    let mut rig = Rig::start(
        &rig_config("no-rm.sh"),
        &[],
        vec![Reply::tool_calls(&borrowed), Reply::text(&["tried"])],
    );
    install(rig.scripts.path(), "no-rm.sh");
    std::fs::create_dir_all(rig.file("src")).unwrap();
    std::fs::write(rig.file("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(rig.file("build")).unwrap();
    std::fs::write(rig.file("build/out.o"), "obj").unwrap();
    rig.prompt("clean up").await;
    assert!(rig.file("src/main.rs").exists(), "src/ was removed");
    assert!(rig.file("build/out.o").exists(), "no call ran at all");
    let sent = sent_results(&rig.provider.requests()[1]);
    assert_eq!(sent.len(), disguised.len());
    for (result, command) in sent.iter().zip(disguised) {
        assert!(
            result
                .content
                .starts_with("Blocked by a hook: rm outside build/ is not allowed"),
            "{command}: {}",
            result.content
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_formatter_formats_what_write_file_wrote_and_undo_still_restores() {
    let config = rig_config("format.sh");
    let messy = "fn main(){let x=1;println!(\"{}\",x);}\n";
    let mut rig = Rig::start(
        &config,
        &[],
        vec![
            Reply::tool_calls(&[
                (
                    "c1",
                    "write_file",
                    json!({"path": "src/main.rs", "content": messy}),
                ),
                // Refused by the tool (outside the workspace): the hook must not go
                // and format the file there.
                (
                    "c2",
                    "write_file",
                    json!({"path": "../outside.rs", "content": messy}),
                ),
            ]),
            Reply::text(&["written"]),
        ],
    );
    install(rig.scripts.path(), "format.sh");
    let outside = rig.ws().parent().unwrap().join("outside.rs");
    std::fs::write(&outside, messy).unwrap();
    rig.prompt("write main.rs").await;
    let written = std::fs::read_to_string(rig.file("src/main.rs")).unwrap();
    assert_eq!(
        written,
        "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), messy);
    // The formatted file is the turn's change, not someone else's: undo takes it back.
    let outcome = rig
        .main
        .controls
        .checkpoints
        .undo(claw_tui::checkpoint::Conflicts::Ask)
        .unwrap();
    let claw_tui::checkpoint::UndoOutcome::Done(report) = outcome else {
        panic!("undo asked about changes: {outcome:?}")
    };
    assert_eq!(report.removed, ["src/main.rs"]);
    assert!(!rig.file("src/main.rs").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hooks_environment_has_no_secrets_and_it_runs_in_the_workspace() {
    let sandbox = Sandbox::new();
    sandbox.write_config(
        "provider = \"demo\"\n\n[[hooks.before_tool]]\n\
         command = \"env > hook-env.txt; pwd > hook-pwd.txt\"\n",
    );
    let mut cmd = sandbox.command();
    cmd.args(["-p", "run echo hi"])
        .env("CANARY_API_KEY", "canary-value-api-key")
        .env("SERVICE_TOKEN", "canary-value-token")
        .env("AWS_SECRET_ACCESS_KEY", "canary-value-aws")
        .env("HOOK_VISIBLE", "plain-value");
    let (code, _, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
    assert_eq!(code, 0, "{stderr}");
    let ws = sandbox.workspace();
    let env = std::fs::read_to_string(ws.join("hook-env.txt")).unwrap();
    assert!(!env.contains("canary-value"), "{env}");
    assert!(env.contains("HOOK_VISIBLE=plain-value"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    let pwd = std::fs::read_to_string(ws.join("hook-pwd.txt")).unwrap();
    assert_eq!(
        Path::new(pwd.trim()).canonicalize().unwrap(),
        ws.canonicalize().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mistake_in_the_hooks_config_is_a_clear_error_and_nothing_runs() {
    for (entry, expected) in [
        (
            "[[hooks.before_tool]]\nmatch = \"(exec\"\ncommand = \"touch ran\"\n",
            "`match` is not a valid regular expression",
        ),
        (
            "[[hooks.before_tool]]\ncommand = \"touch ran\"\ntimeout_sec = 5\n",
            "unknown field `timeout_sec`",
        ),
        (
            "[[hooks.on_tool]]\ncommand = \"touch ran\"\n",
            "unknown field `on_tool`",
        ),
    ] {
        let sandbox = Sandbox::new();
        sandbox.write_config(&format!("provider = \"demo\"\n\n{entry}"));
        let mut cmd = sandbox.command();
        cmd.args(["-p", "run echo hi"]);
        let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run(cmd)).await.unwrap();
        assert_ne!(code, 0, "{entry}: {stdout}");
        assert!(stderr.contains(expected), "{entry}: {stderr}");
        assert!(stderr.contains("config.toml"), "names the file: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!sandbox.workspace().join("ran").exists());
    }
}
