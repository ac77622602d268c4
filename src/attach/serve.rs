//! `claw-tui serve`: a session with no terminal of its own, driven by whoever attaches.
//! It runs until a stop signal, or until it has been idle (nobody attached, no run, no
//! subagent working) for the idle timeout.

use super::hub::{Hub, HubRuntime, SessionInfo};
use super::pump::PumpHandle;
use super::server::AttachServer;
use crate::config::Settings;
use crate::exit::EXIT_OK;
use crate::headless::rpc::PendingApprovals;
use crate::setup::MainRuntime;
use crate::signals::StopSignals;
use color_eyre::eyre::eyre;
use std::sync::OnceLock;
use std::time::Duration;

/// How often the idle timeout looks again.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// How a served session runs.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Ends the process after this long with nothing going on; `None`: never.
    pub idle_timeout: Option<Duration>,
    /// The longest command line accepted from a client, in bytes.
    pub max_line_bytes: usize,
}

/// The identity a served session announces; `id` is `None` with sessions off.
pub fn session_info(id: Option<String>, settings: &Settings) -> SessionInfo {
    let pid = std::process::id();
    SessionInfo {
        id: id.unwrap_or_else(|| format!("unsaved-{pid}")),
        workspace: settings.workspace.clone(),
        pid,
        host: "serve".into(),
        provider: settings.provider.name.clone(),
    }
}

/// Serves `main`'s session on its socket until a stop signal or the idle timeout;
/// returns the exit code.
pub async fn serve(
    main: &mut MainRuntime,
    state_dir: &std::path::Path,
    session: SessionInfo,
    approvals: PendingApprovals,
    pump_slot: &OnceLock<PumpHandle>,
    options: ServeOptions,
    stop: &mut StopSignals,
) -> color_eyre::Result<i32> {
    let dir = super::socket_dir(state_dir)?;
    let runtime_events =
        std::mem::replace(&mut main.events, tokio::sync::mpsc::unbounded_channel().1);
    let pump = PumpHandle::start(
        &main.agent,
        runtime_events,
        main.cron.as_ref().map(|c| c.subscribe()),
    );
    let _ = pump_slot.set(pump.clone());
    let runtime = HubRuntime::of(main);
    let hub = Hub::new(session, runtime, approvals, pump);
    let server = AttachServer::start(&dir, hub.clone(), options.max_line_bytes)
        .await
        .map_err(|e| eyre!(e))?;
    eprintln!(
        "claw-tui: serving session {} on {}\nclaw-tui: attach with: claw-tui attach {}",
        hub.session().id,
        server.path().display(),
        hub.session().id
    );
    let code = wait(&hub, options, stop).await;
    hub.close();
    drop(server);
    Ok(code)
}

/// Waits for a stop signal (its exit code) or the idle timeout (0).
async fn wait(hub: &Hub, options: ServeOptions, stop: &mut StopSignals) -> i32 {
    let mut check = tokio::time::interval(IDLE_CHECK);
    let mut idle_since = tokio::time::Instant::now();
    loop {
        tokio::select! {
            code = stop.recv() => {
                // A run under way stops as it would in any mode: saved as aborted.
                hub.agent().abort();
                return code;
            }
            _ = check.tick() => {
                if !hub.is_idle() {
                    idle_since = tokio::time::Instant::now();
                } else if let Some(limit) = options.idle_timeout
                    && idle_since.elapsed() >= limit
                {
                    eprintln!(
                        "claw-tui: nothing happened for {}s and nobody is attached; stopping",
                        limit.as_secs()
                    );
                    return EXIT_OK;
                }
            }
        }
    }
}
