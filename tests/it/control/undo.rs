//! Checkpoints, undo and rewind through the real runtime: a turn that edits two files
//! and creates one is undone (both restored, the new one removed, the store private and
//! beside the session file); a file changed afterwards by the user is listed and left
//! unless confirmed; the conversation alone is rewound (the model's history and the
//! session file go back, the files stay); commands are reported with what `git status`
//! shows they changed; `/diff` compares with the content before the first change; and a
//! conversation rewind keeps a compaction of what stays and drops one of what goes, in
//! memory and in the session file.

use crate::support::Reply;
use crate::support::control::Rig;
use crate::support::reading::user_contents;
use crate::support::runs::user_texts;
use claw_tui::agent::Message;
use claw_tui::checkpoint::{Conflicts, UndoOutcome, UndoReport};
use claw_tui::tools::fs::ChangeKind;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A turn that edits `a.txt`, overwrites `b.txt` and creates `c.txt`.
fn three_changes() -> Vec<Reply> {
    vec![
        Reply::tool_calls(&[
            (
                "c1",
                "edit_file",
                json!({"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
            ),
            (
                "c2",
                "write_file",
                json!({"path": "b.txt", "content": "bravo, replaced\n"}),
            ),
            (
                "c3",
                "write_file",
                json!({"path": "docs/c.txt", "content": "charlie\n"}),
            ),
        ]),
        Reply::text(&["done"]),
    ]
}

fn seed(rig: &Rig) {
    std::fs::write(rig.file("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(rig.file("b.txt"), "bravo\n").unwrap();
}

fn read(rig: &Rig, name: &str) -> String {
    std::fs::read_to_string(rig.file(name)).unwrap()
}

fn done(outcome: UndoOutcome) -> UndoReport {
    match outcome {
        UndoOutcome::Done(report) => report,
        UndoOutcome::Confirm(q) => panic!("asked to confirm: {q:?}"),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_restores_the_edited_files_and_removes_the_new_one() {
    let mut rig = Rig::start("", &[], three_changes()).with_session();
    seed(&rig);
    rig.prompt("change three files").await;
    assert_eq!(read(&rig, "a.txt"), "ALPHA\nbeta\n");
    assert_eq!(read(&rig, "docs/c.txt"), "charlie\n");

    let report = done(rig.main.controls.checkpoints.undo(Conflicts::Ask).unwrap());
    assert_eq!(read(&rig, "a.txt"), "alpha\nbeta\n");
    assert_eq!(read(&rig, "b.txt"), "bravo\n");
    assert!(!rig.file("docs/c.txt").exists());
    assert_eq!(report.turns, ["change three files"]);
    assert_eq!(report.restored, ["a.txt", "b.txt"]);
    assert_eq!(report.removed, ["docs/c.txt"]);
    let message = report.message();
    assert!(
        message.contains("Restored a.txt, b.txt.") && message.contains("Removed docs/c.txt"),
        "{message}"
    );

    // The store is beside the session file, private, each content stored once.
    let session = rig.session.clone().unwrap();
    let store = claw_tui::checkpoint::store::store_dir(&session);
    assert_eq!(store.parent(), session.parent());
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(&store.join("index.jsonl")), 0o600);
    let blobs: Vec<_> = std::fs::read_dir(store.join("blobs")).unwrap().collect();
    assert_eq!(blobs.len(), 2, "a.txt and b.txt before the turn");
    for blob in blobs {
        assert_eq!(mode(&blob.unwrap().path()), 0o600);
    }

    // Nothing is left to undo.
    let again = done(rig.main.controls.checkpoints.undo(Conflicts::Ask).unwrap());
    assert!(again.turns.is_empty());
    assert!(again.message().starts_with("Nothing to undo"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_changed_since_by_the_user_is_listed_and_skipped_unless_confirmed() {
    let mut rig = Rig::start("", &[], three_changes());
    seed(&rig);
    rig.prompt("change three files").await;
    std::fs::write(rig.file("b.txt"), "the user's own edit\n").unwrap();

    let checkpoints = rig.main.controls.checkpoints.clone();
    let UndoOutcome::Confirm(question) = checkpoints.undo(Conflicts::Ask).unwrap() else {
        panic!("undo did not ask")
    };
    assert_eq!(question.changed, ["b.txt"]);
    assert_eq!(question.clean, ["a.txt", "docs/c.txt"]);
    assert_eq!(read(&rig, "a.txt"), "ALPHA\nbeta\n", "nothing was done yet");

    let report = done(checkpoints.undo(Conflicts::Skip).unwrap());
    assert_eq!(report.skipped, ["b.txt"]);
    assert_eq!(read(&rig, "b.txt"), "the user's own edit\n");
    assert_eq!(read(&rig, "a.txt"), "alpha\nbeta\n");
    assert!(!rig.file("docs/c.txt").exists());
    assert!(
        report
            .message()
            .contains("Left as they are (changed since by something else): b.txt")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn confirming_overwrites_the_changed_file_too() {
    let mut rig = Rig::start("", &[], three_changes());
    seed(&rig);
    rig.prompt("change three files").await;
    std::fs::write(rig.file("b.txt"), "the user's own edit\n").unwrap();
    let report = done(
        rig.main
            .controls
            .checkpoints
            .undo(Conflicts::Overwrite)
            .unwrap(),
    );
    assert_eq!(report.overwritten, ["b.txt"]);
    assert_eq!(read(&rig, "b.txt"), "bravo\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn rewinding_the_conversation_only_keeps_the_files_and_cuts_the_history() {
    let replies = vec![
        Reply::tool_calls(&[(
            "c1",
            "write_file",
            json!({"path": "one.txt", "content": "1\n"}),
        )]),
        Reply::text(&["wrote one"]),
        Reply::tool_calls(&[(
            "c2",
            "write_file",
            json!({"path": "two.txt", "content": "2\n"}),
        )]),
        Reply::text(&["wrote two"]),
        Reply::text(&["fresh answer"]),
    ];
    let mut rig = Rig::start("", &[], replies).with_session();
    rig.prompt("first").await;
    rig.prompt("second").await;
    let checkpoints = rig.main.controls.checkpoints.clone();
    assert_eq!(checkpoints.prompts(), ["first", "second"]);

    let rewound = checkpoints.rewind_conversation(2).unwrap();
    assert_eq!(rewound.prompt, "second");
    assert!(rig.file("two.txt").exists(), "files stay");
    let history = rig.main.agent.state().messages.clone();
    assert_eq!(history.len(), 4, "{history:#?}");
    assert!(matches!(&history[0], Message::User(u) if u.content == "first"));
    assert_eq!(*history, *rewound.messages);

    // The model's history went back: the next request no longer has "second".
    rig.prompt("second, again").await;
    let last = rig.provider.requests().last().cloned().unwrap();
    assert_eq!(user_texts(&last), ["first", "second, again"]);

    // And so does the session file, read back.
    let data = rig.close_session().await;
    let prompts = user_contents(&data.messages);
    assert_eq!(prompts, ["first", "second, again"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn rewinding_files_puts_back_everything_changed_since_that_prompt() {
    let replies = vec![
        Reply::tool_calls(&[(
            "c1",
            "write_file",
            json!({"path": "f.txt", "content": "v1\n"}),
        )]),
        Reply::text(&["v1"]),
        Reply::tool_calls(&[(
            "c2",
            "write_file",
            json!({"path": "f.txt", "content": "v2\n"}),
        )]),
        Reply::text(&["v2"]),
        Reply::tool_calls(&[(
            "c3",
            "write_file",
            json!({"path": "g.txt", "content": "g\n"}),
        )]),
        Reply::text(&["g"]),
    ];
    let mut rig = Rig::start("", &[], replies);
    for prompt in ["make v1", "make v2", "add g"] {
        rig.prompt(prompt).await;
    }
    let report = done(
        rig.main
            .controls
            .checkpoints
            .rewind_files(2, Conflicts::Ask)
            .unwrap(),
    );
    assert_eq!(read(&rig, "f.txt"), "v1\n");
    assert!(!rig.file("g.txt").exists());
    assert_eq!(report.turns, ["make v2", "add g"]);
    assert_eq!(rig.main.agent.state().messages.len(), 12, "the chat stays");
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_says_exec_changes_stay_and_names_what_git_status_shows_they_changed() {
    let replies = vec![
        Reply::tool_calls(&[
            (
                "c1",
                "write_file",
                json!({"path": "kept.txt", "content": "by the tool\n"}),
            ),
            (
                "c2",
                "exec",
                json!({"command": "echo generated > made-by-exec.txt && echo more >> tracked.txt"}),
            ),
        ]),
        Reply::text(&["done"]),
    ];
    let mut rig = Rig::start("", &[], replies);
    std::fs::write(rig.file("tracked.txt"), "committed\n").unwrap();
    std::fs::write(rig.file("dirty-before.txt"), "x\n").unwrap();
    git(rig.ws(), &["init", "-q"]);
    git(rig.ws(), &["add", "tracked.txt"]);
    git(rig.ws(), &["commit", "-qm", "start"]);
    rig.prompt("build it").await;
    assert!(rig.file("made-by-exec.txt").exists());

    let report = done(rig.main.controls.checkpoints.undo(Conflicts::Ask).unwrap());
    assert_eq!(report.removed, ["kept.txt"]);
    assert_eq!(report.exec.commands, 1);
    assert!(report.exec.git);
    assert_eq!(report.exec.changed, ["made-by-exec.txt", "tracked.txt"]);
    assert!(rig.file("made-by-exec.txt").exists(), "exec's changes stay");
    let message = report.message();
    assert!(
        message.contains("cannot be undone")
            && message.contains("git status shows they changed: made-by-exec.txt, tracked.txt"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_diff_compares_with_the_content_before_the_first_change() {
    let replies = vec![
        Reply::tool_calls(&[(
            "c1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "alpha", "new_text": "one"}),
        )]),
        Reply::text(&["1"]),
        Reply::tool_calls(&[(
            "c2",
            "edit_file",
            json!({"path": "a.txt", "old_text": "one", "new_text": "two"}),
        )]),
        Reply::text(&["2"]),
        Reply::tool_calls(&[(
            "c3",
            "write_file",
            json!({"path": "new.md", "content": "hi\n"}),
        )]),
        Reply::text(&["3"]),
    ];
    let mut rig = Rig::start("", &[], replies);
    seed(&rig);
    for prompt in ["one", "two", "three"] {
        rig.prompt(prompt).await;
    }
    std::fs::write(rig.file("new.md"), "hi\nedited by the user\n").unwrap();
    let files = rig.main.controls.checkpoints.session_diff().unwrap();
    let summary: Vec<_> = files
        .iter()
        .map(|f| {
            (
                f.change.path.as_str(),
                f.change.kind,
                f.change.added,
                f.change.removed,
                f.changed_outside,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("a.txt", ChangeKind::Edited, 1, 1, false),
            ("new.md", ChangeKind::Created, 2, 0, true),
        ]
    );
    let removed: Vec<&str> = files[0].change.hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind == claw_tui::tools::fs::LineKind::Removed)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(
        removed,
        ["alpha"],
        "against the content before the first change"
    );
}

fn compaction(history_len: usize, first_kept_message: usize) -> claw_tui::agent::Compaction {
    claw_tui::agent::Compaction {
        summary: "SUMMARY-OF-EARLIER-TALK".into(),
        first_kept_message,
        history_len,
        tokens_before: 1_000,
        tokens_after: 100,
        reason: claw_tui::agent::CompactionReason::Manual,
        usage: Default::default(),
        timestamp: 1,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_rewind_keeps_a_compaction_of_what_stays_and_drops_one_of_what_goes() {
    let replies = ["one", "two", "three", "again", "fresh"]
        .iter()
        .map(|t| Reply::text(&[t]))
        .collect();
    let mut rig = Rig::start("", &[], replies);
    for prompt in ["first", "second", "third"] {
        rig.prompt(prompt).await;
    }
    let agent = rig.main.agent.clone();
    let messages = agent.state().messages.to_vec();
    agent
        .restore_history(messages, Some(compaction(4, 2)))
        .unwrap();
    let checkpoints = rig.main.controls.checkpoints.clone();

    // Back to before "third": the four messages the summary covers stay, so does it.
    checkpoints.rewind_conversation(3).unwrap();
    assert_eq!(agent.state().compaction, Some(compaction(4, 2)));
    rig.prompt("third, again").await;
    let sent = rig.provider.requests().last().unwrap().messages.clone();
    assert!(format!("{sent:?}").contains("SUMMARY-OF-EARLIER-TALK"));

    // Back to before "second": the summary spoke of what is gone; the model no longer
    // gets it.
    checkpoints.rewind_conversation(2).unwrap();
    assert_eq!(agent.state().compaction, None);
    rig.prompt("second, again").await;
    let sent = rig.provider.requests().last().unwrap().messages.clone();
    assert!(!format!("{sent:?}").contains("SUMMARY-OF-EARLIER-TALK"));
    assert_eq!(
        user_texts(rig.provider.requests().last().unwrap()),
        ["first", "second, again"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_session_drops_a_compaction_a_rewind_cut_into_even_once_it_grows_again() {
    use claw_tui::session::{Entry, SessionWriter, load};
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let write = |rewind_to: usize| {
        let writer = SessionWriter::create(data.path(), ws.path(), "test", "m").unwrap();
        let message = |i: usize| Entry::Message {
            timestamp: i as u64 + 10,
            message: Message::user(format!("m{i}")),
        };
        for i in 0..6 {
            writer.append(&message(i));
        }
        writer.append(&Entry::Compaction(compaction(4, 2)));
        writer.append(&Entry::Rewind {
            timestamp: 20,
            messages: rewind_to,
        });
        for i in rewind_to..8 {
            writer.append(&message(i + 100));
        }
        let path = writer.path().to_path_buf();
        (writer, path)
    };
    for (rewind_to, kept) in [(2, false), (5, true)] {
        let (writer, path) = write(rewind_to);
        assert!(writer.close().await.is_saved());
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.messages.len(), 8, "rewound to {rewind_to}");
        assert_eq!(
            loaded.compaction().is_some(),
            kept,
            "rewound to {rewind_to}: {:?}",
            loaded.compaction()
        );
    }
}
