//! A full disk: the first failed write is reported at once, no partial line stays in
//! the file, the run goes on, and what waits is written (in order) at the next turn
//! boundary once there is room. Through the real binary on a small tmpfs where one can
//! be mounted, and through a sink that fails like a full disk everywhere.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::DEADLINE;
use crate::support::bin::{Sandbox, run, session_lines, session_roles};
use crate::support::rpc::Rpc;
use crate::support::tmpfs::Tmpfs;
use claw_tui::agent::Message;
use claw_tui::session::{self, Entry, FileSink, SessionSink, SessionWriter};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The real file's sink, with a byte budget: a write beyond it writes what fits and
/// fails with ENOSPC, as a full disk does.
struct FullDisk {
    inner: FileSink,
    budget: Arc<Mutex<Option<usize>>>,
    appends: Arc<AtomicUsize>,
}

impl SessionSink for FullDisk {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.appends.fetch_add(1, Ordering::SeqCst);
        let mut budget = self.budget.lock().unwrap();
        match budget.as_mut() {
            Some(left) if *left < bytes.len() => {
                let fits = *left;
                *left = 0;
                self.inner.append(&bytes[..fits])?;
                Err(std::io::Error::from_raw_os_error(nix::libc::ENOSPC))
            }
            Some(left) => {
                *left -= bytes.len();
                self.inner.append(bytes)
            }
            None => self.inner.append(bytes),
        }
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.inner.truncate(len)
    }
}

/// A session writer in `dir` whose file sink is a [`FullDisk`] with `budget`, counting
/// its appends in `appends`.
fn writer_on_full_disk(
    dir: &std::path::Path,
    budget: &Arc<Mutex<Option<usize>>>,
    appends: &Arc<AtomicUsize>,
) -> SessionWriter {
    let (budget, appends) = (budget.clone(), appends.clone());
    SessionWriter::create_wrapped(
        dir,
        dir,
        "p",
        "m",
        Box::new(move |inner| {
            Box::new(FullDisk {
                inner,
                budget,
                appends,
            })
        }),
    )
    .unwrap()
}

fn message(i: usize) -> Entry {
    Entry::Message {
        timestamp: i as u64,
        message: Message::user(format!("message {i}: {}", "x".repeat(100))),
    }
}

#[tokio::test]
async fn a_failing_write_is_cut_back_reported_and_retried_in_order_at_the_next_sync() {
    let data = tempfile::tempdir().unwrap();
    let budget = Arc::new(Mutex::new(None));
    let appends = Arc::new(AtomicUsize::new(0));
    let writer = writer_on_full_disk(data.path(), &budget, &appends);
    let path = writer.path().to_path_buf();
    let mut status = writer.status();
    for i in 0..3 {
        writer.append(&message(i));
    }
    writer.sync();
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&path)
        .unwrap()
        .contains("message 2")
    {
        assert!(
            started.elapsed() < DEADLINE,
            "the first lines were never written"
        );
        std::thread::yield_now();
    }
    // The disk fills up half-way through the next line.
    *budget.lock().unwrap() = Some(40);
    writer.append(&message(3));
    tokio::time::timeout(DEADLINE, status.wait_for(|s| !s.is_saved()))
        .await
        .unwrap()
        .unwrap();
    let failing = status.borrow().clone();
    assert_eq!(failing.failures, 1);
    assert!(
        failing
            .error
            .as_deref()
            .unwrap()
            .contains("No space left on device"),
        "{failing:?}"
    );
    // No fragment: the file still ends with a whole line.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.ends_with('\n') && !text.contains("message 3"),
        "{text}"
    );

    // More lines while failing wait for the turn boundary: no write is tried for them.
    let tried = appends.load(Ordering::SeqCst);
    for i in 4..6 {
        writer.append(&message(i));
    }
    writer.sync();
    // Still full: the sync retried once and failed again.
    tokio::time::timeout(DEADLINE, status.wait_for(|s| s.unsaved == 3))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(appends.load(Ordering::SeqCst), tried + 1);
    assert_eq!(
        status.borrow().failures,
        1,
        "one failure, however long it lasts"
    );

    // Room again: the next sync writes everything that waited, in order.
    *budget.lock().unwrap() = None;
    writer.sync();
    tokio::time::timeout(DEADLINE, status.wait_for(|s| s.is_saved()))
        .await
        .unwrap()
        .unwrap();
    assert!(writer.close().await.is_saved());
    let loaded = session::load(&path).unwrap();
    let texts: Vec<String> = loaded
        .messages
        .iter()
        .map(|m| m.preview_text()[..9].to_owned())
        .collect();
    assert_eq!(
        texts,
        (0..6).map(|i| format!("message {i}")).collect::<Vec<_>>(),
        "no hole, no duplicate"
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[tokio::test]
async fn closing_while_the_disk_is_still_full_says_what_is_missing() {
    let data = tempfile::tempdir().unwrap();
    let budget = Arc::new(Mutex::new(Some(0)));
    let writer = writer_on_full_disk(data.path(), &budget, &Arc::default());
    writer.append(&message(0));
    let status = writer.close().await;
    assert!(!status.is_saved());
    assert_eq!(status.unsaved, 2, "the header and the message: {status:?}");
}

/// A sandbox whose data dir is a small tmpfs; `None` where none can be mounted.
fn full_disk_sandbox() -> Option<(Sandbox, Tmpfs)> {
    let sb = Sandbox::new();
    let disk = Tmpfs::mount(&sb.dir.path().join("data"), 512 * 1024)?;
    Some((sb, disk))
}

#[test]
fn print_mode_on_a_full_disk_says_so_and_exits_non_zero() {
    let Some((sb, disk)) = full_disk_sandbox() else {
        return;
    };
    let mut cmd = sb.command();
    cmd.args(["-p", "before the disk filled"]);
    assert_eq!(run(cmd).0, 0);
    let older = sb.only_session();
    disk.fill();
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, stdout, stderr) = run(cmd);
    assert!(
        stdout.contains("offline demo model"),
        "the run went on: {stdout}"
    );
    assert!(
        stderr.contains("No space left on device") && stderr.contains("retried"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the session could not be saved"),
        "{stderr}"
    );
    assert_eq!(code, 1);

    // The next -c says that the newest session file is empty, and which one it takes.
    disk.free();
    let mut cmd = sb.command();
    cmd.args(["-c", "-p", "where was I?"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("holds no message"), "{stderr}");
    assert_eq!(session_roles(&older), ["user", "assistant"].repeat(2));
}

#[test]
fn a_write_cut_short_by_a_full_disk_leaves_no_partial_line() {
    let Some((sb, disk)) = full_disk_sandbox() else {
        return;
    };
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    assert_eq!(run(cmd).0, 0);
    let file = sb.only_session();
    // Pad the file to just short of its 4 KiB page, then fill the disk: the next line
    // fits only in part (tmpfs writes what fits, then fails).
    let len = std::fs::metadata(&file).unwrap().len() as usize;
    let pad = 4096 - 60 - len;
    let setting = |value: &str| {
        format!("{{\"type\":\"setting\",\"timestamp\":1,\"key\":\"pad\",\"value\":\"{value}\"}}\n")
    };
    let line = setting(&"p".repeat(pad - setting("").len()));
    assert_eq!(line.len(), pad);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()))
        .unwrap();
    disk.fill();
    let before = std::fs::read_to_string(&file).unwrap();

    let mut cmd = sb.command();
    cmd.args(["-c", "-p", "list files"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.ends_with('\n'), "no fragment at the end");
    assert_eq!(
        session_lines(&file).len(),
        after.lines().count(),
        "every line is whole"
    );
    assert!(after.starts_with(&before));

    // With room again, the next resume is clean and goes on from there.
    disk.free();
    let mut cmd = sb.command();
    cmd.args(["-c", "-p", "hello again"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stderr.contains("damaged") && !stderr.contains("incomplete"),
        "{stderr}"
    );
    assert_eq!(
        session_roles(&file).last().map(String::as_str),
        Some("assistant")
    );
}

#[test]
fn rpc_reports_a_full_disk_at_once_and_saves_everything_once_there_is_room() {
    let Some((sb, disk)) = full_disk_sandbox() else {
        return;
    };
    disk.fill();
    let mut rpc = Rpc::start_in(sb, 0, &[]);
    // Before any command: the session's first line could not be written.
    let first = rpc.until(|_| true).pop().unwrap();
    assert_eq!(first["type"], "error", "{first}");
    assert_eq!(first["source"], "session");
    assert!(
        first["error"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{first}"
    );
    rpc.send(r#"{"type":"prompt","content":"hello"}"#);
    rpc.until(|l| l["type"] == "agent_end");

    disk.free();
    rpc.send(r#"{"type":"prompt","content":"list files"}"#);
    rpc.until_all(&[&|l| l["type"] == "session_saved", &|l| {
        l["type"] == "agent_end"
    }]);
    let exited = rpc.close_and_wait_all();
    assert_eq!(
        exited.code, 0,
        "everything was saved in the end: {}",
        exited.stderr
    );
    let file = &exited.sandbox.only_session();
    let lines = session_lines(file);
    assert_eq!(lines[0]["type"], "header", "the header is first");
    assert_eq!(
        session_roles(file),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "tool_result",
            "assistant"
        ],
        "the run on the full disk is in the file, before the later one"
    );
}
