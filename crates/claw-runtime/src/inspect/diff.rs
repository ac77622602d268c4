//! What changed from one request of an agent to its next: normally only messages
//! appended; anything else (a changed system prompt, tool list, setting or an earlier
//! message) breaks the provider's prompt cache from that point on.

use super::log::{Body, FieldValue, RequestLog};
use serde_json::Value;

/// One change between two requests.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The body's field, e.g. `messages`.
    pub field: String,
    /// Whether it invalidates the prompt cache (anything but appended elements).
    pub busts_cache: bool,
    /// What changed, in a few words.
    pub summary: String,
    /// The elements or values involved (`+ ` added, `- ` removed), JSON text.
    pub lines: Vec<String>,
}

/// The changes of the request at position `n` since the previous request of the same
/// agent; `None` when it is the agent's first (or a body cannot be rebuilt).
pub fn diff(log: &RequestLog, n: usize) -> Option<Vec<Change>> {
    let before = log.previous_of_agent(n)?;
    let old = fields(log, before)?;
    let new = fields(log, n)?;
    let mut changes = Vec::new();
    for (key, value) in &new {
        match old.iter().find(|(k, _)| k == key) {
            None => changes.push(Change {
                field: key.clone(),
                busts_cache: true,
                summary: "added".into(),
                lines: vec![format!("+ {}", log.value_text(value))],
            }),
            Some((_, was)) => compare(log, key, was, value, &mut changes),
        }
    }
    for (key, value) in &old {
        if !new.iter().any(|(k, _)| k == key) {
            changes.push(Change {
                field: key.clone(),
                busts_cache: true,
                summary: "removed".into(),
                lines: vec![format!("- {}", log.value_text(value))],
            });
        }
    }
    Some(changes)
}

fn fields(log: &RequestLog, n: usize) -> Option<Vec<(String, FieldValue)>> {
    match log.requests.get(n)?.body.as_ref().ok()? {
        Body::Object(fields) => Some(fields.clone()),
        Body::Whole(id) => Some(vec![("body".into(), FieldValue::Blob(*id))]),
    }
}

fn compare(log: &RequestLog, key: &str, was: &FieldValue, now: &FieldValue, out: &mut Vec<Change>) {
    if let (FieldValue::Array(old), FieldValue::Array(new)) = (was, now) {
        let same = |a: u32, b: u32| a == b || same_but_markers(log.blob(a), log.blob(b));
        let common = old
            .iter()
            .zip(new)
            .take_while(|&(&a, &b)| same(a, b))
            .count();
        if common < old.len() {
            let mut lines: Vec<String> = old[common..]
                .iter()
                .map(|&id| format!("- {}", log.blob(id)))
                .collect();
            lines.extend(
                new[common..]
                    .iter()
                    .map(|&id| format!("+ {}", log.blob(id))),
            );
            out.push(Change {
                field: key.to_owned(),
                busts_cache: true,
                summary: format!(
                    "changed from element {} on ({} removed, {} added)",
                    common + 1,
                    old.len() - common,
                    new.len() - common
                ),
                lines,
            });
        } else if new.len() > common {
            out.push(Change {
                field: key.to_owned(),
                busts_cache: false,
                summary: format!("{} appended", new.len() - common),
                lines: new[common..]
                    .iter()
                    .map(|&id| format!("+ {}", log.blob(id)))
                    .collect(),
            });
        }
        return;
    }
    let (old, new) = (log.value_text(was), log.value_text(now));
    if old != new && !same_but_markers(&old, &new) {
        out.push(Change {
            field: key.to_owned(),
            busts_cache: true,
            summary: "changed".into(),
            lines: vec![format!("- {old}"), format!("+ {new}")],
        });
    }
}

/// Whether two pieces differ only in Anthropic's `cache_control` markers, which move
/// forward each turn without changing what is cached.
fn same_but_markers(a: &str, b: &str) -> bool {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let (Ok(mut a), Ok(mut b)) = (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) else {
        return false;
    };
    strip(&mut a);
    strip(&mut b);
    a == b
}
