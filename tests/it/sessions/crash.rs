//! A process that dies mid-run: what it streamed is recovered from the side file as an
//! aborted message, the user is told, and the history the model gets is well-formed
//! (the next prompt says the previous one got no complete answer).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::reading::request_transcript;
use crate::support::{DEADLINE, Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, Message, MessageDelta, StopReason};
use claw_tui::llm::LlmEvent;
use claw_tui::session::{
    self, Entry, STOPPED_BEFORE_ANSWER, STOPPED_WHILE_STREAMING, SessionWriter, streaming_path,
};
use std::path::Path;
use std::time::Instant;

/// What the last request sent, as [`request_transcript`] lines.
fn user_texts(provider: &ScriptedProvider) -> Vec<String> {
    request_transcript(provider.requests().last().unwrap())
}

/// Waits (bounded) until the side file holds streamed deltas.
fn wait_for_deltas(path: &Path) {
    let started = Instant::now();
    while !std::fs::read_to_string(streaming_path(path)).is_ok_and(|s| s.contains("deltas")) {
        assert!(
            started.elapsed() < DEADLINE,
            "no deltas reached the side file"
        );
        std::thread::yield_now();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_was_streamed_when_the_recorder_died_comes_back_as_an_aborted_message() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let delta = |text: &str| {
        LlmEvent::Delta(MessageDelta::Text {
            index: 0,
            text: text.into(),
        })
    };
    let provider = ScriptedProvider::new(vec![Reply::Hang(vec![
        LlmEvent::Start,
        delta("The answer "),
        delta("starts like this"),
    ])]);
    let agent = Agent::new(provider, "scripted");
    let writer = SessionWriter::create(data.path(), ws.path(), "scripted", "scripted").unwrap();
    let path = writer.path().to_path_buf();
    let (finish, task) = session::record_events(&agent, writer);
    agent.prompt("explain").unwrap();
    let file = path.clone();
    tokio::task::spawn_blocking(move || wait_for_deltas(&file))
        .await
        .unwrap();
    // The process "dies": the recorder stops while the run still streams.
    finish.send(()).unwrap();
    task.await.unwrap();
    agent.abort();
    agent.wait_for_idle().await;
    assert!(
        streaming_path(&path).exists(),
        "a cut-short run leaves its side file"
    );

    let (writer, loaded) = SessionWriter::resume_file(&path).unwrap();
    assert!(
        loaded.warnings.iter().any(|w| w.contains("27 characters")),
        "{:?}",
        loaded.warnings
    );
    let Some(Message::Assistant(kept)) = loaded.messages.last() else {
        panic!("{:?}", loaded.messages);
    };
    assert_eq!(kept.text(), "The answer starts like this");
    assert_eq!(kept.stop_reason, StopReason::Aborted);
    assert_eq!(kept.error_message.as_deref(), Some(STOPPED_WHILE_STREAMING));
    assert!(!streaming_path(&path).exists());

    // The next prompt: the model hears that the first one got no complete answer.
    let provider = ScriptedProvider::new(vec![Reply::text(&["ok"])]);
    let resumed = Agent::new(provider.clone(), "scripted");
    resumed.replace_messages(loaded.messages.clone()).unwrap();
    let (finish, task) = session::record_events(&resumed, writer);
    let mut events = resumed.subscribe(None);
    resumed.prompt("go on").unwrap();
    until_agent_end(&mut events).await;
    finish.send(()).unwrap();
    task.await.unwrap();
    assert_eq!(
        user_texts(&provider),
        [
            "user:explain".to_owned(),
            format!(
                "user:[The previous message got no complete answer: {}.]\n\ngo on",
                STOPPED_WHILE_STREAMING
            ),
        ]
    );
    // Recorded once: resuming again adds nothing.
    let (again, reloaded) = SessionWriter::resume_file(&path).unwrap();
    assert_eq!(reloaded.messages.len(), 4, "{:?}", reloaded.messages);
    assert!(reloaded.warnings.is_empty(), "{:?}", reloaded.warnings);
    again.close().await;
}

/// A session whose last process died with a run active (side file as it left it).
async fn crashed(side: &str, messages: Vec<Message>) -> (tempfile::TempDir, std::path::PathBuf) {
    let data = tempfile::tempdir().unwrap();
    let writer = SessionWriter::create(data.path(), data.path(), "p", "m").unwrap();
    for message in messages {
        writer.append(&Entry::Message {
            timestamp: 1,
            message,
        });
    }
    let path = writer.path().to_path_buf();
    writer.close().await;
    std::fs::write(streaming_path(&path), side).unwrap();
    (data, path)
}

#[tokio::test]
async fn a_run_cut_short_before_any_answer_is_marked_and_told() {
    let (_dir, path) = crashed(
        "{\"type\":\"run_start\",\"timestamp\":5}\n{\"type\":\"message_st",
        vec![Message::user("a question")],
    )
    .await;
    let (writer, loaded) = SessionWriter::resume_file(&path).unwrap();
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("before its answer arrived")),
        "{:?}",
        loaded.warnings
    );
    let Some(Message::Assistant(marker)) = loaded.messages.last() else {
        panic!("{:?}", loaded.messages);
    };
    assert!(marker.content.is_empty());
    assert_eq!(marker.error_message.as_deref(), Some(STOPPED_BEFORE_ANSWER));
    writer.close().await;
    assert_eq!(session::load(&path).unwrap().messages.len(), 2);
}

#[tokio::test]
async fn a_run_that_had_finished_but_kept_its_side_file_gets_nothing_added() {
    let answer = Message::Assistant(crate::support::scripted::message(
        vec![claw_tui::agent::Block::Text {
            text: "done".into(),
        }],
        StopReason::Stop,
    ));
    let side = "{\"type\":\"run_start\",\"timestamp\":5}\n\
                {\"type\":\"message_start\",\"model\":\"m\",\"timestamp\":0}\n\
                {\"type\":\"deltas\",\"deltas\":[{\"kind\":\"text\",\"index\":0,\"text\":\"done\"}]}\n\
                {\"type\":\"message_end\"}\n";
    let (_dir, path) = crashed(side, vec![Message::user("q"), answer.clone()]).await;
    let (writer, loaded) = SessionWriter::resume_file(&path).unwrap();
    assert_eq!(loaded.messages.last(), Some(&answer));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    writer.close().await;
    assert!(!streaming_path(&path).exists());

    // Died after the message reached the file, before the side file heard of its end.
    let side = "{\"type\":\"run_start\",\"timestamp\":5}\n\
                {\"type\":\"message_start\",\"model\":\"m\",\"timestamp\":0}\n\
                {\"type\":\"deltas\",\"deltas\":[{\"kind\":\"text\",\"index\":0,\"text\":\"do\"}]}\n";
    let (_dir, path) = crashed(side, vec![Message::user("q"), answer.clone()]).await;
    let (writer, loaded) = SessionWriter::resume_file(&path).unwrap();
    assert_eq!(loaded.messages.len(), 2, "not recorded twice");
    writer.close().await;
}
