//! The cost of fanning one answer out to attached clients: a scripted model streams a
//! 20,000-token answer through a served session (the runtime, the pump, the socket
//! server) to 1, 4 and 16 clients attached over real Unix sockets, each reading every
//! line until the run's end.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[allow(dead_code)]
#[path = "../tests/it/support/scripted.rs"]
mod scripted;

use clap::Parser;
use claw_tui::agent::{Block, MessageDelta, StopReason};
use claw_tui::attach::{AttachServer, Hub, HubRuntime, PumpHandle, SessionInfo};
use claw_tui::headless::rpc::PendingApprovals;
use claw_tui::llm::LlmEvent;
use claw_tui::tools::exec::Approver;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use scripted::{Reply, ScriptedProvider, message};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

const TOKENS: usize = 20_000;

fn answer() -> Reply {
    let mut events = Vec::with_capacity(TOKENS + 2);
    events.push(LlmEvent::Start);
    for i in 0..TOKENS {
        events.push(LlmEvent::Delta(MessageDelta::Text {
            index: 0,
            text: format!("w{i} "),
        }));
    }
    events.push(LlmEvent::Done(message(
        vec![Block::Text {
            text: "done".into(),
        }],
        StopReason::Stop,
    )));
    Reply::Events(events)
}

/// A served session on a scripted model in a temp home, and its socket.
struct Session {
    _home: tempfile::TempDir,
    hub: Arc<Hub>,
    server: AttachServer,
}

async fn session() -> Session {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let config = home.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    let cli = claw_tui::cli::Cli::parse_from([
        "claw-tui".as_ref(),
        "--config".as_ref(),
        config.as_os_str(),
        "--workspace".as_ref(),
        workspace.as_os_str(),
    ] as [&std::ffi::OsStr; 5]);
    let mut settings = claw_tui::config::resolve(&cli.config_flags(), &|_| None).unwrap();
    settings.state_dir = home.path().join("state");
    settings.data_dir = home.path().join("data");
    let provider = ScriptedProvider::new(vec![answer()]);
    let mut main = claw_tui::setup::start_runtime_with(
        &settings,
        provider,
        Arc::new(|_| {}),
        Approver::AllowAll,
    )
    .unwrap();
    let events = std::mem::replace(&mut main.events, tokio::sync::mpsc::unbounded_channel().1);
    let pump = PumpHandle::start(&main.agent, events);
    let runtime = HubRuntime {
        supervisor: main.supervisor.clone(),
        controls: main.controls.clone(),
        mcp: main.mcp.clone(),
        requests: main.requests.clone(),
        subagents: main.subagents.clone(),
        events: main.event_sender.clone(),
    };
    let info = SessionInfo {
        id: "bench".into(),
        workspace,
        pid: std::process::id(),
        host: "serve".into(),
        provider: "scripted".into(),
    };
    let hub = Hub::new(info, runtime, PendingApprovals::default(), pump);
    let dir = claw_tui::attach::socket_dir(&settings.state_dir).unwrap();
    let server = AttachServer::start(&dir, hub.clone(), 1 << 20)
        .await
        .unwrap();
    Session {
        _home: home,
        hub,
        server,
    }
}

type Reader = tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>;

/// A served session with `n` clients attached (each has read its snapshot).
async fn attached(n: usize) -> (Session, Vec<(Reader, tokio::net::unix::OwnedWriteHalf)>) {
    let session = session().await;
    let mut clients = Vec::new();
    for i in 0..n {
        let stream = UnixStream::connect(session.server.path()).await.unwrap();
        let (read, mut write) = stream.into_split();
        write
            .write_all(format!("{{\"type\":\"attach\",\"name\":\"c{i}\"}}\n").as_bytes())
            .await
            .unwrap();
        let mut lines = BufReader::new(read).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("{\"type\":\"snapshot\"") {
                break;
            }
        }
        clients.push((lines, write));
    }
    (session, clients)
}

/// Sends the prompt and waits until every client has read the run's end; returns the
/// lines all of them read.
async fn fan_out(
    (session, clients): (Session, Vec<(Reader, tokio::net::unix::OwnedWriteHalf)>),
) -> usize {
    let n = clients.len();
    let readers: Vec<_> = clients
        .into_iter()
        .map(|(mut lines, write)| {
            tokio::spawn(async move {
                let _keep = write;
                let mut count = 0;
                while let Some(line) = lines.next_line().await.unwrap() {
                    count += 1;
                    if line.starts_with("{\"type\":\"agent_end\"") {
                        break;
                    }
                }
                count
            })
        })
        .collect();
    let response = session
        .hub
        .command(None, r#"{"type":"prompt","content":"go"}"#)
        .await;
    assert_eq!(response["ok"], true, "{response}");
    let mut total = 0;
    for reader in readers {
        total += reader.await.unwrap();
    }
    assert!(total >= n * TOKENS, "{total}");
    session.hub.agent().wait_for_idle().await;
    total
}

fn attach(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("attach_fan_out");
    group.sample_size(10);
    group.throughput(Throughput::Elements(TOKENS as u64));
    for n in [1, 4, 16] {
        group.bench_function(format!("answer_20k_tokens_to_{n}_clients"), |b| {
            b.to_async(&runtime).iter_batched(
                || runtime.block_on(attached(n)),
                fan_out,
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, attach);
criterion_main!(benches);
