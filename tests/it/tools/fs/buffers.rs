//! The file tools over an editor's buffers (ACP with the editor's file system on): text
//! is read from and written to the editor by the path the workspace handle resolved,
//! after the same checks as on disk, and every change still reaches the checkpoints.
//! The editor here is a map of paths to texts that records what it was asked.

use super::Setup;
use crate::support::call;
use claw_tui::agent::{Tool, ToolUpdates};
use claw_tui::tools::exec::Running;
use claw_tui::tools::fs::{
    ChangeObserver, EditFileTool, EditorAccess, EditorBuffers, Prior, ReadFileTool, Unkept,
    WriteFileTool,
};
use serde_json::json;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// An editor: open buffers by path, and every path it was asked about.
#[derive(Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    asked: Mutex<Vec<PathBuf>>,
}

impl EditorBuffers for Editor {
    fn read(&self, path: &Path) -> io::Result<String> {
        self.asked.lock().unwrap().push(path.to_owned());
        match self.buffers.lock().unwrap().get(path) {
            Some(text) => Ok(text.clone()),
            None => std::fs::read_to_string(path),
        }
    }

    fn write(&self, path: &Path, text: &str) -> io::Result<()> {
        self.asked.lock().unwrap().push(path.to_owned());
        self.buffers
            .lock()
            .unwrap()
            .insert(path.to_owned(), text.to_owned());
        Ok(())
    }
}

/// One change as the checkpoints would be told it: the path, what it held (none when
/// absent), what it holds after.
type Told = (PathBuf, Option<Vec<u8>>, Vec<u8>);

/// What the checkpoints would be told.
#[derive(Default)]
struct Seen(Mutex<Vec<Told>>);

impl ChangeObserver for Seen {
    fn before_change(&self, path: &Path, prior: Prior<'_>) -> Result<(), Unkept> {
        let prior = match prior {
            Prior::Content(bytes) => Some(bytes.to_vec()),
            _ => None,
        };
        self.0
            .lock()
            .unwrap()
            .push((path.to_owned(), prior, Vec::new()));
        Ok(())
    }

    fn after_change(&self, path: &Path, after: &[u8]) {
        let mut seen = self.0.lock().unwrap();
        let last = seen.last_mut().unwrap();
        assert_eq!(last.0, path);
        last.2 = after.to_vec();
    }
}

fn tools(
    s: &Setup,
    editor: &Arc<Editor>,
    seen: &Arc<Seen>,
) -> (ReadFileTool, WriteFileTool, EditFileTool) {
    tools_with(s, editor, seen, Running::default())
}

/// The file tools over `editor`, kept from it while one of `commands` runs.
fn tools_with(
    s: &Setup,
    editor: &Arc<Editor>,
    seen: &Arc<Seen>,
    commands: Running,
) -> (ReadFileTool, WriteFileTool, EditFileTool) {
    let buffers = Some(EditorAccess {
        editor: editor.clone() as Arc<dyn EditorBuffers>,
        commands,
    });
    let observer = Some(seen.clone() as Arc<dyn ChangeObserver>);
    (
        ReadFileTool::new(s.workspace()).with_buffers(buffers.clone()),
        WriteFileTool::new(s.workspace())
            .observed(observer.clone())
            .with_buffers(buffers.clone()),
        EditFileTool::new(s.workspace())
            .observed(observer)
            .with_buffers(buffers),
    )
}

#[tokio::test]
async fn reads_and_edits_see_unsaved_changes_and_writes_land_in_the_editor() {
    let s = Setup::new();
    let file = s.file("src/a.rs", "fn saved() {}\n");
    let (editor, seen) = (Arc::new(Editor::default()), Arc::new(Seen::default()));
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(file.clone(), "fn unsaved() {}\n".into());
    let (read, write, edit) = tools(&s, &editor, &seen);

    let r = call(&read, json!({"path": "src/a.rs"})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains("fn unsaved()"), "{}", r.content);

    let r = call(
        &edit,
        json!({"path": "src/a.rs", "old_text": "unsaved", "new_text": "edited"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(editor.buffers.lock().unwrap()[&file], "fn edited() {}\n");
    // The disk is the editor's to save: untouched by the tool.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn saved() {}\n");
    // The checkpoints saw the editor's text before and after.
    let (path, prior, after) = seen.0.lock().unwrap().last().cloned().unwrap();
    assert_eq!(path, file);
    assert_eq!(prior.as_deref(), Some(&b"fn unsaved() {}\n"[..]));
    assert_eq!(after, b"fn edited() {}\n");

    // A new file in a new directory: the directory is made through the handle, the
    // text goes to the editor.
    let r = call(&write, json!({"path": "new/b.txt", "content": "hello\n"})).await;
    assert!(!r.is_error, "{}", r.content);
    let created = s.root.join("new/b.txt");
    assert!(s.root.join("new").is_dir());
    assert_eq!(editor.buffers.lock().unwrap()[&created], "hello\n");
    let (_, prior, _) = seen.0.lock().unwrap().last().cloned().unwrap();
    assert_eq!(prior, None);
}

/// A hostile model plants links leading out of the workspace, then sends every tool at
/// them: each is refused by the workspace handle before the editor is asked anything.
#[tokio::test]
async fn links_out_of_the_workspace_never_reach_the_editor() {
    let s = Setup::new();
    std::os::unix::fs::symlink(s.outer.join("secret.txt"), s.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&s.outer, s.root.join("out")).unwrap();
    let (editor, seen) = (Arc::new(Editor::default()), Arc::new(Seen::default()));
    let (read, write, edit) = tools(&s, &editor, &seen);
    for (tool, args) in [
        (
            &read as &dyn claw_tui::agent::Tool,
            json!({"path": "link.txt"}),
        ),
        (&read, json!({"path": "out/secret.txt"})),
        (&read, json!({"path": "../secret.txt"})),
        (
            &edit,
            json!({"path": "link.txt", "old_text": "top", "new_text": "x"}),
        ),
        (
            &edit,
            json!({"path": "out/secret.txt", "old_text": "top", "new_text": "x"}),
        ),
        (
            &write,
            json!({"path": "out/secret.txt", "content": "pwned"}),
        ),
        (&write, json!({"path": "out/new.txt", "content": "pwned"})),
    ] {
        let r = call(tool, args.clone()).await;
        assert!(r.is_error, "{args}: {}", r.content);
        assert!(!r.content.contains("top secret"), "{}", r.content);
    }
    assert!(
        editor.asked.lock().unwrap().is_empty(),
        "{:?}",
        editor.asked
    );
    assert!(editor.buffers.lock().unwrap().is_empty());
    assert!(seen.0.lock().unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert!(!s.outer.join("new.txt").exists());
}

/// Images and binary files are not the editor's text: read from the disk.
#[tokio::test]
async fn binary_files_are_read_from_the_disk() {
    let s = Setup::new();
    s.file("blob.bin", [0u8, 1, 2, 3, 0, 0, 7]);
    let (editor, seen) = (Arc::new(Editor::default()), Arc::new(Seen::default()));
    let (read, _, _) = tools(&s, &editor, &seen);
    let r = call(&read, json!({"path": "blob.bin"})).await;
    assert!(r.is_error && r.content.contains("binary"), "{}", r.content);
    assert!(editor.asked.lock().unwrap().is_empty());
}

/// While a command the model started runs (here one that keeps swapping a link to a
/// file outside in and out), the editor is not asked at all: the tools use the disk
/// through the workspace handle, which never follows the link out; once it is gone, the
/// editor is asked again.
#[tokio::test(flavor = "multi_thread")]
async fn while_a_command_runs_the_disk_is_used_through_the_handle() {
    let s = Setup::new();
    s.file("race.txt", "inside\n");
    let exec = crate::support::exec::tool(&s.root);
    let commands = exec.running();
    let (editor, seen) = (Arc::new(Editor::default()), Arc::new(Seen::default()));
    let (read, write, _) = tools_with(&s, &editor, &seen, commands.clone());
    let swapping = format!(
        "for i in $(seq 300); do ln -sfn {} race.txt; printf 'inside\\n' > r.tmp; \
         mv -f r.tmp race.txt; done; sleep 1",
        s.outer.join("secret.txt").display()
    );
    let args = crate::support::checked(&exec, json!({"command": swapping, "timeout": 60}));
    let command = tokio::spawn(async move {
        let cancel = tokio_util::sync::CancellationToken::new();
        exec.execute("x", args, cancel, ToolUpdates::discard())
            .await
    });
    crate::support::poll::until_async("the command runs", crate::support::DEADLINE, || {
        (commands.count() > 0).then_some(())
    })
    .await;
    while !command.is_finished() {
        let r = call(&read, json!({"path": "race.txt"})).await;
        assert!(!r.content.contains("top secret"), "{}", r.content);
        let _ = call(&write, json!({"path": "race.txt", "content": "written\n"})).await;
        if commands.count() == 0 {
            break;
        }
        assert!(
            editor.asked.lock().unwrap().is_empty(),
            "{:?}",
            editor.asked
        );
    }
    let ended = command.await.unwrap();
    assert!(!ended.is_error, "{}", ended.content);
    assert_eq!(
        std::fs::read_to_string(s.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    // Nothing runs now: the editor is asked again.
    assert_eq!(commands.count(), 0);
    let r = call(&read, json!({"path": "inside.txt"})).await;
    assert!(r.is_error, "no such file");
    s.file("inside.txt", "x\n");
    let r = call(&read, json!({"path": "inside.txt"})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(!editor.asked.lock().unwrap().is_empty());
}
