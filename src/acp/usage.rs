//! What the session has used, as ACP's `usage_update`: how full the context is after
//! each turn, and at the end of a run the session's cost and token counts.

use crate::agent::{ContextUsage, Message, Usage};
use agent_client_protocol::v1::schema::{Cost, SessionUpdate, UsageUpdate};

/// How full the context is; with `totals` (the session's tokens and cost so far), its
/// cost in US dollars when the model's prices are known, and the token counts, which
/// the update has no field for, in `_meta.clawTuiUsage`.
pub fn usage(context: &ContextUsage, totals: Option<&Usage>) -> SessionUpdate {
    let mut update = UsageUpdate::new(context.tokens, context.window);
    if let Some(totals) = totals {
        if totals.cost > 0.0 {
            update = update.cost(Cost::new(totals.cost, "USD"));
        }
        let mut meta = serde_json::Map::new();
        meta.insert(
            USAGE_META.to_owned(),
            serde_json::json!({
                "input": totals.input,
                "output": totals.output,
                "cacheRead": totals.cache_read,
                "cacheWrite": totals.cache_write,
            }),
        );
        update = update.meta(meta);
    }
    SessionUpdate::UsageUpdate(update)
}

/// The `_meta` key of a usage update's token counts (the session's, so far).
pub const USAGE_META: &str = "clawTuiUsage";

/// The tokens and cost of the session's answers so far.
pub fn totals<'a>(messages: impl Iterator<Item = &'a Message>) -> Usage {
    let mut totals = Usage::default();
    for answer in messages.filter_map(Message::as_assistant) {
        totals.add(&answer.usage);
    }
    totals
}
