//! Saying out loud how saving the session goes: the first failed write at once (stderr,
//! and in RPC mode an `error` event), its recovery, and at the end whether anything is
//! missing from the file.

use super::write_json_line;
use crate::session::SaveStatus;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Reports each change of `status` until the writer is closed; `rpc` adds the events.
pub fn report(mut status: watch::Receiver<SaveStatus>, rpc: bool) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut reported = 0;
        let mut failing = false;
        let (mut side_reported, mut side_failing) = (0, false);
        while status.changed().await.is_ok() {
            let now = status.borrow_and_update().clone();
            if now.side_failures > side_reported {
                side_reported = now.side_failures;
                side_failing = true;
                for (log, error) in &now.side_logs {
                    say!(
                        "claw-tui: {}",
                        crate::session::side_log::failing_text(log, error)
                    );
                }
                if rpc {
                    write_json_line(&json!({
                        "type": "error",
                        "source": "side_log",
                        "logs": now.side_logs,
                        "note": crate::session::side_log::FAILING_NOTE,
                    }));
                }
            }
            if side_failing && now.side_logs.is_empty() {
                side_failing = false;
                say!(
                    "claw-tui: the logs beside the session are written again; nothing is missing from them."
                );
                if rpc {
                    write_json_line(&json!({"type": "side_logs_saved"}));
                }
            }
            if now.failures > reported {
                reported = now.failures;
                failing = true;
                let error = now.error.as_deref().unwrap_or("a write failed");
                say!(
                    "claw-tui: {error}. The conversation goes on in memory; writing is retried \
                     at the end of each turn."
                );
                if rpc {
                    write_json_line(&json!({
                        "type": "error",
                        "source": "session",
                        "error": error,
                        "note": "the conversation goes on in memory; writing is retried at the end of each turn",
                    }));
                }
            }
            if failing && now.is_saved() {
                failing = false;
                say!("claw-tui: the session is saved again; nothing is missing from it.");
                if rpc {
                    write_json_line(&json!({"type": "session_saved"}));
                }
            }
        }
    })
}

/// Tells what is missing from the session file after it was closed; true when the
/// session could not be saved.
pub fn report_final(status: &SaveStatus) -> bool {
    for (log, error) in &status.side_logs {
        say!(
            "claw-tui: {log} could not be written in full ({error}); replay and inspect say what is missing"
        );
    }
    let Some(error) = &status.error else {
        return false;
    };
    say!(
        "claw-tui: the session could not be saved: {} record{} missing from it ({error})",
        status.unsaved,
        if status.unsaved == 1 { "" } else { "s" },
    );
    true
}
