//! The cost of fanning one answer out to attached clients: a model streams a
//! 20,000-token answer in bursts through a served session (the runtime, the pump, the
//! socket server) to 1, 4 and 16 clients attached over real Unix sockets, each reading
//! every line until the run's end. The figure is the CPU time the process spends on the
//! answer (the readers, standing in for the clients, included).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use clap::Parser;
use claw_tui::agent::{AssistantMessage, Block, MessageDelta, StopReason};
use claw_tui::attach::{AttachServer, Hub, HubRuntime, PumpHandle, SessionInfo};
use claw_tui::headless::rpc::PendingApprovals;
use claw_tui::llm::{LlmEvent, LlmRequest, LlmStream, ModelListError, Provider};
use claw_tui::tools::exec::Approver;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

const TOKENS: usize = 20_000;
/// Tokens per burst; a burst every millisecond at most: a fast model, streaming.
const BURST: usize = 200;

/// A model that streams a 20,000-token answer in bursts, as a fast server would.
struct Paced;

impl Provider for Paced {
    fn stream(&self, _request: LlmRequest, _cancel: CancellationToken) -> LlmStream {
        let bursts = futures::stream::iter(0..TOKENS / BURST).then(|b| async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            futures::stream::iter((b * BURST..(b + 1) * BURST).map(|i| {
                LlmEvent::Delta(MessageDelta::Text {
                    index: 0,
                    text: format!("w{i} "),
                })
            }))
        });
        let done = LlmEvent::Done(AssistantMessage {
            content: vec![Block::Text {
                text: "done".into(),
            }],
            stop_reason: StopReason::Stop,
            model: "paced".into(),
            ..AssistantMessage::default()
        });
        futures::stream::once(async { LlmEvent::Start })
            .chain(bursts.flatten())
            .chain(futures::stream::once(async move { done }))
            .boxed()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelListError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// A served session on the paced model in a temp home, and its socket.
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
    let provider: Arc<dyn Provider> = Arc::new(Paced);
    let mut main = claw_tui::setup::start_runtime_with(
        &settings,
        provider,
        Arc::new(|_| {}),
        Approver::AllowAll,
    )
    .unwrap();
    let events = std::mem::replace(&mut main.events, tokio::sync::mpsc::unbounded_channel().1);
    let pump = PumpHandle::start(&main.agent, events, None);
    let runtime = HubRuntime::of(&main);
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
                    // A client that fell behind would measure resyncs, not the fan-out.
                    assert!(
                        !line.starts_with("{\"type\":\"resync\""),
                        "a client fell behind"
                    );
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

/// The CPU time (user and system) this process used so far.
fn cpu_time() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).unwrap();
    let time = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    time(usage.user_time()) + time(usage.system_time())
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
            // What is measured is the CPU the process spends on one answer (the model's
            // pauses are not work); the session and the attaching are set up first.
            b.to_async(&runtime).iter_custom(|iters| async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let ready = attached(n).await;
                    let start = cpu_time();
                    fan_out(ready).await;
                    total += cpu_time().saturating_sub(start);
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, attach);
criterion_main!(benches);
