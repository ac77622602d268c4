#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! A process a command leaves in the background changes protected paths after the
//! command's check: a scripted model through the real binary plants git configuration
//! from the background, and claw-tui exits while it still runs. The test then reads
//! the file system and the process table: nothing planted may stay, and nothing of the
//! command may outlive claw-tui.

use crate::support::bin::Sandbox;
use crate::support::hostile::{after, exec, quarantined, run_hostile, say};
use std::path::Path;

/// Processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// What git would run from `ws`'s repository: fsmonitor and hooks in its config or
/// hooks directory.
fn planted(ws: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(config) = std::fs::read_to_string(ws.join(".git/config")) {
        for line in config
            .lines()
            .filter(|l| l.contains("fsmonitor") || l.contains("mark"))
        {
            found.push(format!("config: {line}"));
        }
    }
    if let Ok(hooks) = std::fs::read_dir(ws.join(".git/hooks")) {
        for hook in hooks.flatten() {
            let name = hook.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".sample") {
                found.push(format!("hook: {name}"));
            }
        }
    }
    if ws.join(".git/commondir").exists() {
        found.push("commondir".into());
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_repository_changed_from_the_background_does_not_stay() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    // A plain `git init` (accepted), then, two seconds later, from the background:
    // fsmonitor and a hook; the next turn takes four seconds, then claw-tui exits.
    let plant = "git init -q && echo init-ok; (sleep 2; git config core.fsmonitor 'touch mark'; \
                 printf '#!/bin/sh\\ntouch mark\\n' > .git/hooks/post-checkout; \
                 chmod +x .git/hooks/post-checkout; sleep 987651) > /dev/null 2>&1 &";
    let run = run_hostile(
        &sb,
        vec![exec(plant, Some(600)), exec("sleep 4", Some(20))],
        "",
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results().join("\n---\n");
    assert!(results.contains("init-ok"), "{results}");
    assert_eq!(planted(&ws), Vec::<String>::new(), "{results}");
    assert_eq!(quarantined(&ws, ".git").len(), 1, "{results}");
    assert_eq!(processes_with("987651"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_background_plants_up_to_the_exit_does_not_stay() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    // Re-made and re-planted without pause until the command's processes are killed:
    // whatever the last check finds, it must come after the last write.
    let plant = "(while :; do git init -q; git config core.fsmonitor 'touch mark'; \
                 rm -rf .git.quarantined-*; done; sleep 987652) > /dev/null 2>&1 & \
                 sleep 1; echo planting";
    let run = run_hostile(&sb, vec![exec(plant, Some(600))], "").await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results().join("\n---\n");
    assert!(results.contains("planting"), "{results}");
    assert_eq!(
        planted(&ws),
        Vec::<String>::new(),
        "{results}\n{}",
        run.stderr
    );
    assert_eq!(processes_with("987652"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn commondir_written_from_the_background_into_a_repository_does_not_stay() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.join(".git/refs/heads")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    let plant = "mkdir evil && cp -r .git/. evil/ && git --git-dir=evil config core.fsmonitor \
                 'touch mark'; (sleep 1; echo ../evil > .git/commondir; sleep 987653) \
                 > /dev/null 2>&1 & echo started";
    // The model then thinks for four seconds, running nothing, and is done.
    let run = run_hostile(
        &sb,
        vec![exec(plant, Some(600)), after(4, say("Done."))],
        "",
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let results = run.results().join("\n---\n");
    assert!(results.contains("started"), "{results}");
    assert_eq!(planted(&ws), Vec::<String>::new(), "{results}");
    assert_eq!(
        quarantined(&ws.join(".git"), "commondir").len(),
        1,
        "{results}"
    );
    assert_eq!(processes_with("987653"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_dropped_while_its_command_runs_is_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let tool = crate::support::exec::tool(&ws);
    let command = "git init -q && git config core.fsmonitor 'touch mark' && touch planted \
                   && sleep 987654";
    let call = claw_tui::agent::Tool::execute(
        &tool,
        "call",
        crate::support::checked(
            &tool,
            serde_json::json!({ "command": command, "timeout": 600 }),
        ),
        tokio_util::sync::CancellationToken::new(),
        claw_tui::agent::ToolUpdates::discard(),
    );
    // The call is abandoned (its future dropped) once the command has planted.
    let marker = ws.join("planted");
    {
        tokio::pin!(call);
        let planted_now = crate::support::poll::until_async(
            "the command never planted",
            crate::support::exec::DEADLINE,
            || marker.exists().then_some(()),
        );
        tokio::select! {
            _ = &mut call => panic!("the command ended on its own"),
            () = planted_now => {}
        }
    }
    crate::support::poll::until_async(
        "the dropped call's repository was moved aside",
        crate::support::exec::DEADLINE,
        || (planted(&ws).is_empty() && quarantined(&ws, ".git").len() == 1).then_some(()),
    )
    .await;
    assert_eq!(processes_with("987654"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_signal_stops_the_commands_before_the_last_check() {
    use crate::support::fake_llm::FakeLlm;
    let sb = Sandbox::new();
    let ws = sb.workspace();
    // Planting without pause while the model "thinks" for a minute; SIGTERM comes first.
    let plant = "(while :; do git init -q; git config core.fsmonitor 'touch mark'; \
                 rm -rf .git.quarantined-*; done; sleep 987655) > /dev/null 2>&1 & \
                 sleep 0.5; echo planting";
    let server = FakeLlm::start(vec![exec(plant, Some(600)), after(60, say("Done."))]).await;
    sb.write_config(&format!(
        "provider = \"local\"\n\n[providers.local]\napi = \"openai\"\n\
         base_url = \"{}/v1\"\nmodel = \"hostile\"\n",
        server.url()
    ));
    let mut cmd = sb.command();
    cmd.args(["--no-session", "-p", "--yes", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    server.until_requests(2).await;
    // The call's own check is past; the loop plants again.
    crate::support::poll::until_async(
        "the background loop planted again",
        crate::support::exec::DEADLINE,
        || (!planted(&ws).is_empty()).then_some(()),
    )
    .await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert_eq!(planted(&ws), Vec::<String>::new(), "{stderr}");
    assert_eq!(processes_with("987655"), Vec::<String>::new(), "{stderr}");
}
