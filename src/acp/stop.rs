//! Why a prompt turn ended, as ACP's stop reason, from what the run added: the model
//! finished, hit its token limit, refused; the run reached its turn limit; the user
//! cancelled. A run that failed (the request could not be made or streamed) is an
//! error response with the reason instead: ACP has no stop reason for it.

use crate::agent::{ErrorKind, Message, StopReason as AgentStop};
use agent_client_protocol::v1::schema::StopReason;

/// How the run that took the prompt ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It stopped, for this reason.
    Stopped(StopReason),
    /// It failed, for this reason (the user's words).
    Failed(String),
}

/// The ending of a run that added `messages`; `cancelled`: the client asked to cancel
/// it.
pub fn ending(messages: &[Message], cancelled: bool) -> Ending {
    let last_answer = messages.iter().rev().find_map(Message::as_assistant);
    if cancelled || last_answer.is_some_and(|a| a.stop_reason == AgentStop::Aborted) {
        return Ending::Stopped(StopReason::Cancelled);
    }
    match (messages.last(), last_answer) {
        // The loop stops with calls it did not make only at its turn limit, and says so
        // in a notice.
        (Some(Message::Notice(_)), Some(answer)) if answer.stop_reason == AgentStop::ToolUse => {
            Ending::Stopped(StopReason::MaxTurnRequests)
        }
        (Some(Message::Notice(notice)), None) => Ending::Failed(notice.text.clone()),
        (_, Some(answer)) => match answer.stop_reason {
            AgentStop::Length => Ending::Stopped(StopReason::MaxTokens),
            AgentStop::Error if answer.error_kind == Some(ErrorKind::Refusal) => {
                Ending::Stopped(StopReason::Refusal)
            }
            AgentStop::Error => Ending::Failed(
                answer
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "the request failed".to_owned()),
            ),
            _ => Ending::Stopped(StopReason::EndTurn),
        },
        // A run without an answer: a compaction alone.
        (_, None) => Ending::Stopped(StopReason::EndTurn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AssistantMessage, NoticeLevel};

    fn answer(stop: AgentStop, kind: Option<ErrorKind>) -> Message {
        Message::Assistant(AssistantMessage {
            stop_reason: stop,
            error_kind: kind,
            error_message: (stop == AgentStop::Error).then(|| "boom".to_owned()),
            ..AssistantMessage::default()
        })
    }

    #[test]
    fn each_way_a_run_ends_has_its_reason() {
        let stopped = |s| Ending::Stopped(s);
        assert_eq!(
            ending(&[answer(AgentStop::Stop, None)], false),
            stopped(StopReason::EndTurn)
        );
        assert_eq!(
            ending(&[answer(AgentStop::Stop, None)], true),
            stopped(StopReason::Cancelled)
        );
        assert_eq!(
            ending(&[answer(AgentStop::Aborted, None)], false),
            stopped(StopReason::Cancelled)
        );
        assert_eq!(
            ending(&[answer(AgentStop::Length, None)], false),
            stopped(StopReason::MaxTokens)
        );
        assert_eq!(
            ending(&[answer(AgentStop::Error, Some(ErrorKind::Refusal))], false),
            stopped(StopReason::Refusal)
        );
        assert_eq!(
            ending(&[answer(AgentStop::Error, None)], false),
            Ending::Failed("boom".into())
        );
        let limit = Message::notice(NoticeLevel::Warning, "Stopped after 2 turns");
        assert_eq!(
            ending(&[answer(AgentStop::ToolUse, None), limit], false),
            stopped(StopReason::MaxTurnRequests)
        );
        let crashed = Message::notice(NoticeLevel::Error, "Internal error");
        assert_eq!(
            ending(&[crashed], false),
            Ending::Failed("Internal error".into())
        );
        assert_eq!(ending(&[], false), stopped(StopReason::EndTurn));
    }
}
