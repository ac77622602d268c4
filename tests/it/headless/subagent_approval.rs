//! A subagent's `exec` under `[exec] approval = "ask"` through the real binary on the
//! demo model (`spawn run CMD` starts a subagent whose task makes it call `exec CMD`):
//! `-p` and `--mode json` have nobody to ask and deny it, `--yes` allows it, and RPC
//! prints an `approval_request` naming the subagent that `approve` answers. Checked on
//! the file system.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support::bin::{Sandbox, run};
use crate::support::rpc::{Rpc, is_type};
use claw_tui::tools::exec::NOBODY_TO_ASK_REASON;
use serde_json::{Value, json};

const ASK: &str = "[exec]\napproval = \"ask\"\n";

fn ask_sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write_config(ASK);
    sb
}

#[test]
fn print_mode_denies_a_subagents_command_when_nobody_can_approve_it() {
    let sb = ask_sandbox();
    let mut cmd = sb.command();
    cmd.args(["-p", "spawn run touch p-marker"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(!sb.workspace().join("p-marker").exists(), "the command ran");
    // The subagent's report, relayed by the main agent, carries the reason it was given.
    assert!(stdout.contains("(subagent-1) completed"), "{stdout}");
    assert!(stdout.contains("without anyone to ask"), "{stdout}");
}

#[test]
fn print_mode_with_yes_runs_a_subagents_command() {
    let sb = ask_sandbox();
    let mut cmd = sb.command();
    cmd.args(["-p", "--yes", "spawn run touch yes-marker"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(sb.workspace().join("yes-marker").exists(), "--yes approves");
}

#[test]
fn json_mode_shows_the_subagents_denied_call_with_the_reason() {
    let sb = ask_sandbox();
    let mut cmd = sb.command();
    cmd.args(["--mode", "json", "-p", "spawn run touch json-marker"]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !sb.workspace().join("json-marker").exists(),
        "the command ran"
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = lines
        .iter()
        .find(|l| is_type(l, "subagent_event") && l["event"]["type"] == "tool_execution_end")
        .expect("the subagent's exec call ended");
    assert_eq!(end["subagent_id"], "subagent-1");
    assert_eq!(end["event"]["tool_name"], "exec");
    assert_eq!(end["event"]["is_error"], true);
    assert_eq!(end["event"]["result"]["content"], NOBODY_TO_ASK_REASON);
    assert!(!lines.iter().any(|l| is_type(l, "approval_request")));
}

/// Prompts `spawn run touch NAME` and returns the approval request the subagent makes
/// (checked to name it and to come before the command ran).
fn subagent_request(rpc: &mut Rpc, number: u32, name: &str) -> Value {
    let prompt = json!({"type": "prompt", "content": format!("spawn run touch {name}")});
    rpc.send(&prompt.to_string());
    let lines = rpc.until_all(&[&|l| is_type(l, "approval_request"), &|l| {
        is_type(l, "subagent_event") && l["event"]["type"] == "tool_execution_start"
    }]);
    let request = lines
        .iter()
        .find(|l| is_type(l, "approval_request"))
        .unwrap()
        .clone();
    let start = lines
        .iter()
        .find(|l| is_type(l, "subagent_event") && l["event"]["type"] == "tool_execution_start")
        .unwrap();
    let id = format!("subagent-{number}");
    assert_eq!(request["tool_name"], "exec");
    assert_eq!(request["args"]["command"], format!("touch {name}"));
    assert_eq!(request["subagent"]["id"], id.as_str());
    assert_eq!(request["subagent"]["label"], format!("Task {number}"));
    assert_eq!(request["subagent"]["task"], format!("run touch {name}"));
    assert_eq!(start["subagent_id"], id.as_str());
    assert_eq!(request["tool_call_id"], start["event"]["tool_call_id"]);
    assert!(
        !rpc.sandbox.workspace().join(name).exists(),
        "the command ran before it was approved"
    );
    request
}

fn answer_and_wait(rpc: &mut Rpc, request: &Value, decision: &str, number: u32) -> Vec<Value> {
    let approve = json!({"type": "approve", "id": request["id"], "decision": decision});
    rpc.send(&approve.to_string());
    let id = format!("subagent-{number}");
    rpc.until_all(&[
        &|l| is_type(l, "response") && l["command"] == "approve" && l["ok"] == true,
        &|l| {
            is_type(l, "subagent_update") && l["info"]["id"] == id && l["info"]["status"] == "done"
        },
    ])
}

#[test]
fn rpc_asks_for_a_subagents_command_by_its_id_and_approve_answers_it() {
    let mut rpc = Rpc::start_with(0, ASK);
    let request = subagent_request(&mut rpc, 1, "allowed-marker");
    answer_and_wait(&mut rpc, &request, "allow", 1);
    assert!(rpc.sandbox.workspace().join("allowed-marker").exists());

    let request = subagent_request(&mut rpc, 2, "denied-marker");
    let lines = answer_and_wait(&mut rpc, &request, "deny", 2);
    assert!(!rpc.sandbox.workspace().join("denied-marker").exists());
    let ended = |l: &Value| {
        is_type(l, "subagent_event")
            && l["subagent_id"] == "subagent-2"
            && l["event"]["type"] == "tool_execution_end"
    };
    // Runtime events travel on their own channel: the end may come after the update.
    let denied = match lines.iter().find(|l| ended(l)) {
        Some(line) => line.clone(),
        None => rpc.until(ended).pop().unwrap(),
    };
    assert!(
        denied["event"]["result"]["content"]
            .as_str()
            .unwrap()
            .contains("The user denied"),
        "{denied}"
    );
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}
