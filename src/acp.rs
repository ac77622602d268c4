//! `claw-tui acp`: claw-tui as an Agent Client Protocol (v1) agent on stdin and stdout,
//! for an editor that starts it as its agent (Zed, Neovim's CodeCompanion, JetBrains).
//!
//! The protocol's maintained Rust SDK (`agent-client-protocol`) carries the wire: version
//! negotiation, JSON-RPC framing, errors for bad JSON, unknown methods and wrong params.
//! What is claw-tui's is built on the same core as the client and RPC:
//!
//! - each ACP session is a claw-tui session of the client's `cwd`, with a runtime that
//!   `setup` builds exactly as for the other front-ends (one tool policy, the user's
//!   hooks, checkpoints, plan mode, subagents, MCP servers), recorded by the session
//!   service (session file, event log, request log), so `replay` and `inspect` read it;
//! - prompts go in through the supervisor's intake (the prompt hooks run there), a
//!   cancel is the supervisor's abort (Esc), and approvals are the policy's own gate
//!   with an asker that turns each request into `session/request_permission`;
//! - every agent event becomes a `session/update` ([`updates`]), in order, from one
//!   task per session ([`pump`]) that also answers the prompts.
//!
//! Nothing but the protocol goes to stdout: logs go to the log file, warnings to stderr.

/// A line on stderr for the editor's log (never stdout: that is the protocol's).
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::signals::tell(&format!($($arg)*))
    };
}

mod agent;
mod commands;
mod content;
mod diff;
mod editor;
mod history;
mod initialize;
mod mcp;
mod models;
mod permission;
mod plan;
mod pump;
mod session;
mod stop;
mod terminal;
mod tools;
mod turns;
mod updates;
mod usage;

use crate::cli::Cli;
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED};
use crate::signals::StopSignals;
use color_eyre::eyre::eyre;

/// The agent's name, as `initialize` gives it.
pub const AGENT_NAME: &str = "claw-tui";

/// The session modes offered (`session/set_mode`): claw-tui's plan mode, off and on.
pub const MODES: [(&str, &str, &str); 2] = [
    (
        "default",
        "Default",
        "The agent reads, writes files and runs commands as its tools allow",
    ),
    (
        "plan",
        "Plan",
        "The agent reads and plans, and changes nothing",
    ),
];

/// Runs `claw-tui acp` until the client closes stdin or a stop signal comes; every
/// session open then is saved. `cli` holds the flags every session's settings start
/// from (the client's `cwd` is each session's workspace).
pub fn run(cli: &Cli) -> color_eyre::Result<i32> {
    let base = agent::Base::new(cli.clone());
    crate::logging::init_file_logging(&base.state_dir());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| eyre!("cannot start the async runtime: {e}"))?;
    let code = runtime.block_on(serve(base))?;
    // The transport's stdin reader may still wait for a line that never comes.
    runtime.shutdown_background();
    Ok(code)
}

async fn serve(base: agent::Base) -> color_eyre::Result<i32> {
    let mut stop =
        StopSignals::install().map_err(|e| eyre!("cannot take over the stop signals: {e}"))?;
    let shared = agent::Shared::new(base);
    let connection = agent::connect(shared.clone());
    let code = tokio::select! {
        ended = connection => match ended {
            Ok(()) => EXIT_OK,
            Err(e) => {
                say!("claw-tui: the ACP connection failed: {e}");
                EXIT_RUN_FAILED
            }
        },
        code = stop.recv() => code,
    };
    // Closing waits for the runs to stop and the files to be written; a second signal
    // need not wait.
    stop.exit_on_next();
    let unsaved = shared.close_all().await;
    Ok(if unsaved && code == EXIT_OK {
        EXIT_RUN_FAILED
    } else {
        code
    })
}
