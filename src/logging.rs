//! The log file: `claw-tui.log` in the state dir, for every mode (the client's screen
//! and the headless modes' stdout stay clean; MCP servers' stderr lands here too).

use std::path::Path;
use std::sync::Mutex;

/// Sends tracing output to `claw-tui.log` in `state_dir` (never to the screen); the
/// level comes from `CLAW_TUI_LOG` (trace, debug, info, warn, error; default info).
pub fn init_file_logging(state_dir: &Path) {
    let level = match std::env::var("CLAW_TUI_LOG").ok().as_deref() {
        Some("trace") => tracing::Level::TRACE,
        Some("debug") => tracing::Level::DEBUG,
        Some("warn") => tracing::Level::WARN,
        Some("error") => tracing::Level::ERROR,
        _ => tracing::Level::INFO,
    };
    let file = crate::private_fs::create_dir(state_dir, state_dir).and_then(|()| {
        crate::private_fs::open(
            &state_dir.join("claw-tui.log"),
            std::fs::OpenOptions::new().create(true).append(true),
        )
    });
    if let Ok(file) = file {
        let _ = tracing_subscriber::fmt()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_max_level(level)
            .try_init();
    }
}
