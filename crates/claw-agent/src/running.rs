//! The tool calls a run is executing, each under its own cancellation token (a child of
//! the run's token), so the user can stop the calls running now without aborting the
//! run: the stopped call returns what it has, its result says it was interrupted, and
//! the turn goes on (queued steering goes in at once).

use super::tool::ToolResult;
use serde_json::Value;
use std::sync::{Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// The key of a result's `details` that says a call was stopped before it finished:
/// `"user"` (only the call was interrupted; the run went on) or `"abort"` (the whole run
/// was aborted).
pub const INTERRUPTED_KEY: &str = "interrupted";

/// The note appended to the result of a call the user interrupted (the model reads it).
pub const INTERRUPTED_BY_USER: &str = "[Interrupted by the user: the call was stopped before it \
     finished; what it returned so far is above. The run goes on.]";

/// How a call came to be stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interruption {
    /// The user stopped the running calls; the run went on.
    User,
    /// The whole run was aborted.
    Abort,
}

impl Interruption {
    fn as_str(self) -> &'static str {
        match self {
            Interruption::User => "user",
            Interruption::Abort => "abort",
        }
    }

    /// How the call with these result `details` was stopped, if it was.
    pub fn of(details: &Value) -> Option<Interruption> {
        match details.get(INTERRUPTED_KEY).and_then(Value::as_str) {
            Some("user") => Some(Interruption::User),
            Some("abort") => Some(Interruption::Abort),
            _ => None,
        }
    }

    /// Marks `result` as stopped this way: its details say so, and a call the user
    /// interrupted becomes an error whose text tells the model what happened.
    pub(crate) fn mark(self, result: &mut ToolResult) {
        match &mut result.details {
            Value::Object(map) => {
                map.insert(INTERRUPTED_KEY.to_owned(), Value::from(self.as_str()));
            }
            Value::Null => {
                result.details = serde_json::json!({ INTERRUPTED_KEY: self.as_str() });
            }
            // Details of another shape are the tool's own; they are kept under a key.
            other => {
                let kept = std::mem::take(other);
                result.details = serde_json::json!({
                    INTERRUPTED_KEY: self.as_str(),
                    "tool_details": kept,
                });
            }
        }
        if self == Interruption::User {
            result.is_error = true;
            if !result.content.is_empty() && !result.content.ends_with('\n') {
                result.content.push('\n');
            }
            result.content.push_str(INTERRUPTED_BY_USER);
        }
    }
}

/// The calls executing now, by id, with their tokens.
#[derive(Debug, Default)]
pub struct RunningCalls {
    calls: Mutex<Vec<(String, CancellationToken)>>,
}

impl RunningCalls {
    fn lock(&self) -> MutexGuard<'_, Vec<(String, CancellationToken)>> {
        // Each change is one push or one removal: a poisoned list is still whole.
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers the call `id` of the run whose token is `run`; returns the call's own
    /// token (cancelled with the run, or alone by [`RunningCalls::interrupt_all`]).
    pub(crate) fn start(&self, id: &str, run: &CancellationToken) -> CancellationToken {
        let token = run.child_token();
        self.lock().push((id.to_owned(), token.clone()));
        token
    }

    /// The call `id` returned.
    pub(crate) fn finish(&self, id: &str) {
        self.lock().retain(|(call, _)| call != id);
    }

    /// Stops every call executing now (not the run); returns their ids, oldest first.
    pub fn interrupt_all(&self) -> Vec<String> {
        let calls = self.lock();
        for (_, token) in calls.iter() {
            token.cancel();
        }
        calls.iter().map(|(id, _)| id.clone()).collect()
    }

    /// The ids of the calls executing now.
    pub fn ids(&self) -> Vec<String> {
        self.lock().iter().map(|(id, _)| id.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marking_keeps_the_tools_details_and_tells_the_model() {
        let mut result =
            ToolResult::text("partial").with_details(serde_json::json!({"exit_code": null}));
        Interruption::User.mark(&mut result);
        assert!(result.is_error);
        assert!(
            result
                .content
                .starts_with("partial\n[Interrupted by the user")
        );
        assert_eq!(Interruption::of(&result.details), Some(Interruption::User));
        assert!(result.details.get("exit_code").is_some());

        let mut aborted = ToolResult::text("kept as it was");
        Interruption::Abort.mark(&mut aborted);
        assert_eq!(
            (aborted.content.as_str(), aborted.is_error),
            ("kept as it was", false)
        );
        assert_eq!(
            Interruption::of(&aborted.details),
            Some(Interruption::Abort)
        );

        let mut odd = ToolResult::text("x").with_details(serde_json::json!([1, 2]));
        Interruption::Abort.mark(&mut odd);
        assert_eq!(odd.details["tool_details"], serde_json::json!([1, 2]));
    }

    #[test]
    fn interrupting_stops_only_the_calls_not_the_run() {
        let run = CancellationToken::new();
        let calls = RunningCalls::default();
        let a = calls.start("a", &run);
        let b = calls.start("b", &run);
        calls.finish("a");
        assert_eq!(calls.interrupt_all(), ["b"]);
        assert!(b.is_cancelled() && !a.is_cancelled() && !run.is_cancelled());
        let c = calls.start("c", &run);
        run.cancel();
        assert!(c.is_cancelled(), "an abort still reaches every call");
    }
}
