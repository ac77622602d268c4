//! Approvals as `session/request_permission`: the policy's own gate asks (exec in `ask`
//! mode, MCP servers with `approval = "ask"`), and the client's answer is applied as the
//! terminal client's would be: allow once, allow for the rest of this process (the
//! tool, for every agent), or reject. A subagent's request names it.

use crate::tools::exec::{ApprovalDecision, ApprovalRequest};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::{Client, Error};

/// The option ids offered.
pub const ALLOW_ONCE: &str = "allow-once";
/// Allow this tool from now on, in this process.
pub const ALLOW_ALWAYS: &str = "allow-always";
/// Do not run it.
pub const REJECT: &str = "reject";

/// The options for a call of `tool`.
pub fn options(tool: &str) -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {tool} (until claw-tui exits)"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ]
}

/// The decision an answer stands for. A cancelled request (the turn was cancelled)
/// and an option this agent never offered are a rejection: nothing runs unasked.
pub fn decision(outcome: &RequestPermissionOutcome) -> ApprovalDecision {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => match selected.option_id.0.as_ref() {
            ALLOW_ONCE => ApprovalDecision::Allow,
            ALLOW_ALWAYS => ApprovalDecision::AllowSession,
            REJECT => ApprovalDecision::Deny,
            other => {
                tracing::warn!("permission answer with an unknown option {other:?}: rejected");
                ApprovalDecision::Deny
            }
        },
        _ => ApprovalDecision::Deny,
    }
}

/// The request for `request` about the call `call_id`, shown with `fields` (its title
/// names the subagent for a subagent's call).
pub fn permission_request(
    session: SessionId,
    call_id: String,
    request: &ApprovalRequest,
    fields: ToolCallUpdateFields,
) -> RequestPermissionRequest {
    let fields = match &request.subagent {
        Some(subagent) => {
            let title = fields.title.clone().unwrap_or_default();
            fields.title(format!(
                "{title} — asked by subagent {} ({}): {}",
                subagent.id,
                subagent.label,
                claw_text::clip(&subagent.task, 80)
            ))
        }
        None => fields,
    };
    RequestPermissionRequest::new(
        session,
        ToolCallUpdate::new(call_id, fields),
        options(&request.tool_name),
    )
}

/// Asks the client and waits for its answer (off the dispatch loop: a task of the
/// session's). A client that cannot answer (gone, or an error) has not approved.
pub async fn ask(cx: ConnectionTo<Client>, request: RequestPermissionRequest) -> ApprovalDecision {
    let answer: Result<_, Error> = cx.send_request(request).block_task().await;
    match answer {
        Ok(response) => decision(&response.outcome),
        Err(e) => {
            tracing::warn!("permission request failed ({e}); the call is not run");
            ApprovalDecision::Deny
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn each_option_means_what_the_terminal_client_does() {
        let pick = |id: &str| {
            decision(&RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id.to_owned()),
            ))
        };
        assert_eq!(pick(ALLOW_ONCE), ApprovalDecision::Allow);
        assert_eq!(pick(ALLOW_ALWAYS), ApprovalDecision::AllowSession);
        assert_eq!(pick(REJECT), ApprovalDecision::Deny);
        assert_eq!(pick("something-else"), ApprovalDecision::Deny);
        assert_eq!(
            decision(&RequestPermissionOutcome::Cancelled),
            ApprovalDecision::Deny
        );
        let kinds: Vec<_> = options("exec").into_iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            [
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
                PermissionOptionKind::RejectOnce
            ]
        );
    }
}
