//! A compacted session on disk: the `compaction` entry beside the complete history,
//! `export` with the compaction marked, and resuming, which rebuilds exactly what the
//! model saw: in the library and through the real binary (`-p`, then `-c -p`).

use crate::support::bin::run as run_bin;
use crate::support::compacting::two_big_files_on;
use crate::support::compacting::*;
use crate::support::fake_llm::FakeLlm;
use crate::support::run;
use claw_tui::session::export::{to_json, to_markdown};
use claw_tui::session::{SessionWriter, load, record_events};
use serde_json::{Value, json};

fn script_to_first_compaction() -> Vec<crate::support::fake_llm::Scripted> {
    vec![
        call_reply("c1", "read_file", json!({"path": "a.txt"}), 600),
        call_reply("c2", "read_file", json!({"path": "b.txt"}), 4_500),
        text_reply("## Goal\nCompare a.txt and b.txt (summary-one)", 900),
        text_reply("done", 3_000),
    ]
}

#[tokio::test]
async fn the_session_keeps_everything_and_a_resume_sends_what_the_model_saw() {
    let server = FakeLlm::start(script_to_first_compaction()).await;
    let data_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let agent = agent_on(&server, settings());
    agent.set_tools(vec![big_reader(8_000)]);
    agent.set_system_prompt("You are the test agent.");
    let writer =
        SessionWriter::create(data_dir.path(), workspace.path(), "test", "test-model").unwrap();
    let path = writer.path().to_path_buf();
    let (finish, task) = record_events(&agent, writer);
    run(&agent, "compare a.txt and b.txt").await;
    let _ = agent.state();
    finish.send(()).unwrap();
    task.await.unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compaction = entries
        .iter()
        .find(|e| e["type"] == "compaction")
        .expect("a compaction entry");
    assert_eq!(compaction["first_kept_message"], 3);
    assert_eq!(compaction["history_len"], 5);
    assert_eq!(compaction["reason"], "threshold");
    assert!(
        compaction["summary"]
            .as_str()
            .unwrap()
            .contains("(summary-one)")
    );
    assert!(compaction["tokens_before"].as_u64() > compaction["tokens_after"].as_u64());
    let data = load(&path).unwrap();
    // The complete history stays in the file.
    assert_eq!(*agent.state().messages, data.messages);
    assert_eq!(data.messages.len(), 6);
    assert_eq!(data.compaction(), agent.state().compaction.as_ref());

    let markdown = to_markdown(&data);
    let marker = markdown
        .find("## Compacted: 6525 → ")
        .expect("the compaction point");
    let before = markdown.find("**Tool result `read_file`**").unwrap();
    let done = markdown.rfind("done").unwrap();
    assert!(before < marker && marker < done, "{markdown}");
    assert!(markdown.contains("> ## Goal\n> Compare a.txt and b.txt (summary-one)"));
    assert!(markdown.contains("compare a.txt and b.txt"));
    let json: Value = serde_json::from_str(&to_json(&data)).unwrap();
    assert_eq!(json["compactions"][0]["first_kept_message"], 3);
    assert_eq!(json["messages"].as_array().unwrap().len(), 6);

    // Resumed elsewhere: the first request is the last one plus the new turn.
    let before_resume = server.requests()[3].clone();
    let next = FakeLlm::start(vec![text_reply("resumed", 3_100)]).await;
    let resumed = agent_on(&next, settings());
    resumed.set_tools(vec![big_reader(8_000)]);
    resumed.set_system_prompt("You are the test agent.");
    resumed
        .restore_history(data.messages.clone(), data.compaction().cloned())
        .unwrap();
    assert_eq!(resumed.context_usage().tokens, 3_010);
    run(&resumed, "and now?").await;
    let sent = messages(&next.requests()[0]);
    let earlier = messages(&before_resume);
    assert_eq!(sent[..earlier.len()], earlier[..]);
    assert_eq!(sent[earlier.len()]["content"], "done");
    assert_eq!(sent[earlier.len() + 1]["content"], "and now?");
    assert_eq!(sent.len(), earlier.len() + 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_compacts_and_continue_resumes_from_the_summary() {
    let mut script = script_to_first_compaction();
    script.push(text_reply("resumed from the summary", 3_100));
    let server = FakeLlm::start(script).await;
    let sandbox = two_big_files_on(&server);
    let mut cmd = sandbox.command();
    cmd.args(["-p", "compare a.txt and b.txt"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run_bin(cmd))
        .await
        .unwrap();
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stdout.trim(), "done");
    assert!(stderr.contains("compacting the history ("), "{stderr}");
    assert!(stderr.contains("compacted: "), "{stderr}");
    assert!(is_summary_request(&server.requests()[2]));

    let mut cmd = sandbox.command();
    cmd.args(["-c", "-p", "and now?"]);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || run_bin(cmd))
        .await
        .unwrap();
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stdout.trim(), "resumed from the summary");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let sent = messages(&requests[4]);
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert!(content(&requests[4], 1).contains("(summary-one)"));
    assert_eq!(sent[2]["tool_calls"][0]["id"], "c2");
    assert!(
        sent[3]["content"]
            .as_str()
            .unwrap()
            .contains(&"b".repeat(100))
    );
    assert_eq!(sent[5]["content"], "and now?");
    // AGENTS.md-free system prompt, but rebuilt: the workspace is in it.
    assert!(content(&requests[4], 0).contains("Workspace:"));

    let mut cmd = sandbox.command();
    cmd.args(["export", "--format", "markdown"]);
    let sessions = std::fs::read_dir(sandbox.dir.path().join("data/claw-tui/sessions"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        // The logs beside the session are not sessions.
        .filter(|f| {
            let name = f.file_name().to_string_lossy().into_owned();
            !name.ends_with(".events.jsonl") && !name.ends_with(".requests.jsonl")
        })
        .collect::<Vec<_>>();
    assert_eq!(sessions.len(), 1);
    cmd.arg(sessions[0].path());
    let (code, stdout, stderr) = run_bin(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("## Compacted: "), "{stdout}");
    assert!(stdout.contains("resumed from the summary") && stdout.contains("compare a.txt"));
}
