//! What an attached client does with the app's effects: what acts on the session goes to
//! it as a command line; what belongs to this terminal (highlighting, the clipboard,
//! the input history, the theme, the mouse) is done here; what only the session's own
//! process can do is said to be unavailable, never dropped silently.

use crate::agent::{NoticeLevel, QueueKind};
use crate::tui::msg::{Effect, Msg};
use serde_json::{Value, json};

/// What to do with one effect.
pub enum Action {
    /// Send this command to the session.
    Send(Value),
    /// Leave: detach, the session goes on.
    Quit,
    /// Do it here, as the local client would.
    Local(Effect),
    /// Tell the user (in the chat).
    Say(Msg),
    /// Nothing to do.
    Nothing,
}

/// Sorts `effect` for an attached client.
pub fn sort(effect: Effect) -> Action {
    match effect {
        Effect::Prompt(text) => Action::Send(json!({"type": "prompt", "content": text})),
        Effect::PromptMessage(message) => {
            if message.images.is_empty() {
                Action::Send(json!({"type": "prompt", "content": message.content}))
            } else {
                unavailable("sending images")
            }
        }
        Effect::FollowUp(text) => Action::Send(json!({"type": "follow_up", "content": text})),
        Effect::Steer(text) => Action::Send(json!({"type": "steer", "content": text})),
        Effect::Abort => Action::Send(json!({"type": "abort"})),
        Effect::InterruptTools => Action::Send(json!({"type": "interrupt_tools"})),
        Effect::Approve { id, decision } => {
            Action::Send(json!({"type": "approve", "id": id, "decision": decision}))
        }
        Effect::Compact(focus) => Action::Send(json!({"type": "compact", "instructions": focus})),
        Effect::SetMode(mode) => Action::Send(json!({"type": "set_mode", "mode": mode})),
        Effect::SetQueueMode(kind, mode) => {
            let queue = match kind {
                QueueKind::Steering => "steering",
                QueueKind::FollowUp => "follow_up",
            };
            Action::Send(json!({"type": "set_queue_mode", "queue": queue, "mode": mode}))
        }
        Effect::Quit => Action::Quit,
        // The queues are the session's, shared with the other clients: left as they are.
        Effect::RestoreQueued => Action::Nothing,
        local @ (Effect::Highlight(_)
        | Effect::Copy(_)
        | Effect::SaveHistory(_)
        | Effect::SetMouseCapture(_)
        | Effect::SetTheme(_)) => Action::Local(local),
        Effect::LoadImages { .. } => unavailable("sending images"),
        Effect::AttachSkills { .. } => unavailable("attaching skills ($name)"),
        Effect::ExportHtml { .. } => unavailable("/export"),
        Effect::Retry => unavailable("/retry"),
        Effect::SaveSettings { .. } => unavailable("saving settings"),
        Effect::Suspend => unavailable("suspending (Ctrl+Z)"),
        Effect::OpenEditor(_) => unavailable("the external editor (Ctrl+G)"),
        Effect::ListFiles => Action::Nothing,
        Effect::ListModels => Action::Nothing,
        Effect::SetModel(_) | Effect::SetThinking(_) | Effect::SetToolExecution(_) => {
            unavailable("changing the model or its settings")
        }
        Effect::Shell(_) => unavailable("!commands"),
        // The app is ready for the session it was given: nothing to release here.
        Effect::Sessions(crate::tui::sessions::Effect::Ready) => Action::Nothing,
        Effect::Sessions(crate::tui::sessions::Effect::Name { .. }) => unavailable("/name"),
        Effect::Sessions(_) => unavailable("switching sessions"),
        Effect::Inspector(_) => unavailable("the request inspector"),
        Effect::Checkpoints(_) => unavailable("/undo, /rewind and /diff"),
        Effect::Subagents(_)
        | Effect::PauseCron(_)
        | Effect::ResumeCron(_)
        | Effect::DeleteCron(_) => unavailable("the dashboard's controls"),
        Effect::AnswerTrust { .. } => unavailable("answering a trust question"),
    }
}

fn unavailable(what: &str) -> Action {
    Action::Say(Msg::Notice(
        NoticeLevel::Warning,
        format!(
            "{what}: not available in an attached client; use the session's own \
             terminal (or `claw-tui attach ID --mode rpc` for undo, rewind and diff)"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_gets_what_acts_on_it_and_the_rest_is_said() {
        let Action::Send(line) = sort(Effect::Steer("stop".into())) else {
            panic!("a steer is not sent");
        };
        assert_eq!(line, json!({"type": "steer", "content": "stop"}));
        assert!(matches!(sort(Effect::Quit), Action::Quit));
        assert!(matches!(sort(Effect::Copy("x".into())), Action::Local(_)));
        let Action::Say(Msg::Notice(NoticeLevel::Warning, text)) =
            sort(Effect::Shell(crate::tui::shell::Effect::CancelAll))
        else {
            panic!("an unavailable effect is not said");
        };
        assert!(
            text.contains("not available in an attached client"),
            "{text}"
        );
    }
}
