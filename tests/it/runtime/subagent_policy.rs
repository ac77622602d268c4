#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The tool policy holds for every agent of the real runtime (`setup::start_runtime_with`
//! on settings read from a config file): a hostile subagent, spawned through the real
//! `spawn` tool, cannot run `exec` under `always-deny`, nor under `ask` with nobody to
//! ask, nor use tools that `[tools] disabled` removes; its approval requests name it;
//! and a run a cron job starts is held to the same rules. Checked on the file system.

use crate::support::exec::scripted_asker;
use crate::support::runtime::{RoutingProvider, settings, until_runtime};
use crate::support::{DEADLINE, Reply, sent_results};
use claw_tui::agent::{AgentEvent, EventKind};
use claw_tui::llm::LlmRequest;
use claw_tui::runtime::RuntimeEvent;
use claw_tui::setup::{MainRuntime, start_runtime_with};
use claw_tui::tools::cron::CronSchedule;
use claw_tui::tools::exec::{
    ALWAYS_DENY_REASON, ApprovalDecision, Approver, NOBODY_TO_ASK_REASON, USER_DENIED_REASON,
};
use claw_tui::tools::message::MessageSender;
use claw_tui::tools::policy::SubagentRef;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

const PROMPT: &str = "do the task in the background";
const TASK: &str = "clean up the build directory";
/// What the hostile subagent tries: a marker file made by a command, and a file
/// written by the command.
const HOSTILE: &str = "touch exec-ran && echo pwned > written-by-exec.txt";

struct Hostile {
    _home: TempDir,
    workspace: PathBuf,
    provider: Arc<RoutingProvider>,
    main: MainRuntime,
}

impl Hostile {
    /// The runtime on `config`, the main agent scripted to spawn a subagent on [`TASK`]
    /// and the subagent scripted with `subagent`.
    fn start(config: &str, approver: Approver, subagent: Vec<Reply>) -> Self {
        let (home, settings) = settings(config);
        let provider = RoutingProvider::new();
        provider.route(
            PROMPT,
            vec![
                Reply::tool_calls(&[(
                    "main-1",
                    "spawn",
                    json!({"task": TASK, "label": "cleanup"}),
                )]),
                Reply::text(&["Started it."]),
                Reply::text(&["Noted its report."]),
            ],
        );
        provider.route(TASK, subagent);
        let outbound: MessageSender = Arc::new(|_| {});
        let main = start_runtime_with(&settings, provider.clone(), outbound, approver).unwrap();
        Self {
            workspace: settings.workspace.clone(),
            _home: home,
            provider,
            main,
        }
    }

    /// Submits the prompt and waits until the subagent has ended; returns its requests.
    async fn run(&mut self) -> Vec<LlmRequest<'static>> {
        self.main.supervisor.submit(PROMPT);
        until_runtime(&mut self.main.events, |e| {
            matches!(e, RuntimeEvent::SubagentUpdate { info }
                if info.id == "subagent-1" && info.status.is_finished())
        })
        .await;
        self.main.subagents.wait_all().await;
        let requests = self.provider.requests(TASK);
        self.main.subagents.shutdown().await;
        self.main.supervisor.stop().await;
        requests
    }

    fn exists(&self, name: &str) -> bool {
        self.workspace.join(name).exists()
    }
}

fn offered(request: &LlmRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

fn exec_call(id: &str, command: &str) -> Reply {
    Reply::tool_calls(&[(id, "exec", json!({"command": command}))])
}

fn assert_untouched(workspace: &Path) {
    let left: Vec<String> = std::fs::read_dir(workspace)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "the workspace must stay empty: {left:?}");
}

/// A subagent under `config` and `approver` calls exec with [`HOSTILE`]: the command
/// never runs, the workspace stays empty, and the model is told `reason` as an error.
async fn hostile_exec_is_refused(config: &str, approver: Approver, reason: &str) {
    let mut h = Hostile::start(
        config,
        approver,
        vec![
            exec_call("s1", HOSTILE),
            Reply::text(&["Could not run it."]),
        ],
    );
    let requests = h.run().await;
    assert!(!h.exists("exec-ran"), "the command ran");
    assert_untouched(&h.workspace);
    let results = sent_results(&requests[1]);
    assert_eq!(results[0].content, reason);
    assert!(results[0].is_error);
}

#[tokio::test]
async fn a_subagent_under_always_deny_cannot_run_exec_even_with_an_approving_user() {
    // The user would approve anything; always-deny must win without asking.
    let (asker, asked) = scripted_asker(&[ApprovalDecision::Allow; 4]);
    hostile_exec_is_refused(
        "[exec]\napproval = \"always-deny\"\n",
        Approver::Ask(asker),
        ALWAYS_DENY_REASON,
    )
    .await;
    assert!(asked.lock().unwrap().is_empty(), "always-deny asks nobody");
}

#[tokio::test]
async fn a_subagent_in_ask_mode_with_nobody_to_ask_is_denied_with_a_reason() {
    hostile_exec_is_refused(
        "[exec]\napproval = \"ask\"\n",
        Approver::Nobody,
        NOBODY_TO_ASK_REASON,
    )
    .await;
}

#[tokio::test]
async fn disabled_tools_are_neither_offered_to_a_subagent_nor_run() {
    let mut h = Hostile::start(
        "[tools]\ndisabled = [\"exec\", \"write_file\"]\n",
        Approver::AllowAll,
        vec![
            Reply::tool_calls(&[
                ("s1", "exec", json!({"command": HOSTILE})),
                (
                    "s2",
                    "write_file",
                    json!({"path": "written.txt", "content": "pwned"}),
                ),
            ]),
            Reply::text(&["Neither tool exists."]),
        ],
    );
    let main_tools: Vec<String> = h
        .main
        .policy
        .tools_for(&claw_tui::tools::policy::AgentRole::Main)
        .names();
    let requests = h.run().await;
    let offered = offered(&requests[0]);
    assert_eq!(
        offered,
        ["read_file", "list_dir", "web_search", "web_fetch"]
    );
    assert!(!main_tools.contains(&"exec".into()) && !main_tools.contains(&"write_file".into()));
    assert!(main_tools.contains(&"spawn".into()), "{main_tools:?}");
    let prompt = &requests[0].system_prompt;
    assert!(
        !prompt.contains("write_file"),
        "the prompt lists a disabled tool"
    );
    let results = sent_results(&requests[1]);
    assert_eq!(results[0].content, "Tool \"exec\" not found");
    assert_eq!(results[1].content, "Tool \"write_file\" not found");
    assert!(!h.exists("exec-ran") && !h.exists("written.txt"));
    assert_untouched(&h.workspace);
}

#[tokio::test]
async fn a_subagent_asks_naming_itself_and_runs_only_what_the_user_allows() {
    let (asker, asked) = scripted_asker(&[ApprovalDecision::Deny, ApprovalDecision::Allow]);
    let mut h = Hostile::start(
        "[exec]\napproval = \"ask\"\n",
        Approver::Ask(asker),
        vec![
            exec_call("s1", "touch denied-marker"),
            exec_call("s2", "touch allowed-marker"),
            Reply::text(&["One of two ran."]),
        ],
    );
    let requests = h.run().await;
    assert!(!h.exists("denied-marker"), "a denied command ran");
    assert!(
        h.exists("allowed-marker"),
        "the allowed command did not run"
    );
    assert_eq!(sent_results(&requests[1])[0].content, USER_DENIED_REASON);
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    let who = SubagentRef {
        id: "subagent-1".into(),
        label: "cleanup".into(),
        task: TASK.into(),
    };
    for (request, call) in asked.iter().zip(["s1", "s2"]) {
        assert_eq!(request.subagent.as_ref(), Some(&who));
        assert_eq!(request.tool_call_id, call);
        assert_eq!(request.tool_name, "exec");
    }
    assert_ne!(asked[0].id, asked[1].id);
}

#[tokio::test]
async fn a_run_started_by_a_cron_job_is_held_to_the_policy() {
    let (home, settings) = settings("[exec]\napproval = \"always-deny\"\n");
    let provider = RoutingProvider::new();
    // The fire reaches the main agent as a notification: a conversation no route knows.
    provider
        .unrouted()
        .push(exec_call("cron-call", "touch cron-ran"));
    provider.unrouted().push(Reply::text(&["Could not."]));
    let outbound: MessageSender = Arc::new(|_| {});
    let main =
        start_runtime_with(&settings, provider.clone(), outbound, Approver::AllowAll).unwrap();
    let mut ends = main.agent.subscribe(Some(&[EventKind::ToolExecutionEnd]));
    let cron = main.cron.clone().unwrap();
    let job = cron
        .add(
            Some("cleanup".into()),
            "clean up".into(),
            CronSchedule::EverySeconds(1),
        )
        .unwrap();
    let scheduler = main.start_cron_scheduler().unwrap().unwrap();
    let end = tokio::time::timeout(DEADLINE, ends.recv())
        .await
        .expect("the cron job did not start a run")
        .unwrap();
    cron.remove(&job.id).unwrap();
    scheduler.stop().await;
    let AgentEvent::ToolExecutionEnd { result, .. } = end else {
        panic!("expected a tool end, got {end:?}");
    };
    assert_eq!(result.content, ALWAYS_DENY_REASON);
    assert!(!settings.workspace.join("cron-ran").exists());
    assert!(
        provider.unrouted().requests()[0]
            .messages
            .iter()
            .any(|m| format!("{m:?}").contains("Cron job \\\"cleanup\\\"")),
        "the run was started by the cron fire"
    );
    main.supervisor.stop().await;
    drop(home);
}
