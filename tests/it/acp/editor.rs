//! The editor's file system (`[acp] editor_files`): with it on and offered by the
//! client, the file tools read the editor's buffers (unsaved text included) and write
//! into them by the paths the workspace handle resolved; without the setting, or
//! without the client's offer, they use the disk, and the missing offer is said.

use super::{real, sandbox_for};
use crate::support::acp::drive;
use crate::support::fake_llm::anthropic::{reply, text_reply, tool_block};
use crate::support::fake_llm::{FakeLlm, Scripted};
use agent_client_protocol::v1::schema::{ClientCapabilities, FileSystemCapabilities};

fn editor_offering_files() -> ClientCapabilities {
    ClientCapabilities::new().fs(FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true))
}

/// The model reads `notes.txt`, edits it, then tries a link out of the workspace.
fn script() -> Vec<Scripted> {
    vec![
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_r",
                "read_file",
                &[r#"{"path": "notes.txt"}"#],
            )],
            "tool_use",
        )),
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_e",
                "edit_file",
                &[r#"{"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}"#],
            )],
            "tool_use",
        )),
        Scripted::sse(reply(
            vec![tool_block(
                0,
                "toolu_x",
                "read_file",
                &[r#"{"path": "out.txt"}"#],
            )],
            "tool_use",
        )),
        Scripted::sse(text_reply(&["done"])),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_file_tools_use_the_editors_buffers_when_asked_and_offered() {
    let server = FakeLlm::start(script()).await;
    let sandbox = sandbox_for(&server, "[acp]\neditor_files = true\n");
    let ws = sandbox.workspace();
    let notes = real(&ws).join("notes.txt");
    let secret = ws.parent().unwrap().join("secret.txt");
    std::fs::write(&secret, "top secret\n").unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("out.txt")).unwrap();
    let run = drive(&sandbox, &[], &[], async |s| {
        s.seen
            .buffers
            .lock()
            .unwrap()
            .insert(notes.clone(), "alpha\nunsaved\nbeta\n".into());
        s.initialize_with(editor_offering_files()).await;
        let id = s.open_initialized(&ws).await;
        s.prompt(&id, "tidy the notes").await.unwrap();
        let buffers = s.seen.buffers.lock().unwrap().clone();
        let asked = s.seen.file_requests.lock().unwrap().clone();
        (buffers, asked)
    })
    .await;
    let (buffers, asked) = run.value;
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The model read the unsaved text, and its edit landed in the buffer.
    let requests = server.requests();
    assert!(
        requests[1].body.to_string().contains("unsaved"),
        "{}",
        requests[1].body
    );
    assert_eq!(buffers[&notes], "alpha\nunsaved\ngamma\n");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\nbeta\n");
    // The editor was asked about the notes only: the link out was refused first.
    assert_eq!(
        asked,
        [
            ("read", notes.clone()),
            ("read", notes.clone()),
            ("write", notes)
        ]
    );
    assert!(!requests[3].body.to_string().contains("top secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_setting_or_the_offer_the_disk_is_used() {
    // Offered, not asked for.
    let server = FakeLlm::start(script()).await;
    let sandbox = sandbox_for(&server, "");
    let ws = sandbox.workspace();
    let run = drive(&sandbox, &[], &[], async |s| {
        s.initialize_with(editor_offering_files()).await;
        let id = s.open_initialized(&ws).await;
        s.prompt(&id, "tidy the notes").await.unwrap();
        s.seen.file_requests.lock().unwrap().clone()
    })
    .await;
    assert!(run.value.is_empty(), "{:?}", run.value);
    let notes = real(&ws).join("notes.txt");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\ngamma\n");

    // Asked for, not offered: said, and the disk used.
    let server = FakeLlm::start(script()).await;
    let sandbox = sandbox_for(&server, "[acp]\neditor_files = true\n");
    let ws = sandbox.workspace();
    let run = drive(&sandbox, &[], &[], async |s| {
        let id = s.open(&ws).await;
        s.prompt(&id, "tidy the notes").await.unwrap();
    })
    .await;
    assert!(
        run.stderr
            .contains("editor_files is on, but this editor does not offer"),
        "{}",
        run.stderr
    );
    let notes = real(&ws).join("notes.txt");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\ngamma\n");
}
