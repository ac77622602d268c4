#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! A hook runs a workspace script the user trusted; a scripted model leaves a process
//! in the background that swaps the script's directory with one of its own
//! (`renameat2(RENAME_EXCHANGE)` in a loop) while its next calls make the hook run
//! again and again. The hook must only ever run the trusted content: the test reads
//! what the scripts wrote, and the directories on disk.

use crate::support::bin::Sandbox;
use crate::support::hostile::{calls, exec, run_hostile};
use claw_tui::trust::TrustStore;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::Path;

/// A background loop exchanging `scripts` and `s_evil` every millisecond until it is
/// killed (perl's `syscall`: renameat2 is number 316 on x86_64, 276 on aarch64); it says
/// at once whether the first exchange went through. The pause keeps the race even on a
/// loaded machine: a loop that never pauses can starve the checks, so that every one of
/// them reads the swapped script and no hook runs at all, which proves nothing.
const SWAP: &str = r#"(perl -e '$| = 1; my ($a, $b) = ("scripts", "s_evil"); my $nr = `uname -m` =~ /aarch64/ ? 276 : 316; for (my $n = 0; ; $n++) { if (syscall($nr, -100, $a, -100, $b, 2) != 0) { print "refused: $!\n"; exit } print "swaps\n" if $n == 0; select(undef, undef, undef, 0.001) }' > swaplog 2>&1 &) ; sleep 0.2; echo started"#;

fn script(log: &Path, what: &str) -> String {
    format!("#!/bin/sh\necho {what} >> '{}'\nexit 0\n", log.display())
}

async fn hook_race(config: &str) -> (String, String, String) {
    let sb = Sandbox::new();
    let ws = sb.workspace().canonicalize().unwrap();
    let log = sb.dir.path().join("hook.log");
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    let trusted = script(&log, "trusted");
    std::fs::write(ws.join("scripts/check.sh"), &trusted).unwrap();
    std::fs::write(ws.join("README"), "read me\n").unwrap();
    let hash: String = Sha256::digest(trusted.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    TrustStore::new(&sb.dir.path().join("data/claw-tui"))
        .update(&ws, |w| {
            w.files.insert(ws.join("scripts/check.sh"), hash);
        })
        .unwrap();
    let reads = calls(&[
        ("read_file", json!({"path": "README"})),
        ("read_file", json!({"path": "README"})),
        ("read_file", json!({"path": "README"})),
    ]);
    let mut turns = vec![
        calls(&[(
            "write_file",
            json!({"path": "s_evil/check.sh", "content": script(&log, "EVIL")}),
        )]),
        exec(SWAP, Some(60)),
    ];
    turns.extend(std::iter::repeat_n(reads, 12));
    let config = format!(
        "{config}\n[[hooks.before_tool]]\nmatch = \"^read_file$\"\ncommand = \"sh scripts/check.sh\"\n"
    );
    let run = run_hostile(&sb, turns, &config).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    let swaps = std::fs::read_to_string(ws.join("swaplog")).unwrap_or_default();
    assert!(
        !ran.contains("EVIL"),
        "the hook ran the model's script: {ran}\n{swaps}"
    );
    assert!(
        ran.contains("trusted"),
        "the trusted hook never ran: {}",
        run.stderr
    );
    let current = std::fs::read_to_string(ws.join("scripts/check.sh")).unwrap();
    (ran, swaps, current)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_directories_of_a_hook_script_cannot_be_swapped() {
    let (_, swaps, current) = hook_race("").await;
    if !crate::support::exec::pid_namespaces_available().unwrap_or(false) {
        eprintln!("no mount namespace here: the directories are not pinned");
        return;
    }
    assert!(swaps.starts_with("refused"), "{swaps}");
    assert!(current.contains("trusted"), "{current}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hook_runs_the_bytes_that_were_checked_even_while_its_directory_is_swapped() {
    // Without namespaces nothing is pinned and the swaps go through: what keeps the hook
    // to the trusted content is that it runs a copy of the bytes the check read.
    let (_, swaps, _) = hook_race("[exec]\npid_namespace = false\n").await;
    assert!(swaps.starts_with("swaps"), "{swaps}");
}
