//! The cost of the user's controls: the structured diff of an edit in a 10,000-line
//! file, rendering a 1,000-line hunk (folded and not), `write_file` of 100 KB with and
//! without the checkpoint store listening, and a tool call through the policy with one
//! `before_tool` hook (`true`, so the cost is starting it under the launcher), and an
//! `exec` of `true` in a git repository with and without the checkpoints' `git status`
//! around it (each run sandboxed under the launcher).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::{CheckedArgs, Tool, ToolSet, ToolUpdates};
use claw_tui::checkpoint::Checkpoints;
use claw_tui::hooks::{HookStage, Hooks, HooksConfig};
use claw_tui::runtime::RuntimeEventSender;
use claw_tui::theme::Theme;
use claw_tui::tools::exec::{Approver, ExecConfig, ExecTool};
use claw_tui::tools::fs::{ChangeObserver, FileChange, WriteFileTool, file_tools};
use claw_tui::tools::pipeline::{Caller, Step};
use claw_tui::tools::policy::{AgentRole, PolicyConfig, ToolPolicy};
use claw_tui::tools::{ToolRegistry, Workspace};
use claw_tui::trust::Trust;
use claw_tui::tui::diff;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn lines(n: usize) -> String {
    (0..n)
        .map(|i| format!("    let value_{i} = compute({i}, \"item {i}\");\n"))
        .collect()
}

fn diffs(c: &mut Criterion) {
    let mut group = c.benchmark_group("diff");
    let before = lines(10_000);
    let after = before
        .replacen("value_100 ", "renamed_100 ", 1)
        .replacen("value_5000 ", "renamed_5000 ", 1)
        .replacen("value_9000 ", "renamed_9000 ", 1);
    group.bench_function("edit_three_lines_in_10k", |b| {
        b.iter(|| {
            FileChange::between(
                "big.rs",
                Some(before.as_bytes()),
                Some(after.as_bytes()),
                false,
            )
        })
    });
    let created = FileChange::between("new.rs", None, Some(lines(1_000).as_bytes()), false);
    let theme = Theme::fallback();
    for fold in [true, false] {
        let name = if fold {
            "render_1000_line_hunk_folded"
        } else {
            "render_1000_line_hunk"
        };
        group.bench_function(name, |b| {
            b.iter(|| diff::render(&created, &theme, None, fold, 100))
        });
    }
    group.finish();
}

fn checkpoints(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("checkpoint");
    group.sample_size(30);
    let content = lines(2_500);
    assert!(content.len() > 100_000);
    for observed in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let ws = Arc::new(Workspace::new(dir.path().canonicalize().unwrap(), false));
        let mut tool = WriteFileTool::new(ws.clone());
        if observed {
            let observer: Arc<dyn ChangeObserver> = Arc::new(Checkpoints::new(ws));
            tool = tool.observed(Some(observer));
        }
        let name = if observed {
            "write_file_100kb_recorded"
        } else {
            "write_file_100kb"
        };
        let mut i = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                // A new content each time, so the store keeps a new blob each time.
                let args = json!({"path": "out.rs", "content": format!("// {i}\n{content}")});
                let args = CheckedArgs::for_tool(&tool, args).expect("valid arguments");
                runtime.block_on(tool.execute(
                    "c",
                    args,
                    CancellationToken::new(),
                    ToolUpdates::discard(),
                ))
            })
        });
    }
    group.finish();
}

fn hooks(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("hooks");
    group.sample_size(20);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let root = dir.path().canonicalize().unwrap();
    let registry: ToolRegistry = file_tools(Arc::new(Workspace::new(root.clone(), false)))
        .into_iter()
        .collect();
    let config: HooksConfig = toml::from_str("[[before_tool]]\ncommand = \"true\"\n").unwrap();
    let exec = ExecConfig {
        launcher: Some(env!("CARGO_BIN_EXE_claw-tui").into()),
        ..ExecConfig::default()
    };
    for hooked in [false, true] {
        let policy = ToolPolicy::new(registry.clone(), PolicyConfig::default(), Approver::Nobody);
        if hooked {
            let hooks = Hooks::new(
                config.clone(),
                &root,
                &exec,
                RuntimeEventSender::discard(),
                Trust::in_memory(&root),
            );
            policy
                .set_pipeline(vec![
                    Step::PlanGate,
                    Step::Stage(Arc::new(HookStage::new(hooks, None))),
                    Step::Approval,
                ])
                .unwrap();
        }
        let tools = policy.tools_for(&AgentRole::Main);
        let name = if hooked {
            "read_file_with_one_hook"
        } else {
            "read_file"
        };
        let (cancel, updates) = (CancellationToken::new(), ToolUpdates::discard());
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(tools.call(
                    None,
                    "read_file",
                    "c",
                    json!({"path": "a.txt"}),
                    &cancel,
                    &updates,
                ))
            })
        });
    }
    group.finish();
}

fn tracked_exec(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("exec");
    group.sample_size(20);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for i in 0..100 {
        std::fs::write(root.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .env("GIT_AUTHOR_NAME", "b")
            .env("GIT_AUTHOR_EMAIL", "b@example.com")
            .env("GIT_COMMITTER_NAME", "b")
            .env("GIT_COMMITTER_EMAIL", "b@example.com")
            .status()
            .unwrap();
        assert!(status.success());
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "files"]);
    let config = ExecConfig {
        launcher: Some(env!("CARGO_BIN_EXE_claw-tui").into()),
        ..ExecConfig::default()
    };
    for tracked in [false, true] {
        let exec = Arc::new(ExecTool::new(root.clone(), config.clone()));
        let stages = if tracked {
            let ws = Arc::new(Workspace::new(root.clone(), false));
            vec![Checkpoints::new(ws).exec_stage(exec.clone())]
        } else {
            Vec::new()
        };
        let caller = Caller {
            role: AgentRole::Main,
            by_user: false,
        };
        let interceptors = stages
            .iter()
            .filter_map(|stage| stage.interceptor(&caller))
            .collect();
        let tools = ToolSet::intercepted(vec![exec as Arc<dyn Tool>], interceptors);
        let name = if tracked {
            "true_with_git_status_around"
        } else {
            "true"
        };
        let (cancel, updates) = (CancellationToken::new(), ToolUpdates::discard());
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(tools.call(
                    None,
                    "exec",
                    "c",
                    json!({"command": "true"}),
                    &cancel,
                    &updates,
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, diffs, checkpoints, hooks, tracked_exec);
criterion_main!(benches);
