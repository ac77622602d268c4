//! The launcher's question about a session another process has open, asked on the
//! terminal before the client starts: a yes (or just Enter) continues in a copy, a no or
//! the end of input opens nothing and is a usage error, `--fork` copies unasked.

use crate::support::runtime::settings;
use clap::Parser;
use claw_tui::agent::Message;
use claw_tui::cli::Cli;
use claw_tui::config::Settings;
use claw_tui::launcher::{exit_code, open_for_client};
use claw_tui::session::{Entry, OpenedSession, SessionWriter, list_sessions};

/// A session with one message, kept open (locked) by the returned writer, as another
/// process would.
async fn in_use(settings: &Settings) -> SessionWriter {
    let writer =
        SessionWriter::create(&settings.data_dir, &settings.workspace, "demo", "m").unwrap();
    writer.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("the original question"),
    });
    let path = writer.path().to_path_buf();
    writer.close().await;
    SessionWriter::resume_file(&path).unwrap().0
}

/// Opens the session `id` with `answer` on stdin; returns what was opened (or the
/// error) and what was asked.
fn open(
    settings: &Settings,
    id: &str,
    extra: &[&str],
    answer: &str,
) -> (color_eyre::Result<Option<OpenedSession>>, String) {
    let mut args = vec!["claw-tui", "--session", id];
    args.extend_from_slice(extra);
    let cli = Cli::parse_from(args);
    let mut asked = Vec::new();
    let opened = open_for_client(&cli, settings, &mut answer.as_bytes(), &mut asked);
    (opened, String::from_utf8(asked).unwrap())
}

#[tokio::test]
async fn a_yes_or_enter_continues_in_a_copy() {
    let (_home, settings) = settings("");
    let original = in_use(&settings).await;
    for answer in ["y\n", "\n", "YES\n"] {
        let (opened, asked) = open(&settings, original.id(), &[], answer);
        assert!(
            asked.contains("is open in another claw-tui process") && asked.ends_with("[Y/n] "),
            "{asked}"
        );
        let opened = opened.unwrap().expect("a session");
        let copied = opened.resumed.as_ref().expect("the copied history");
        assert_eq!(copied.id(), original.id());
        assert_ne!(opened.writer.id(), original.id(), "a new session");
        assert_eq!(copied.messages.len(), 1);
        opened.writer.close().await;
    }
    original.close().await;
}

#[tokio::test]
async fn a_no_or_the_end_of_input_opens_nothing() {
    let (_home, settings) = settings("");
    let original = in_use(&settings).await;
    for answer in ["n\n", "no thanks\n", ""] {
        let (opened, asked) = open(&settings, original.id(), &[], answer);
        assert!(asked.ends_with("[Y/n] "), "{asked}");
        let report = opened.err().expect("nothing is opened");
        let message = report.to_string();
        assert!(
            message.ends_with("was not opened; close the other claw-tui first, or pass --fork"),
            "{message}"
        );
        assert_eq!(exit_code(&report), 2, "a usage error");
    }
    original.close().await;
    let sessions = list_sessions(&settings.data_dir, &settings.workspace);
    assert_eq!(sessions.len(), 1, "no copy was made");
}

#[tokio::test]
async fn fork_copies_without_asking() {
    let (_home, settings) = settings("");
    let original = in_use(&settings).await;
    let (opened, asked) = open(&settings, original.id(), &["--fork"], "n\n");
    assert_eq!(asked, "", "nothing is asked");
    let opened = opened.unwrap().expect("a session");
    assert_ne!(opened.writer.id(), original.id());
    opened.writer.close().await;
    original.close().await;
}
