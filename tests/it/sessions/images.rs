//! Images in sessions: each stored once by hash beside the session files (private, not
//! in the JSON lines), put back when the session is resumed and sent again with its
//! history; a missing or damaged stored copy is reported and never sent.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::{Reply, ScriptedProvider, until_agent_end};
use claw_tui::agent::{Agent, Message, UserMessage};
use claw_tui::llm::LlmMessage;
use claw_tui::session::{self, SessionWriter};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn shot() -> claw_tui::agent::ImageData {
    let mut bytes = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(40, 30)
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    claw_tui::images::from_bytes("shot.png", bytes.into_inner()).unwrap()
}

/// Records two prompts that attach the same image; returns the session file.
async fn record_two_prompts(data: &Path, ws: &Path) -> PathBuf {
    let provider = ScriptedProvider::new(vec![Reply::text(&["one"]), Reply::text(&["two"])]);
    let agent = Agent::new(provider, "scripted");
    let writer = SessionWriter::create(data, ws, "scripted", "scripted").unwrap();
    let path = writer.path().to_path_buf();
    let (finish, task) = session::record_events(&agent, writer);
    let mut events = agent.subscribe(None);
    for text in ["what is this?", "and now?"] {
        let message = UserMessage::new(text).with_images(vec![shot()]);
        agent.prompt_messages(vec![Message::User(message)]).unwrap();
        until_agent_end(&mut events).await;
    }
    finish.send(()).unwrap();
    task.await.unwrap();
    path
}

#[tokio::test]
async fn an_image_is_stored_once_and_resumed_with_its_bytes() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let path = record_two_prompts(data.path(), ws.path()).await;
    let image = shot();

    let store = session::images::store_dir(&path);
    let stored: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(stored, vec![store.join(format!("{}.png", image.sha256))]);
    assert_eq!(std::fs::read(&stored[0]).unwrap(), image.data.as_ref());
    let mode = std::fs::metadata(&stored[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        std::fs::metadata(&store).unwrap().permissions().mode() & 0o777,
        0o700
    );
    // The lines name the image; its bytes are not in them.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches(&image.sha256).count(), 2);
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &image.data);
    assert!(!text.contains(&encoded[..40]));

    let loaded = session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let provider = ScriptedProvider::new(vec![Reply::text(&["three"])]);
    let resumed = Agent::new(provider.clone(), "scripted");
    resumed.replace_messages(loaded.messages).unwrap();
    let mut events = resumed.subscribe(None);
    resumed.prompt("once more").unwrap();
    until_agent_end(&mut events).await;
    let request = &provider.requests()[0];
    let sent: Vec<&UserMessage> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            LlmMessage::User(u) => Some(u.as_ref()),
            _ => None,
        })
        .collect();
    assert_eq!(sent[0].images, vec![image.clone()]);
    assert_eq!(sent[0].images[0].data, image.data);
    assert_eq!(sent[1].images[0].data, image.data);
    assert!(sent[2].images.is_empty());
}

#[tokio::test]
async fn a_damaged_or_missing_stored_copy_is_reported_not_sent() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let path = record_two_prompts(data.path(), ws.path()).await;
    let image = shot();
    let stored = session::images::store_dir(&path).join(format!("{}.png", image.sha256));
    std::fs::write(&stored, b"not the image").unwrap();
    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains("damaged"),
        "{:?}",
        loaded.warnings
    );
    let Message::User(first) = &loaded.messages[0] else {
        panic!("{:?}", loaded.messages[0])
    };
    assert!(!first.images[0].is_loaded());

    std::fs::remove_file(&stored).unwrap();
    let loaded = session::load(&path).unwrap();
    assert!(
        loaded.warnings[0].contains("cannot be read"),
        "{:?}",
        loaded.warnings
    );
}
