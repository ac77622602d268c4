//! The controls over `--mode rpc` in the real binary, against the fake OpenAI-compatible
//! server: `undo` and `rewind` put files and the conversation back, and plan mode
//! (`set_mode`, `--plan`) takes every mutating tool out of the request and puts them
//! back, with the plan-mode note in the system prompt only while it is on; and hooks run
//! as in the client (a blocked prompt is refused and never sent, a blocked call leaves
//! its mark in the event, a failed hook is a `hook_warning` line).

use crate::support::bin::Sandbox;
use crate::support::fake_llm::openai::{done_marker, finish, text_reply, tool, usage};
use crate::support::fake_llm::{FakeLlm, Recorded, Scripted};
use crate::support::rpc::Rpc;
use serde_json::{Value, json};

/// A streamed reply calling `name` with `args`.
fn tool_reply(id: &str, name: &str, args: Value) -> Scripted {
    Scripted::sse([
        tool(Some(0), Some(id), Some(name), &args.to_string()),
        finish("tool_calls"),
        usage(10, 5, 0),
        done_marker(),
    ])
}

fn sandbox_for(server: &FakeLlm) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&format!(
        "provider = \"local\"\n\n[providers.local]\napi = \"openai\"\nbase_url = \"{}/v1\"\n\
         model = \"fake\"\n",
        server.url()
    ));
    sandbox
}

fn is_end(line: &Value) -> bool {
    line["type"] == "agent_end"
}

fn response(rpc: &Rpc, command: &str) -> Value {
    rpc.until(|l| l["type"] == "response" && l["command"] == command)
        .pop()
        .unwrap()
}

fn prompt(rpc: &mut Rpc, text: &str) {
    rpc.send(&json!({"type": "prompt", "content": text}).to_string());
    rpc.until(is_end);
}

fn system_prompt(request: &Recorded) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

const MUTATING: [&str; 6] = [
    "write_file",
    "edit_file",
    "exec",
    "cron",
    "spawn",
    "message",
];

#[tokio::test(flavor = "multi_thread")]
async fn rpc_undo_removes_what_the_turn_created_and_rewind_cuts_the_conversation() {
    let server = FakeLlm::start(vec![
        tool_reply(
            "call_1",
            "write_file",
            json!({"path": "notes/plan.md", "content": "step 1\n"}),
        ),
        Scripted::sse(text_reply(&["Wrote the plan."])),
        Scripted::sse(text_reply(&["Second answer."])),
    ])
    .await;
    let sandbox = sandbox_for(&server);
    let ws = sandbox.workspace();
    let mut rpc = Rpc::start_in(sandbox, 0, &[]);
    prompt(&mut rpc, "write the plan");
    assert!(ws.join("notes/plan.md").exists());
    prompt(&mut rpc, "and then?");

    rpc.send(r#"{"type":"undo"}"#);
    let undone = response(&rpc, "undo");
    assert_eq!(undone["ok"], true, "{undone}");
    assert_eq!(undone["report"]["removed"], json!(["notes/plan.md"]));
    assert_eq!(undone["report"]["turns"], json!(["write the plan"]));
    assert!(!ws.join("notes/plan.md").exists(), "the file is gone");
    assert!(
        undone["message"]
            .as_str()
            .unwrap()
            .contains("Removed notes/plan.md"),
        "{undone}"
    );

    rpc.send(r#"{"type":"rewind","turn":2,"conversation":true}"#);
    let rewound = response(&rpc, "rewind");
    assert_eq!(rewound["ok"], true, "{rewound}");
    assert_eq!(rewound["conversation"]["prompt"], "and then?");
    assert_eq!(rewound["conversation"]["message_count"], 4);
    rpc.send(r#"{"type":"get_state"}"#);
    assert_eq!(response(&rpc, "get_state")["state"]["message_count"], 4);

    rpc.send(r#"{"type":"rewind","turn":9,"files":true}"#);
    let refused = response(&rpc, "rewind");
    assert_eq!(refused["ok"], false);
    assert!(
        refused["error"].as_str().unwrap().contains("no turn 9"),
        "{refused}"
    );
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_offers_no_mutating_tool_and_switching_back_restores_them() {
    let server = FakeLlm::start(vec![
        Scripted::sse(text_reply(&["1. read main.rs\n2. change it"])),
        Scripted::sse(text_reply(&["Implementing."])),
    ])
    .await;
    let sandbox = sandbox_for(&server);
    let mut rpc = Rpc::start_in(sandbox, 0, &[]);
    rpc.send(r#"{"type":"set_mode","mode":"plan"}"#);
    let switched = response(&rpc, "set_mode");
    assert_eq!(switched["mode"], "plan", "{switched}");
    prompt(&mut rpc, "plan the change");
    rpc.send(r#"{"type":"set_mode","mode":"default"}"#);
    response(&rpc, "set_mode");
    prompt(&mut rpc, "do it");

    let requests = server.requests();
    let planning = requests[0].tools_offered();
    for name in MUTATING {
        assert!(
            !planning.contains(&name.to_owned()),
            "{name} in {planning:?}"
        );
    }
    assert_eq!(
        planning,
        ["read_file", "list_dir", "web_search", "web_fetch"]
    );
    assert!(system_prompt(&requests[0]).contains("# Plan mode"));
    let doing = requests[1].tools_offered();
    for name in MUTATING {
        assert!(doing.contains(&name.to_owned()), "{name} back in {doing:?}");
    }
    assert!(!system_prompt(&requests[1]).contains("# Plan mode"));
    rpc.send(r#"{"type":"set_mode","mode":"sideways"}"#);
    let bad = response(&rpc, "set_mode");
    assert_eq!(bad["ok"], false, "{bad}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_flag_starts_in_plan_mode() {
    let server = FakeLlm::start(vec![Scripted::sse(text_reply(&["A plan."]))]).await;
    let sandbox = sandbox_for(&server);
    let mut rpc = Rpc::start_in(sandbox, 0, &["--plan"]);
    prompt(&mut rpc, "plan");
    let names = server.requests()[0].tools_offered();
    assert!(
        !names.iter().any(|n| MUTATING.contains(&n.as_str())),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_runs_the_hooks_a_blocked_prompt_is_refused_and_a_failed_hook_is_reported() {
    let server = FakeLlm::start(vec![
        tool_reply(
            "call_1",
            "write_file",
            json!({"path": "secret.txt", "content": "x"}),
        ),
        Scripted::sse(text_reply(&["Could not write."])),
    ])
    .await;
    let sandbox = sandbox_for(&server);
    let config = std::fs::read_to_string(sandbox.config_path()).unwrap();
    sandbox.write_config(&format!(
        "{config}\n[[hooks.prompt]]\ncommand = \"grep -q password && {{ echo 'no passwords' >&2; exit 2; }} || exit 0\"\n\n\
         [[hooks.before_tool]]\ncommand = \"echo broken >&2; exit 3\"\n\n\
         [[hooks.before_tool]]\nmatch = \"^write_file$\"\ncommand = \"echo 'not here' >&2; exit 2\"\n"
    ));
    let ws = sandbox.workspace();
    let mut rpc = Rpc::start_in(sandbox, 0, &[]);

    rpc.send(&json!({"type": "prompt", "content": "my password is hunter2"}).to_string());
    let refused = response(&rpc, "prompt");
    assert_eq!(refused["ok"], false, "{refused}");
    assert_eq!(refused["blocked"], true, "{refused}");
    assert_eq!(refused["error"], "a prompt hook blocked it: no passwords");

    rpc.send(&json!({"type": "prompt", "content": "write the secret"}).to_string());
    let is_warning = |l: &Value| l["type"] == "hook_warning";
    let mut lines = rpc.until(is_end);
    if !lines.iter().any(is_warning) {
        // Runtime events share the output with the agent's but are not ordered with them.
        lines.extend(rpc.until(is_warning));
    }
    assert!(
        !ws.join("secret.txt").exists(),
        "the blocked write happened"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the blocked prompt was never sent");
    let sent = requests[1].body["messages"].to_string();
    assert!(!sent.contains("hunter2"), "{sent}");
    assert!(sent.contains("Blocked by a hook: not here"), "{sent}");
    let warning = lines
        .iter()
        .find(|l| l["type"] == "hook_warning")
        .unwrap_or_else(|| panic!("no hook_warning line in {lines:#?}"));
    assert_eq!(warning["event"], "before_tool");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("exited with code 3: broken"),
        "{warning}"
    );
    let ended = lines
        .iter()
        .find(|l| l["type"] == "tool_execution_end")
        .unwrap_or_else(|| panic!("no tool_execution_end in {lines:#?}"));
    assert_eq!(
        ended["result"]["details"]["hook"]["blocked"], "not here",
        "{ended}"
    );
    let (code, _) = rpc.close_and_wait();
    assert_eq!(code, 0);
}
