//! SIGINT and SIGTERM in the headless modes: the first stops the run the way the client
//! does (abort, the partial answer recorded as aborted, the session flushed) and the
//! process exits with 128 + the signal; a second one exits at once.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Exit code after SIGINT (128 + 2).
pub const EXIT_SIGINT: i32 = 130;
/// Exit code after SIGTERM (128 + 15).
pub const EXIT_SIGTERM: i32 = 143;

/// The stop signals of a headless run.
pub struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
}

impl StopSignals {
    /// Takes over SIGINT and SIGTERM (inside a Tokio runtime).
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Waits for the next stop signal; the exit code it asks for.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => EXIT_SIGINT,
            _ = self.terminate.recv() => EXIT_SIGTERM,
        }
    }

    /// After the first signal: from now on, another one ends the process at once.
    pub fn exit_on_next(mut self) {
        tokio::spawn(async move {
            let code = self.recv().await;
            eprintln!("claw-tui: stopped again; exiting without waiting");
            // Not waiting for the run, but its commands are stopped and checked.
            crate::tools::exec::stop_commands_and_report();
            std::process::exit(code);
        });
    }
}

/// The signal's name, for messages.
pub fn signal_name(code: i32) -> &'static str {
    match code {
        EXIT_SIGINT => "SIGINT",
        EXIT_SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}
