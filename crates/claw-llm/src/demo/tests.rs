//! The demo model's phrases, a subagent's job and report, and the one-line answers to
//! receipts and notifications, checked on the texts the real tools and runtime produce.

use super::command::{Command, Work};
use super::*;
use crate::tap::RequestTap;
use claw_agent::{ThinkingLevel, ToolDefinition, UserMessage};
use serde_json::json;

const MAIN_TOOLS: &[&str] = &["list_dir", "read_file", "exec", "spawn", "message", "cron"];
/// What the tool policy offers subagents: no `spawn`, `message` or `cron`.
const SUBAGENT_TOOLS: &[&str] = &["list_dir", "read_file", "exec"];

fn demo() -> DemoProvider {
    DemoProvider::new(Duration::ZERO, "/x/config.toml").unwrap()
}

fn request(tools: &[&str], messages: Vec<LlmMessage<'static>>) -> LlmRequest<'static> {
    LlmRequest {
        system_prompt: String::new(),
        messages,
        tools: tools
            .iter()
            .map(|name| ToolDefinition {
                name: (*name).to_owned(),
                description: String::new(),
                parameters: json!({}),
            })
            .collect(),
        model: DEMO_MODEL.to_owned(),
        thinking: ThinkingLevel::Off,
    }
}

fn user(text: &str) -> LlmMessage<'static> {
    UserMessage::new(text).into()
}

/// The demo's own call of `name` with `args`, as the history holds it.
fn called(name: &str, args: Value) -> LlmMessage<'static> {
    let mut message = AssistantMessage::empty(DEMO_MODEL);
    message.stop_reason = StopReason::ToolUse;
    message.content.push(Block::ToolCall {
        id: "c1".into(),
        name: name.into(),
        args,
    });
    message.into()
}

fn result(name: &str, content: &str, is_error: bool) -> LlmMessage<'static> {
    ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: name.into(),
        content: content.into(),
        images: Vec::new(),
        details: Value::Null,
        is_error,
        timestamp: 0,
    }
    .into()
}

/// What the demo answers to `asked`, once its call of `tool` returned `content`.
fn after(role: Role, asked: &str, tool: &str, content: &str, is_error: bool) -> String {
    let (tool_name, args) = Command::parse(asked).unwrap().call();
    assert_eq!(tool_name, tool);
    let tools = match role {
        Role::Main => MAIN_TOOLS,
        Role::Subagent => SUBAGENT_TOOLS,
    };
    let messages = vec![
        user(asked),
        called(tool, args),
        result(tool, content, is_error),
    ];
    let (text, call) = demo().answer(&request(tools, messages), role);
    assert!(call.is_none(), "{call:?}");
    text
}

/// What the main agent answers to a notification whose text is `text`.
fn notified(text: &str) -> String {
    let note = format!("{NOTIFICATION_PREFIX}\n{text}");
    demo()
        .answer(&request(MAIN_TOOLS, vec![user(&note)]), Role::Main)
        .0
}

fn work(text: &str) -> Option<Work> {
    match Command::parse(text)? {
        Command::Work(work) => Some(work),
        _ => None,
    }
}

#[test]
fn phrases_map_to_tool_calls() {
    let call = |text: &str| Command::parse(text).map(|c| c.call());
    assert_eq!(call("list files").unwrap().0, "list_dir");
    assert_eq!(
        call("read src/main.rs"),
        Some(("read_file".into(), json!({"path": "src/main.rs"})))
    );
    assert_eq!(
        call("Run echo hi && ls"),
        Some(("exec".into(), json!({"command": "echo hi && ls"})))
    );
    assert_eq!(
        call("every 30 seconds check the build"),
        Some((
            "cron".into(),
            json!({"action": "add", "every_seconds": 30, "message": "check the build"})
        ))
    );
    assert_eq!(
        call("stop cron-2"),
        Some(("cron".into(), json!({"action": "remove", "id": "cron-2"})))
    );
    assert_eq!(
        call("spawn count the lines in README.md"),
        Some((
            "spawn".into(),
            json!({"task": "count the lines in README.md"})
        ))
    );
    assert_eq!(
        call("Message the build is green"),
        Some(("message".into(), json!({"content": "the build is green"})))
    );
    assert_eq!(Command::parse("what can you do?"), None);
    assert_eq!(Command::parse("read "), None);
    assert_eq!(Command::parse("every 30 minutes stretch"), None);
}

#[test]
fn a_prompt_after_an_interruption_note_and_an_at_mention_still_parse() {
    let call = |text: &str| Command::parse(text).map(|c| c.call());
    let noted =
        "[The previous message got no complete answer: it was interrupted.]\n\ncount the files";
    assert_eq!(call(noted), call("count the files"));
    assert!(call(noted).is_some());
    assert_eq!(call("read @README.md"), call("read README.md"));
    assert_eq!(
        call("count the lines in @src/main.rs"),
        call("count the lines in src/main.rs")
    );
}

#[test]
fn counting_phrases_keep_the_path_as_typed() {
    let lines = |path: &str| {
        Some(Work::CountLines {
            path: path.to_owned(),
        })
    };
    assert_eq!(work("count the lines in README.md"), lines("README.md"));
    assert_eq!(work("Count lines of src/Main.rs"), lines("src/Main.rs"));
    assert_eq!(work("how many lines are in notes.txt?"), lines("notes.txt"));
    assert_eq!(work("count the lines"), None);
    let files = |path: &str| {
        Some(Work::CountFiles {
            path: path.to_owned(),
        })
    };
    assert_eq!(work("count the files"), files("."));
    assert_eq!(work("how many files are there in src?"), files("src"));
    assert_eq!(work("count files in Docs"), files("Docs"));
    // A word that only starts like the phrase is not it.
    assert_eq!(work("count filesystems"), None);
    assert_eq!(
        work("list files in src"),
        Some(Work::ListFiles { path: "src".into() })
    );
    assert_eq!(
        work("please list files"),
        Some(Work::ListFiles { path: ".".into() })
    );
}

#[test]
fn a_subagent_does_its_task_with_a_tool_call() {
    let demo = demo();
    let task = request(SUBAGENT_TOOLS, vec![user("count the lines in README.md")]);
    let (_, call) = demo.answer(&task, Role::Subagent);
    assert_eq!(
        call,
        Some(("read_file".into(), json!({"path": "README.md"})))
    );
}

#[test]
fn a_subagent_reports_in_one_line() {
    let file: String = (1..=120).map(|i| format!("line {i}\n")).collect();
    // `read_file` drops the last newline and joins the lines.
    let shown = file.trim_end_matches('\n');
    let count = after(
        Role::Subagent,
        "count the lines in README.md",
        "read_file",
        shown,
        false,
    );
    assert_eq!(count, "README.md has 120 lines.");
    // A trailing empty line counts, as `read_file` counts it.
    let count = after(
        Role::Subagent,
        "count the lines in a",
        "read_file",
        "x\n",
        false,
    );
    assert_eq!(count, "a has 2 lines.");
    // A file longer than one read: the total comes from the note.
    let cut =
        "l1\nl2\n\n[Showing lines 1-2000 of 4567 (2000-line limit). Use offset=2001 to continue.]";
    let count = after(
        Role::Subagent,
        "count the lines in big.log",
        "read_file",
        cut,
        false,
    );
    assert_eq!(count, "big.log has 4567 lines.");
    let empty = after(
        Role::Subagent,
        "count the lines in e",
        "read_file",
        "[e is empty.]",
        false,
    );
    assert_eq!(empty, "e has 0 lines.");
    let empty = after(
        Role::Subagent,
        "read e",
        "read_file",
        "[e is empty.]",
        false,
    );
    assert_eq!(empty, "e has 0 lines.");

    let listing = "[folder] src/\n[file] README.md (1.2 KB)\n[file] notes.txt (5 B)";
    let listed = after(Role::Subagent, "list files", "list_dir", listing, false);
    assert_eq!(
        listed,
        "The workspace holds 2 files and 1 folder: src/, README.md, notes.txt."
    );
    let read = after(
        Role::Subagent,
        "read notes.txt",
        "read_file",
        "\nhello\nworld",
        false,
    );
    assert_eq!(read, "notes.txt has 3 lines; it begins “hello”.");
    let ran = after(
        Role::Subagent,
        "run date",
        "exec",
        "Mon Dec 7\n[exit code: 0]",
        false,
    );
    assert_eq!(
        ran,
        "`date` exited with code 0; its last line of output: “Mon Dec 7”."
    );

    let missing = "Error: File not found: nope.md. Check the path; list_dir shows what exists.";
    let failed = after(
        Role::Subagent,
        "count the lines in nope.md",
        "read_file",
        missing,
        true,
    );
    assert_eq!(
        failed,
        "I could not count the lines in nope.md: File not found: nope.md."
    );
    for report in [count, listed, read, ran, failed] {
        assert!(
            !report.contains('\n') && !report.contains("```"),
            "{report}"
        );
    }
}

#[test]
fn a_subagent_that_cannot_do_its_task_says_so_in_one_line() {
    let demo = demo();
    let (text, call) = demo.answer(
        &request(SUBAGENT_TOOLS, vec![user("refactor the parser")]),
        Role::Subagent,
    );
    assert!(call.is_none());
    assert!(
        text.starts_with("I can't do “refactor the parser”"),
        "{text}"
    );
    assert!(
        text.contains("spawn count the lines in README.md"),
        "{text}"
    );
    assert!(
        !text.contains('\n') && !text.contains(&demo.help()),
        "{text}"
    );

    // Subagents have no `spawn`: it says which tool is missing.
    let (text, call) = demo.answer(
        &request(SUBAGENT_TOOLS, vec![user("spawn list files")]),
        Role::Subagent,
    );
    assert!(call.is_none());
    assert!(text.contains("no `spawn` tool"), "{text}");
}

#[test]
fn the_main_agent_acknowledges_receipts_in_one_line() {
    let receipt = "Started subagent subagent-1 (\"Task 1\"); 1 running now. Its result will \
                   arrive as a system notification when it finishes; you do not need to wait for it.";
    let spawned = after(
        Role::Main,
        "spawn count the lines in README.md",
        "spawn",
        receipt,
        false,
    );
    assert_eq!(
        spawned,
        "subagent-1 is on it in the background; its report will arrive here as a notification."
    );
    let queued = "Queued subagent subagent-5 (\"Task 5\") at position 1: 4 subagents are …";
    let waits = after(Role::Main, "spawn list files", "spawn", queued, false);
    assert!(
        waits.starts_with("subagent-5 waits for a free slot"),
        "{waits}"
    );

    let added = "Added cron job \"check the build\" (cron-1): every 30 seconds. Next fire: in 30s.";
    let scheduled = after(
        Role::Main,
        "every 30 seconds check the build",
        "cron",
        added,
        false,
    );
    assert_eq!(
        scheduled,
        "Scheduled cron-1: every 30 seconds, “check the build” will arrive here as a \
         notification. `stop cron-1` removes it."
    );
    let removed = "Removed cron job \"check the build\" (cron-1).";
    let stopped = after(Role::Main, "stop cron-1", "cron", removed, false);
    assert_eq!(stopped, "Removed cron-1; it will not fire again.");
    let sent = after(
        Role::Main,
        "message hi",
        "message",
        "Message sent to cli:direct",
        false,
    );
    assert!(sent.starts_with("Sent"), "{sent}");

    // The main agent counts as a subagent does; what the user asked to see is quoted.
    let counted = after(
        Role::Main,
        "count the lines in a.txt",
        "read_file",
        "x\ny",
        false,
    );
    assert_eq!(counted, "a.txt has 2 lines.");
    let quoted = after(Role::Main, "read a.txt", "read_file", "x\ny", false);
    assert!(
        quoted.contains("returned:") && quoted.contains("x\ny"),
        "{quoted}"
    );
}

#[test]
fn a_subagents_report_gets_a_one_line_answer() {
    let answer = notified("[Subagent \"Task 1\" (subagent-1) completed]\nREADME.md has 120 lines.");
    assert_eq!(
        answer,
        "Task 1 (subagent-1) completed: README.md has 120 lines."
    );
    let answer = notified(
        "[Subagent \"Task 2\" (subagent-2) cancelled]\nIt was cancelled by the user before \
         it finished. It had not written any answer yet.",
    );
    assert!(
        answer.starts_with("Task 2 (subagent-2) cancelled: It was cancelled"),
        "{answer}"
    );
    assert!(
        !answer.contains('\n') && !answer.contains("```"),
        "{answer}"
    );
}

#[test]
fn a_cron_fire_gets_one_short_line() {
    let answer = notified("[Cron job \"check the build\" (cron-1) fired]\ncheck the build");
    assert_eq!(
        answer,
        "cron-1 fired: “check the build”. A real model would act on it now; `stop cron-1` \
         removes the job."
    );
}

#[test]
fn a_backlog_is_summed_up_in_one_line() {
    let answer = notified(
        "3 background results arrived; each is listed below, oldest first.\n\n\
         1. [Cron job \"ping\" (cron-1) fired]\nping\n\n\
         2. [Subagent \"Task 1\" (subagent-1) completed]\na has 2 lines.\n\n\
         3. [Cron job \"ping\" (cron-1) fired]\nping",
    );
    assert_eq!(
        answer,
        "3 background results arrived: cron-1 fired (2×); Task 1 (subagent-1) completed."
    );
    assert_eq!(
        notified("something else"),
        "A background notification arrived; it is shown above."
    );
}

#[tokio::test]
async fn the_request_taps_agent_name_tells_a_subagent_from_the_main_agent() {
    use futures::StreamExt;
    let demo = demo();
    let final_text = |stream: LlmStream| async move {
        let events: Vec<LlmEvent> = stream.collect().await;
        match events.last() {
            Some(LlmEvent::Done(message)) => message.text(),
            other => panic!("no final message: {other:?}"),
        }
    };
    let tagged = |agent: &str| {
        CallOrigin::new(RequestOrigin {
            agent: agent.to_owned(),
            tap: RequestTap::default(),
        })
    };
    let unknown = || request(SUBAGENT_TOOLS, vec![user("refactor the parser")]);
    let cancel = CancellationToken::new;
    let sub = demo.stream_for(unknown(), cancel(), &tagged("subagent-1"));
    assert!(final_text(sub).await.starts_with("I can't do"));
    let main = demo.stream_for(unknown(), cancel(), &tagged(MAIN_AGENT));
    assert_eq!(final_text(main).await, demo.help());
    assert_eq!(
        final_text(demo.stream(unknown(), cancel())).await,
        demo.help()
    );
}

#[test]
fn the_help_lists_every_command() {
    let help = demo().help();
    assert!(help.contains("```sh") && help.contains("/x/config.toml"));
    for command in [
        "`list files`",
        "`read PATH`",
        "`run COMMAND`",
        "`count the lines in PATH`",
        "`count the files`",
        "`spawn TASK`",
        "`spawn count the lines in README.md`",
        "`message TEXT`",
        "`every N seconds TEXT`",
        "`every 30 seconds check the build`",
        "`stop JOB`",
    ] {
        assert!(help.contains(command), "{command} is missing from:\n{help}");
    }
    // Each example in the help is a phrase the demo understands.
    for example in [
        "read README.md",
        "spawn count the lines in README.md",
        "every 30 seconds check the build",
        "stop cron-1",
    ] {
        assert!(Command::parse(example).is_some(), "{example}");
    }
}
