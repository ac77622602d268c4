//! What claw-tui adds to an MCP tool call: the same `echo` call to the fixture server
//! (examples/mcp_fixture/main.rs, over stdio), once straight through rmcp's client and once
//! as the agent makes it (argument validation, the policy's guard and approval gate,
//! our connection trait, the result conversion). The difference is the overhead
//! (target: under 1 ms).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::agent::ToolUpdates;
use claw_tui::mcp::{
    McpManager, McpServerState, Origin, ServerAccess, ServerConfig, ServerSpec, Transport,
};
use claw_tui::runtime::RuntimeEventSender;
use claw_tui::tools::ToolRegistry;
use claw_tui::tools::exec::{Approver, EnvPolicy};
use claw_tui::tools::policy::{AgentRole, PolicyConfig, ToolPolicy};
use claw_tui::trust::Trust;
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;

/// The fixture server, built by the same code as the integration tests use.
#[path = "../tests/it/support/mcp_fixture.rs"]
mod mcp_fixture;
use mcp_fixture::fixture_bin;

fn bench(c: &mut Criterion) {
    let bin = fixture_bin();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let raw = runtime.block_on(async {
        ().serve(TokioChildProcess::new(tokio::process::Command::new(&bin)).unwrap())
            .await
            .unwrap()
    });
    let policy = ToolPolicy::new(
        ToolRegistry::new(),
        PolicyConfig::default(),
        Approver::Nobody,
    );
    let spec = ServerSpec {
        name: "fixture".into(),
        config: ServerConfig::new(Transport::Stdio {
            command: bin.display().to_string(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        }),
        origin: Origin::User,
        entry: None,
    };
    let manager = McpManager::new(
        vec![spec],
        vec![],
        policy.clone(),
        RuntimeEventSender::discard(),
        ServerAccess::new(
            std::env::temp_dir(),
            &EnvPolicy::lenient(&[], &[]),
            Trust::in_memory(&std::env::temp_dir()),
        ),
    );
    runtime.block_on(async {
        manager.start();
        manager.wait_started().await;
    });
    assert_eq!(manager.servers()[0].state, McpServerState::Ready);
    let tools = policy.tools_for(&AgentRole::Main);
    let args = json!({"text": "a short line of text for the round trip"});

    let mut group = c.benchmark_group("mcp_call");
    group.bench_function("raw_rmcp_round_trip", |b| {
        b.to_async(&runtime).iter(|| async {
            let params = CallToolRequestParams::new("echo")
                .with_arguments(args.as_object().unwrap().clone());
            raw.call_tool(params).await.unwrap()
        });
    });
    group.bench_function("through_claw_tui", |b| {
        b.to_async(&runtime).iter(|| async {
            let (cancel, updates) = (CancellationToken::new(), ToolUpdates::discard());
            let result = tools
                .call(
                    None,
                    "mcp__fixture__echo",
                    "call-1",
                    args.clone(),
                    &cancel,
                    &updates,
                )
                .await;
            assert!(!result.is_error, "{}", result.content);
            result
        });
    });
    group.finish();
    runtime.block_on(async {
        manager.shutdown().await;
        let _ = raw.cancel().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
