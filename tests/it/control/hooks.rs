//! Hooks with real `sh` scripts in temp dirs, run by the real runtime (the tool policy
//! of `setup::start_runtime_with`): blocking by exit 2 and by JSON, rewriting arguments
//! (validated again), replacing results, adding context to a prompt, a hanging hook
//! killed with everything it started at its timeout, failing hooks that only warn, and
//! a hook on a subagent's call. Each outcome is checked on the file system, in the
//! process table, and in what the model received.

use crate::support::control::Rig;
use crate::support::runtime::{RoutingProvider, settings, until_runtime};
use crate::support::{Reply, sent_results, tool_results, until_agent_end};
use claw_tui::agent::AgentEvent;
use claw_tui::hooks::{PromptDecision, hook_marks};
use claw_tui::runtime::RuntimeEvent;
use claw_tui::setup::start_runtime_with;
use claw_tui::tools::exec::Approver;
use claw_tui::tools::message::MessageSender;
use serde_json::{Value, json};
use std::sync::Arc;

fn write_call(id: &str, path: &str, content: &str) -> (String, String, Value) {
    (
        id.to_owned(),
        "write_file".to_owned(),
        json!({"path": path, "content": content}),
    )
}

fn calls(list: &[(String, String, Value)]) -> Reply {
    let borrowed: Vec<(&str, &str, Value)> = list
        .iter()
        .map(|(i, n, a)| (i.as_str(), n.as_str(), a.clone()))
        .collect();
    Reply::tool_calls(&borrowed)
}

fn before(command: &str, matcher: &str) -> String {
    format!(
        "[[hooks.before_tool]]\nmatch = \"{matcher}\"\ncommand = \"{command}\"\ntimeout_secs = 20\n"
    )
}

fn input(rig: &Rig, name: &str) -> Value {
    let text = std::fs::read_to_string(rig.trace(name)).unwrap();
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_2_blocks_the_call_and_the_model_reads_stderr() {
    let script =
        "cat > \"$(dirname \"$0\")/before.json\"; echo 'no writes in this repo' >&2; exit 2";
    let mut rig = Rig::start(
        &before("sh {scripts}/block.sh", "^write_file$"),
        &[("block.sh", script)],
        vec![
            calls(&[write_call("c1", "a.txt", "hello")]),
            Reply::text(&["ok"]),
        ],
    );
    let events = rig.prompt("write a.txt").await;
    assert!(
        !rig.file("a.txt").exists(),
        "the blocked write did not happen"
    );
    let sent = sent_results(&rig.provider.requests()[1]);
    assert_eq!(sent[0].content, "Blocked by a hook: no writes in this repo");
    assert!(sent[0].is_error);
    let result = &tool_results(&events)[0];
    assert_eq!(
        hook_marks(&result.details),
        ["⛔ blocked by hook: no writes in this repo"]
    );
    let seen = input(&rig, "before.json");
    assert_eq!(seen["event"], "before_tool");
    assert_eq!(seen["tool_name"], "write_file");
    assert_eq!(seen["tool_call_id"], "c1");
    assert_eq!(seen["args"], json!({"path": "a.txt", "content": "hello"}));
    assert_eq!(seen["agent"], "main");
    assert_eq!(seen["workspace"], rig.ws().display().to_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_decision_blocks_too() {
    let script =
        "cat > /dev/null; echo '{\"decision\": \"block\", \"reason\": \"use the build dir\"}'";
    let mut rig = Rig::start(
        &before("sh {scripts}/json.sh", "write"),
        &[("json.sh", script)],
        vec![
            calls(&[write_call("c1", "a.txt", "hello")]),
            Reply::text(&["ok"]),
        ],
    );
    rig.prompt("write").await;
    assert!(!rig.file("a.txt").exists());
    let sent = sent_results(&rig.provider.requests()[1]);
    assert_eq!(sent[0].content, "Blocked by a hook: use the build dir");
}

#[tokio::test(flavor = "multi_thread")]
async fn rewritten_arguments_are_used_and_an_invalid_rewrite_is_an_error() {
    let script = r#"input=$(cat)
case "$input" in
  *bad.txt*) echo '{"args": {"path": 5}}' ;;
  *) echo '{"args": {"path": "safe/out.txt", "content": "rewritten"}}' ;;
esac"#;
    let mut rig = Rig::start(
        &before("sh {scripts}/rewrite.sh", "^write_file$"),
        &[("rewrite.sh", script)],
        vec![
            calls(&[
                write_call("c1", "a.txt", "original"),
                write_call("c2", "bad.txt", "x"),
            ]),
            Reply::text(&["ok"]),
        ],
    );
    let events = rig.prompt("write both").await;
    assert!(!rig.file("a.txt").exists());
    assert!(!rig.file("bad.txt").exists());
    assert_eq!(
        std::fs::read_to_string(rig.file("safe/out.txt")).unwrap(),
        "rewritten"
    );
    let results = tool_results(&events);
    assert!(!results[0].is_error, "{:?}", results[0]);
    assert_eq!(
        hook_marks(&results[0].details),
        ["✎ args rewritten by hook"]
    );
    assert_eq!(
        results[0].details["hook"]["rewritten_args"]["path"],
        "safe/out.txt"
    );
    let sent = sent_results(&rig.provider.requests()[1]);
    assert!(sent[1].is_error);
    assert!(
        sent[1]
            .content
            .contains("rewrote the arguments of write_file into invalid ones")
            && sent[1].content.contains("/path"),
        "{}",
        sent[1].content
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_tool_replaces_the_result_the_model_gets() {
    let script = r#"cat > "$(dirname "$0")/after.json"
echo '{"result": "replaced by the hook", "is_error": false}'"#;
    let config =
        "[[hooks.after_tool]]\nmatch = \"^read_file$\"\ncommand = \"sh {scripts}/after.sh\"\n";
    let mut rig = Rig::start(
        config,
        &[("after.sh", script)],
        vec![
            Reply::tool_calls(&[("c1", "read_file", json!({"path": "notes.md"}))]),
            Reply::text(&["ok"]),
        ],
    );
    std::fs::write(rig.file("notes.md"), "secret plans\n").unwrap();
    let events = rig.prompt("read notes").await;
    let sent = sent_results(&rig.provider.requests()[1]);
    assert_eq!(sent[0].content, "replaced by the hook");
    assert_eq!(
        hook_marks(&tool_results(&events)[0].details),
        ["✎ result replaced by hook"]
    );
    let seen = input(&rig, "after.json");
    assert_eq!(seen["event"], "after_tool");
    assert!(
        seen["result"]["content"]
            .as_str()
            .unwrap()
            .contains("secret plans")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_hook_adds_context_or_blocks() {
    let script = r#"input=$(cat)
echo "$input" > "$(dirname "$0")/prompt.json"
case "$input" in
  *password*) echo 'do not paste passwords' >&2; exit 2 ;;
  *) echo '{"context": "House rule: tests live in t/."}' ;;
esac"#;
    let config = "[[hooks.prompt]]\ncommand = \"sh {scripts}/prompt.sh\"\n";
    let mut rig = Rig::start(config, &[("prompt.sh", script)], vec![Reply::text(&["ok"])]);
    rig.prompt("add a test").await;
    let sent = crate::support::runs::user_texts(&rig.provider.requests()[0]);
    assert_eq!(sent, ["add a test\n\nHouse rule: tests live in t/."]);
    assert_eq!(input(&rig, "prompt.json")["prompt"], "add a test");
    let blocked = rig
        .main
        .controls
        .hooks
        .prompt("my password is hunter2")
        .await;
    assert_eq!(
        blocked,
        PromptDecision::Block("do not paste passwords".into())
    );
    assert_eq!(rig.provider.requests().len(), 1, "nothing more was sent");
}

fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        // A zombie is dead; only its parent has not read its status yet.
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_hook_is_killed_with_everything_it_started_and_the_call_goes_on() {
    let script = r#"d=$(dirname "$0")
echo $$ > "$d/pid"
sleep 300 &
echo $! > "$d/child"
setsid sleep 300 &
echo $! > "$d/detached"
wait"#;
    let config = "[[hooks.before_tool]]\ncommand = \"sh {scripts}/hang.sh\"\ntimeout_secs = 1\n";
    let mut rig = Rig::start(
        config,
        &[("hang.sh", script)],
        vec![
            calls(&[write_call("c1", "a.txt", "written anyway")]),
            Reply::text(&["ok"]),
        ],
    );
    rig.prompt("write").await;
    assert_eq!(
        std::fs::read_to_string(rig.file("a.txt")).unwrap(),
        "written anyway"
    );
    for name in ["pid", "child", "detached"] {
        let pid = std::fs::read_to_string(rig.trace(name)).unwrap();
        assert!(!alive(&pid), "the hook's {name} process {pid} still runs");
    }
    let warning = rig.next_hook_warning().await;
    assert!(
        warning.contains("did not finish within 1 s") && warning.contains("hang.sh"),
        "{warning}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupting_the_run_kills_a_running_before_tool_hook_and_the_call_does_not_run() {
    // The hook would run far past the test's deadline: only the interrupt can end it.
    let script = r#"d=$(dirname "$0")
echo $$ > "$d/pid"
sleep 300 &
echo $! > "$d/child"
echo started > "$d/gate"
wait"#;
    let config = "[[hooks.before_tool]]\ncommand = \"sh {scripts}/slow.sh\"\ntimeout_secs = 300\n";
    let rig = Rig::start(
        config,
        &[("slow.sh", script)],
        vec![
            calls(&[write_call("c1", "a.txt", "must not be written")]),
            Reply::text(&["ok"]),
        ],
    );
    let gate = rig.trace("gate");
    nix::unistd::mkfifo(&gate, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut events = rig.main.agent.subscribe(None);
    rig.main.supervisor.submit("write".to_owned());
    // Opening the pipe for reading waits until the hook opens it to write: it runs.
    tokio::task::spawn_blocking(move || std::fs::read_to_string(gate).unwrap())
        .await
        .unwrap();
    rig.main.supervisor.abort();
    let events = until_agent_end(&mut events).await;
    assert!(
        !rig.file("a.txt").exists(),
        "the call ran after the interrupt"
    );
    for name in ["pid", "child"] {
        let pid = std::fs::read_to_string(rig.trace(name)).unwrap();
        assert!(!alive(&pid), "the hook's {name} process {pid} still runs");
    }
    let results = tool_results(&events);
    assert!(results[0].is_error);
    assert_eq!(results[0].content, claw_tui::hooks::CANCELLED_IN_HOOK);
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_hooks_warn_and_the_call_goes_on() {
    let config = "[[hooks.before_tool]]\ncommand = \"echo broken >&2; exit 3\"\n\n\
                  [[hooks.before_tool]]\ncommand = \"echo this is not json\"\n\n\
                  [[hooks.before_tool]]\ncommand = \"echo '{\\\"decision\\\": \\\"deny\\\"}'\"\n\n\
                  [[hooks.after_tool]]\ncommand = \"echo '{\\\"result\\\": 5}'\"\n";
    let mut rig = Rig::start(
        config,
        &[],
        vec![
            calls(&[write_call("c1", "a.txt", "fine")]),
            Reply::text(&["ok"]),
        ],
    );
    let events = rig.prompt("write").await;
    assert_eq!(std::fs::read_to_string(rig.file("a.txt")).unwrap(), "fine");
    assert!(!tool_results(&events)[0].is_error);
    let first = rig.next_hook_warning().await;
    assert!(first.contains("exited with code 3: broken"), "{first}");
    let second = rig.next_hook_warning().await;
    assert!(second.contains("not JSON"), "{second}");
    // A decision it does not know is no go-ahead in silence, nor a result not a string.
    let third = rig.next_hook_warning().await;
    assert!(
        third.contains(r#"its decision "deny" is neither "block" nor "allow""#),
        "{third}"
    );
    let fourth = rig.next_hook_warning().await;
    assert!(
        fourth.contains(r#"its "result" is 5, not a string"#),
        "{fourth}"
    );
    assert_eq!(
        sent_results(&rig.provider.requests()[1])[0].content,
        tool_results(&events)[0].content,
        "the result stayed the tool's"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagents_call_passes_the_same_hooks() {
    let scripts = tempfile::tempdir().unwrap();
    crate::support::control::script(
        scripts.path(),
        "block.sh",
        "cat > \"$(dirname \"$0\")/seen.json\"; echo 'subagents may not write' >&2; exit 2",
    );
    let (_home, settings) = settings(&format!(
        "[[hooks.before_tool]]\nmatch = \"^write_file$\"\ncommand = \"sh {0}/block.sh\"\n\n\
         [[hooks.notify]]\ncommand = \"cat >> {0}/notify.jsonl\"\n",
        scripts.path().display()
    ));
    let provider = RoutingProvider::new();
    provider.route(
        "delegate",
        vec![
            Reply::tool_calls(&[(
                "m1",
                "spawn",
                json!({"task": "write it", "label": "writer"}),
            )]),
            Reply::text(&["started"]),
            Reply::text(&["noted"]),
        ],
    );
    provider.route(
        "write it",
        vec![
            Reply::tool_calls(&[(
                "s1",
                "write_file",
                json!({"path": "sub.txt", "content": "x"}),
            )]),
            Reply::text(&["could not write"]),
        ],
    );
    let outbound: MessageSender = Arc::new(|_| {});
    let mut main =
        start_runtime_with(&settings, provider.clone(), outbound, Approver::Nobody).unwrap();
    let mut runs = main.agent.subscribe(None);
    main.supervisor.submit("delegate");
    until_runtime(
        &mut main.events,
        |e| matches!(e, RuntimeEvent::SubagentUpdate { info } if info.status.is_finished()),
    )
    .await;
    main.subagents.wait_all().await;
    assert!(!settings.workspace.join("sub.txt").exists());
    let sent = sent_results(&provider.requests("write it")[1]);
    assert_eq!(
        sent[0].content,
        "Blocked by a hook: subagents may not write"
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(scripts.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["agent"]["id"], "subagent-1");
    assert_eq!(seen["agent"]["task"], "write it");

    // The subagent's result reached the main agent (its run answered "noted"), and the
    // notify hook heard of it first.
    loop {
        let events = until_agent_end(&mut runs).await;
        let noted = events.iter().any(|e| {
            matches!(e, AgentEvent::AgentEnd { messages } if messages.iter().any(|m| {
                m.as_assistant().is_some_and(|a| a.text() == "noted")
            }))
        });
        if noted {
            break;
        }
    }
    main.controls.hooks.drain().await;
    let notified = std::fs::read_to_string(scripts.path().join("notify.jsonl")).unwrap();
    let notify: Value = serde_json::from_str(notified.lines().next().unwrap()).unwrap();
    assert_eq!(notify["event"], "notify");
    assert_eq!(notify["kind"], "subagent");
    assert!(
        notify["message"]
            .as_str()
            .unwrap()
            .contains("could not write"),
        "{notify}"
    );
    main.subagents.shutdown().await;
    main.supervisor.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_and_notify_hooks_hear_the_end_of_a_run_and_a_waiting_approval() {
    use claw_tui::tools::exec::{ApprovalAsker, ApprovalDecision};
    use futures::FutureExt;
    let record = |name: &str| format!("cat >> \"$(dirname \"$0\")/{name}.jsonl\"");
    let config = "[exec]\napproval = \"ask\"\n\n\
                  [[hooks.stop]]\ncommand = \"sh {scripts}/stop.sh\"\n\n\
                  [[hooks.notify]]\ncommand = \"sh {scripts}/notify.sh\"\n";
    let asker: ApprovalAsker = Arc::new(|_| async { ApprovalDecision::Allow }.boxed());
    let mut rig = Rig::start_with(
        config,
        &[
            ("stop.sh", &record("stop")),
            ("notify.sh", &record("notify")),
        ],
        vec![
            Reply::tool_calls(&[("c1", "exec", json!({"command": "echo approved > ran.txt"}))]),
            Reply::text(&["All done."]),
        ],
        Approver::Ask(asker),
    );
    rig.prompt("run it").await;
    assert!(rig.file("ran.txt").exists());
    rig.main.controls.hooks.drain().await;
    let notify = input(&rig, "notify.jsonl");
    assert_eq!(notify["event"], "notify");
    assert_eq!(notify["kind"], "approval");
    assert_eq!(notify["tool_name"], "exec");
    assert_eq!(notify["args"]["command"], "echo approved > ran.txt");
    let stop = input(&rig, "stop.jsonl");
    assert_eq!(stop["event"], "stop");
    assert_eq!(stop["last_answer"], "All done.");
}
