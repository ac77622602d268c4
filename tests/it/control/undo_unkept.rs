//! Checkpoints that cannot be kept: on a nearly full data dir, the content a 3 MB file
//! held before `write_file` replaces it does not fit in the store. The tool says so
//! before it changes the file (or, with `[session] checkpoint_failure = "refuse"`,
//! leaves it unchanged), and `/undo` names the file it cannot restore. A deleted
//! checkpoint index is named as missing, not taken for a session that changed nothing.

use crate::support::Reply;
use crate::support::control::Rig;
use crate::support::reading::tool_ends;
use crate::support::tmpfs::Tmpfs;
use crate::support::tui::scene::{Clock, answer, call, end_with, run_start, screen, start};
use claw_tui::agent::{AgentEvent, StopReason};
use claw_tui::checkpoint::{CheckpointError, Conflicts, UndoOutcome};
use claw_tui::session::SessionWriter;
use serde_json::json;

/// The 3 MB file the turn replaces.
fn big() -> Vec<u8> {
    (0..3_000_000u32).map(|i| (i % 251) as u8).collect()
}

/// A rig whose data dir (sessions and their checkpoint stores) is a 1 MiB tmpfs: a
/// session fits, the 3 MB content does not. `None` where no tmpfs can be mounted.
fn rig_on_small_disk(config: &str) -> Option<(Rig, Tmpfs)> {
    let mut disk = None;
    let replies = vec![
        Reply::tool_calls(&[(
            "w1",
            "write_file",
            json!({"path": "big.bin", "content": "small now\n"}),
        )]),
        Reply::text(&["done"]),
    ];
    let rig = Rig::start_tuned(
        config,
        &[],
        replies,
        claw_tui::tools::exec::Approver::Nobody,
        |settings, _| disk = Tmpfs::mount(&settings.data_dir, 1 << 20),
    );
    let disk = disk?;
    let rig = rig.with_session();
    std::fs::write(rig.file("big.bin"), big()).unwrap();
    Some((rig, disk))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_whose_earlier_content_cannot_be_kept_says_so_and_undo_names_it() {
    let Some((mut rig, disk)) = rig_on_small_disk("") else {
        return;
    };
    let events = rig.prompt("shrink big.bin").await;
    let ends = tool_ends(&events);
    let (_, text, is_error) = &ends[0];
    assert!(!is_error, "{text}");
    assert!(
        text.contains("big.bin")
            && text.contains("cannot be undone")
            && text.contains("No space left on device"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.file("big.bin")).unwrap(),
        "small now\n"
    );
    // The client's card of the call says it too, below its header.
    let shown = card_of_the_call(&events);
    assert!(
        shown.contains("✓ write_file big.bin") && shown.contains("cannot be undone"),
        "{shown}"
    );

    let UndoOutcome::Done(report) = rig.main.controls.checkpoints.undo(Conflicts::Ask).unwrap()
    else {
        panic!("undo asked to confirm")
    };
    assert_eq!(report.turns, ["shrink big.bin"]);
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert!(
        report.failed[0].starts_with("big.bin:")
            && report.failed[0].contains("No space left on device"),
        "{report:?}"
    );
    let message = report.message();
    assert!(message.contains("Could not restore: big.bin"), "{message}");
    rig.close_session().await;
    drop(disk);
}

/// The chat as the client shows the run's tool call, from the run's own events.
fn card_of_the_call(events: &[AgentEvent]) -> String {
    let mut app = crate::support::tui::app();
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "shrink big.bin");
    let args = json!({"path": "big.bin", "content": "small now\n"});
    answer(
        &clock,
        &mut app,
        10,
        vec![call("w1", "write_file", args.clone())],
        StopReason::ToolUse,
    );
    start(&clock, &mut app, 20, "w1", "write_file", args);
    let result = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.clone()),
            _ => None,
        })
        .unwrap();
    end_with(&clock, &mut app, 30, "w1", "write_file", result);
    screen(&mut app).join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn with_refuse_the_file_is_left_unchanged() {
    let Some((mut rig, disk)) = rig_on_small_disk("[session]\ncheckpoint_failure = \"refuse\"\n")
    else {
        return;
    };
    let events = rig.prompt("shrink big.bin").await;
    let ends = tool_ends(&events);
    let (_, text, is_error) = &ends[0];
    assert!(is_error, "{text}");
    assert!(
        text.contains("big.bin")
            && text.contains("not written")
            && text.contains("No space left on device"),
        "{text}"
    );
    assert_eq!(std::fs::read(rig.file("big.bin")).unwrap(), big());
    rig.close_session().await;
    drop(disk);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_checkpoint_index_is_named_as_missing() {
    let replies = vec![
        Reply::tool_calls(&[(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "changed\n"}),
        )]),
        Reply::text(&["done"]),
    ];
    let mut rig = Rig::start("", &[], replies).with_session();
    std::fs::write(rig.file("a.txt"), "original\n").unwrap();
    rig.prompt("change a.txt").await;
    rig.close_session().await;
    let session = rig.session.clone().unwrap();
    let store = claw_tui::checkpoint::store::store_dir(&session);
    std::fs::remove_file(store.join("index.jsonl")).unwrap();

    // The session opened again, as the next process would.
    let (writer, data) = SessionWriter::resume_file(&session).unwrap();
    rig.main
        .session_binding(&rig.settings)
        .enter(&writer, Some(&data));
    let error = rig
        .main
        .controls
        .checkpoints
        .undo(Conflicts::Ask)
        .unwrap_err();
    assert!(
        matches!(error, CheckpointError::IndexMissing { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("index.jsonl") && message.contains("missing"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.file("a.txt")).unwrap(),
        "changed\n"
    );
    writer.close().await;
}
