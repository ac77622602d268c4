//! Clients that misbehave — garbage, huge lines, a connection that never reads — cannot
//! crash the served session or hold up anyone else; one that falls behind is told and
//! given a fresh snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::attach::{Client, Served};
use crate::support::bin::Sandbox;
use std::io::Read;
use std::os::unix::net::UnixStream;

fn is(line: &serde_json::Value, t: &str) -> bool {
    line["type"] == t
}

/// A session whose answer after `run seq 1 N` is long: thousands of streamed lines.
fn served() -> Served {
    let sandbox = Sandbox::new();
    Served::start(sandbox, 0, &["--provider", "demo"])
}

#[test]
fn garbage_and_oversize_lines_get_errors_and_the_session_goes_on() {
    let served = served();
    let bad = served.attach("garbage");
    bad.send("this is not json");
    let r = bad.until(|l| is(l, "response")).pop().unwrap();
    assert_eq!(r["ok"], false);
    bad.send_bytes(b"{\"type\":\"prompt\",\"content\":\"\xff\xfe\"}\n");
    let r = bad.until(|l| is(l, "response")).pop().unwrap();
    assert!(r["error"].as_str().unwrap().contains("UTF-8"), "{r}");
    // 20 MiB in one line: skipped as it streams in.
    let huge = vec![b'x'; 20 << 20];
    bad.send_bytes(&huge);
    bad.send_bytes(b"\n");
    let r = bad.until(|l| is(l, "response")).pop().unwrap();
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("longer than the limit"),
        "{r}"
    );
    bad.send(r#"{"type":"attach"}"#);
    assert_eq!(bad.response("attach")["ok"], false, "attached twice");
    // The same connection, and a new one, still work.
    bad.send(r#"{"type":"get_state"}"#);
    assert_eq!(bad.response("get_state")["ok"], true);
    let good = served.attach("good");
    good.send(r#"{"type":"prompt","content":"hello"}"#);
    good.until(|l| is(l, "agent_end"));
}

#[test]
fn a_client_that_never_reads_does_not_hold_up_the_run_or_the_others() {
    let served = served();
    // Attached, then silent: it never reads a byte of the stream.
    let mut stalled = UnixStream::connect(&served.socket).unwrap();
    {
        use std::io::Write;
        writeln!(stalled, r#"{{"type":"attach","name":"stalled"}}"#).unwrap();
    }
    // A half-open one: connected, never says anything, never reads.
    let _half_open = UnixStream::connect(&served.socket).unwrap();
    let good = served.attach("good");
    // Thousands of lines (each answer quotes the command's output in small chunks).
    let mut updates = 0;
    for _ in 0..5 {
        good.send(r#"{"type":"prompt","content":"run seq 1 40000"}"#);
        let lines = good.until(|l| is(l, "agent_end"));
        updates += lines.iter().filter(|l| is(l, "message_update")).count();
    }
    assert!(
        updates > 9000,
        "too few lines to fill the stalled client's buffer: {updates}"
    );
    // The run finished for the reader while the stalled client read nothing; now it
    // reads: it was told it fell behind, and given a fresh snapshot to go on from.
    stalled
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut text = String::new();
    let mut buf = vec![0u8; 1 << 16];
    while !text.contains("\"type\":\"resync\"") || !after_resync_has_snapshot(&text) {
        let n = stalled.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the server closed the stalled client: {}",
            &text[text.len().saturating_sub(500)..]
        );
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    good.send(r#"{"type":"get_state"}"#);
    assert_eq!(good.response("get_state")["ok"], true);
}

fn after_resync_has_snapshot(text: &str) -> bool {
    text.split("\"type\":\"resync\"")
        .nth(1)
        .is_some_and(|rest| rest.contains("\"type\":\"snapshot\""))
}

#[test]
fn many_connections_that_hang_up_at_once_leave_the_session_serving() {
    let served = served();
    for _ in 0..50 {
        let c = UnixStream::connect(&served.socket).unwrap();
        drop(c);
    }
    let ok = Client::connect(&served.socket);
    ok.send(r#"{"type":"attach"}"#);
    ok.until(|l| is(l, "snapshot"));
    ok.send(r#"{"type":"get_clients"}"#);
    let clients = ok.response("get_clients");
    assert_eq!(clients["clients"].as_array().unwrap().len(), 1, "{clients}");
}
