//! What a request's input is made of: the system prompt and its sections (AGENTS.md,
//! memory, skills), each tool's definition, the compaction summary, user messages,
//! assistant messages and tool results, measured in bytes of the body and scaled so
//! that the parts add up to the input tokens the provider reported. The request's wire
//! format says which field is which and what each element is
//! (`llm::sections::WireFormat`); this module only counts.

use super::log::{Body, FieldValue, RequestLog};
use crate::agent::compaction::SUMMARY_PREFIX;
use crate::llm::WireFormat;
use crate::llm::sections::{Element, Field, text_of};
use serde_json::Value;

/// One part of a request's input.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// What it is, e.g. `system prompt`, `tool: read_file`, `tool results (12)`.
    pub label: String,
    /// Its bytes in the body.
    pub bytes: usize,
    /// Its share of the input tokens (the parts add up to [`Breakdown::tokens`]).
    pub tokens: u64,
}

/// A request's input, part by part, largest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Breakdown {
    /// The parts, largest first.
    pub parts: Vec<Part>,
    /// The input tokens: the provider's figure (input, cache read and write), or an
    /// estimate of 4 bytes a token when it reported none.
    pub tokens: u64,
    /// Whether `tokens` is an estimate.
    pub estimated: bool,
}

impl Breakdown {
    /// The share of `part` in the whole, 0 to 1.
    pub fn share(&self, part: &Part) -> f64 {
        if self.tokens == 0 {
            0.0
        } else {
            part.tokens as f64 / self.tokens as f64
        }
    }
}

#[derive(Default)]
struct Tally {
    parts: Vec<(String, usize)>,
    user: (usize, usize),
    assistant: (usize, usize),
    results: (usize, usize),
}

impl Tally {
    /// Counts `bytes` for `label`: a part already counted grows, so each shows once
    /// (a system message's text and the JSON around it, or several system and
    /// developer messages, are one system prompt).
    fn add(&mut self, label: impl Into<String>, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let label = label.into();
        match self.parts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, counted)) => *counted += bytes,
            None => self.parts.push((label, bytes)),
        }
    }
}

/// The breakdown of the request at position `n` of `log`.
pub fn breakdown(log: &RequestLog, n: usize) -> Option<Breakdown> {
    let request = log.requests.get(n)?;
    let body = request.body.as_ref().ok()?;
    let total = request.sent.bytes;
    let format = request.sent.wire_format();
    let mut tally = Tally::default();
    if let Body::Object(fields) = body {
        for (key, value) in fields {
            match (format.field(key), value) {
                (Field::System, value) => {
                    let text = log.value_text(value);
                    system(&mut tally, &text);
                }
                (Field::Tools, FieldValue::Array(ids)) => {
                    for &id in ids {
                        let text = log.blob(id);
                        let name = format.tool_name(text).unwrap_or_else(|| "?".to_owned());
                        tally.add(format!("tool: {name}"), text.len());
                    }
                }
                (Field::Conversation, FieldValue::Array(ids)) => {
                    for &id in ids {
                        element(&mut tally, format, log.blob(id));
                    }
                }
                _ => {}
            }
        }
    }
    let Tally {
        mut parts,
        user,
        assistant,
        results,
    } = tally;
    for (label, (count, bytes)) in [
        ("user messages", user),
        ("assistant messages", assistant),
        ("tool results", results),
    ] {
        if count > 0 {
            parts.push((format!("{label} ({count})"), bytes));
        }
    }
    let counted: usize = parts.iter().map(|(_, b)| b).sum();
    if total > counted {
        parts.push(("request framing and settings".to_owned(), total - counted));
    }
    let reported = request
        .response
        .as_ref()
        .filter(|r| r.usage_reported)
        .map(|r| r.input_total());
    let (tokens, estimated) = match reported {
        Some(tokens) => (tokens, false),
        None => ((total as u64).div_ceil(4), true),
    };
    Some(scaled(parts, tokens, estimated))
}

/// The parts with `tokens` shared out by bytes (largest remainders get the rounding),
/// largest first.
fn scaled(parts: Vec<(String, usize)>, tokens: u64, estimated: bool) -> Breakdown {
    let bytes: u128 = parts.iter().map(|(_, b)| *b as u128).sum();
    let mut shared: Vec<(Part, u128)> = parts
        .into_iter()
        .map(|(label, b)| {
            let exact = (b as u128 * tokens as u128 * 1_000_000)
                .checked_div(bytes)
                .unwrap_or(0);
            let whole = u64::try_from(exact / 1_000_000).unwrap_or(u64::MAX);
            let part = Part {
                label,
                bytes: b,
                tokens: whole,
            };
            (part, exact % 1_000_000)
        })
        .collect();
    let given: u64 = shared.iter().map(|(p, _)| p.tokens).sum();
    let mut left = tokens.saturating_sub(given);
    let mut order: Vec<usize> = (0..shared.len()).collect();
    order.sort_by(|&a, &b| shared[b].1.cmp(&shared[a].1));
    for &i in order.iter().cycle().take(shared.len().max(1) * 2) {
        if left == 0 || shared.is_empty() {
            break;
        }
        shared[i].0.tokens += 1;
        left -= 1;
    }
    let mut parts: Vec<Part> = shared.into_iter().map(|(p, _)| p).collect();
    parts.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(b.bytes.cmp(&a.bytes)));
    Breakdown {
        parts,
        tokens,
        estimated,
    }
}

/// The system prompt's sections: the instruction files, memory, skills, the user's
/// extra instructions and the rest.
fn system(tally: &mut Tally, raw: &str) {
    let text = match serde_json::from_str::<Value>(raw) {
        Ok(value @ (Value::String(_) | Value::Array(_))) => text_of(&value),
        _ => raw.to_owned(),
    };
    system_text(tally, &text);
}

fn system_text(tally: &mut Tally, text: &str) {
    let mut base = 0;
    let mut start = 0;
    let mut label = None;
    let mut sections: Vec<(&'static str, usize)> = Vec::new();
    let heads = [
        ("\n\n# Instructions from AGENTS.md", "AGENTS.md / CLAUDE.md"),
        ("\n\n# Memory (", "memory"),
        ("\n\n# Skills\n", "skills"),
        ("\n\n# Additional instructions\n", "additional instructions"),
    ];
    let mut marks: Vec<(usize, &'static str)> = heads
        .iter()
        .filter_map(|(head, name)| text.find(head).map(|at| (at, *name)))
        .collect();
    marks.sort();
    for (at, name) in marks {
        match label {
            None => base += at - start,
            Some(previous) => sections.push((previous, at - start)),
        }
        start = at;
        label = Some(name);
    }
    match label {
        None => base += text.len() - start,
        Some(previous) => sections.push((previous, text.len() - start)),
    }
    tally.add("system prompt", base);
    for (name, bytes) in sections {
        tally.add(name, bytes);
    }
}

/// One element of the conversation, as its wire format tells it.
fn element(tally: &mut Tally, format: WireFormat, raw: &str) {
    let bytes = raw.len();
    let count = |slot: &mut (usize, usize)| {
        slot.0 += 1;
        slot.1 += bytes;
    };
    match format.element(raw) {
        Element::System(text) => {
            system_text(tally, &text);
            // The element's JSON around its text counts as the system prompt too.
            tally.add("system prompt", bytes.saturating_sub(text.len()));
        }
        Element::ToolResult => count(&mut tally.results),
        Element::Assistant => count(&mut tally.assistant),
        Element::User(content) => {
            if content.as_ref().is_some_and(|c| is_summary(c.get())) {
                tally.add("compaction summary", bytes);
            } else {
                count(&mut tally.user);
            }
        }
        Element::Other => count(&mut tally.user),
    }
}

/// Whether a user message's content (as sent) is the compaction summary.
fn is_summary(content: &str) -> bool {
    let as_text = format!("\"{SUMMARY_PREFIX}");
    content.starts_with(&as_text) || content.contains(&format!("\"text\":{as_text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_add_up_to_the_tokens() {
        let parts = vec![("a".into(), 7), ("b".into(), 5), ("c".into(), 1)];
        for tokens in [0, 1, 2, 13, 997, 1_000_003] {
            let b = scaled(parts.clone(), tokens, false);
            assert_eq!(b.parts.iter().map(|p| p.tokens).sum::<u64>(), tokens);
            assert!(b.parts.windows(2).all(|w| w[0].tokens >= w[1].tokens));
        }
    }

    #[test]
    fn each_part_of_the_system_prompt_shows_once() {
        use crate::llm::{FinishedCall, SentCall};
        // Chat completions: the system prompt as a message (its text and its JSON
        // counted apart), a developer message after it, memory in both.
        let body = serde_json::json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You are claw-tui.\n\n# Instructions from AGENTS.md\nuse tabs\n\n# Memory (user)\n\nlikes tea"},
                {"role": "developer", "content": "Be brief.\n\n# Memory (project)\n\nrust"},
                {"role": "user", "content": "hi"},
            ],
        })
        .to_string();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.requests.jsonl");
        let sent = SentCall {
            id: 0,
            agent: "main".into(),
            turn: 1,
            format: crate::llm::WireFormat::ChatCompletions,
            provider: "OpenAI".into(),
            model: "gpt-test".into(),
            url: "http://x/v1/chat/completions".into(),
            headers: Vec::new(),
            body: bytes::Bytes::from(body.clone()),
            time_ms: 0,
        };
        super::super::write_calls(&path, [(sent, FinishedCall::default())]);
        let log = RequestLog::load(&path).unwrap();
        let b = breakdown(&log, 0).unwrap();
        let mut labels: Vec<&str> = b.parts.iter().map(|p| p.label.as_str()).collect();
        labels.sort_unstable();
        assert_eq!(
            labels,
            [
                "AGENTS.md / CLAUDE.md",
                "memory",
                "request framing and settings",
                "system prompt",
                "user messages (1)"
            ]
        );
        assert_eq!(b.parts.iter().map(|p| p.bytes).sum::<usize>(), body.len());
    }

    #[test]
    fn system_sections_are_found() {
        let mut tally = Tally::default();
        let text = "You are\n\n# Instructions from AGENTS.md x\n\n# Memory (M)\n\nm\n\n# Skills\nS";
        system_text(&mut tally, text);
        let labels: Vec<&str> = tally.parts.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["system prompt", "AGENTS.md / CLAUDE.md", "memory", "skills"]
        );
        let total: usize = tally.parts.iter().map(|(_, b)| b).sum();
        assert_eq!(total, text.len());
    }
}
