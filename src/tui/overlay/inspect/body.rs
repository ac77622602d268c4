//! The Body view's document: the exact JSON of a request, indented (order and text as
//! sent), one foldable block per message, tool and large value; built once when a
//! request is opened, so drawing only copies rows.

use crate::inspect::RequestLog;
use crate::inspect::log::{Body, FieldValue};

/// Longest row of the document; longer text continues on the next rows.
const ROW_CHARS: usize = 160;
/// A value longer than this gets a block of its own, folded.
const FOLD_BYTES: usize = 200;

/// One block of rows: a field, or an element of an array field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The one row shown while folded.
    pub summary: String,
    /// The rows shown unfolded.
    pub rows: Vec<String>,
    /// Whether it folds at all.
    pub foldable: bool,
    /// Whether it is folded now.
    pub folded: bool,
}

impl Block {
    /// The rows it shows now.
    pub fn shown(&self) -> &[String] {
        if self.folded {
            std::slice::from_ref(&self.summary)
        } else {
            &self.rows
        }
    }

    fn fixed(rows: Vec<String>) -> Self {
        Self {
            summary: rows.first().cloned().unwrap_or_default(),
            rows,
            foldable: false,
            folded: false,
        }
    }
}

/// A request body as blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BodyDoc {
    /// The blocks in order.
    pub blocks: Vec<Block>,
}

impl BodyDoc {
    /// The document of request `n`'s body.
    pub fn build(log: &RequestLog, n: usize) -> Self {
        let mut blocks = vec![Block::fixed(vec!["{".into()])];
        match log.requests.get(n).and_then(|r| r.body.as_ref().ok()) {
            Some(Body::Object(fields)) => {
                for (i, (key, value)) in fields.iter().enumerate() {
                    let comma = if i + 1 < fields.len() { "," } else { "" };
                    let key_text = serde_json::to_string(key).unwrap_or_default();
                    field(log, &mut blocks, (&key_text, value), comma);
                }
            }
            Some(Body::Whole(id)) => {
                let rows = pretty(log.blob(*id), 1);
                blocks.push(folding(
                    format!("  body ({} bytes)", log.blob(*id).len()),
                    rows,
                ));
            }
            None => blocks.push(Block::fixed(vec![
                "  (the body cannot be rebuilt from the log)".into(),
            ])),
        }
        blocks.push(Block::fixed(vec!["}".into()]));
        Self { blocks }
    }

    /// The rows shown, with the block each belongs to.
    pub fn rows(&self) -> impl Iterator<Item = (usize, &str)> {
        self.blocks
            .iter()
            .enumerate()
            .flat_map(|(b, block)| block.shown().iter().map(move |r| (b, r.as_str())))
    }

    /// The first row of block `b`.
    pub fn row_of(&self, b: usize) -> usize {
        self.blocks.iter().take(b).map(|x| x.shown().len()).sum()
    }

    /// The next block from `after` on (wrapping around) whose text holds `query`, and
    /// the row of the first hit inside it (relative to the block).
    pub fn find(&self, query: &str, after: usize) -> Option<(usize, usize)> {
        let query = query.to_lowercase();
        if query.is_empty() || self.blocks.is_empty() {
            return None;
        }
        let count = self.blocks.len();
        (1..=count)
            .map(|step| (after + step) % count)
            .find_map(|b| {
                let block = &self.blocks[b];
                block
                    .rows
                    .iter()
                    .position(|r| r.to_lowercase().contains(&query))
                    .or_else(|| block.summary.to_lowercase().contains(&query).then_some(0))
                    .map(|row| (b, row))
            })
    }
}

fn field(
    log: &RequestLog,
    blocks: &mut Vec<Block>,
    (key, value): (&str, &FieldValue),
    comma: &str,
) {
    match value {
        FieldValue::Array(ids) => {
            blocks.push(Block::fixed(vec![format!("  {key}: [")]));
            for (i, &id) in ids.iter().enumerate() {
                let text = log.blob(id);
                let more = if i + 1 < ids.len() { "," } else { "" };
                let mut rows = pretty(text, 2);
                if let Some(last) = rows.last_mut() {
                    last.push_str(more);
                }
                let summary = format!("    ▸ [{i}] {} ({} bytes)", describe(text), text.len());
                blocks.push(folding(summary, rows));
            }
            blocks.push(Block::fixed(vec![format!("  ]{comma}")]));
        }
        other => {
            let text = log.value_text(other);
            let mut rows = pretty(&text, 1);
            if let Some(first) = rows.first_mut() {
                *first = format!("  {key}: {}", first.trim_start());
            }
            if let Some(last) = rows.last_mut() {
                last.push_str(comma);
            }
            if text.len() > FOLD_BYTES {
                let summary = format!("  ▸ {key}: … ({} bytes)", text.len());
                blocks.push(folding(summary, rows));
            } else {
                blocks.push(Block::fixed(rows));
            }
        }
    }
}

fn folding(summary: String, rows: Vec<String>) -> Block {
    Block {
        summary,
        rows,
        foldable: true,
        folded: true,
    }
}

/// What an element is: its role or type and the start of its text.
fn describe(text: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let kind = ["role", "type", "name"]
        .iter()
        .find_map(|k| value.get(k).and_then(|v| v.as_str()))
        .unwrap_or("");
    let name = value
        .get("name")
        .or_else(|| value.get("function").and_then(|f| f.get("name")))
        .and_then(|v| v.as_str())
        .filter(|n| *n != kind)
        .map(|n| format!(" {n}"))
        .unwrap_or_default();
    let preview: String = first_text(&value).chars().take(60).collect();
    let preview = preview.replace(['\n', '\r'], " ");
    format!("{kind}{name} {preview:?}")
}

fn first_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(first_text)
            .find(|t| !t.is_empty())
            .unwrap_or_default(),
        serde_json::Value::Object(map) => ["content", "text", "output", "arguments", "description"]
            .iter()
            .filter_map(|k| map.get(*k))
            .map(first_text)
            .find(|t| !t.is_empty())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// `raw` JSON indented two spaces a level from `level` on, its tokens untouched (keys in
/// the order sent); rows longer than [`ROW_CHARS`] continue on the next rows.
pub fn pretty(raw: &str, level: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let mut row = "  ".repeat(level);
    let mut depth = level;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            row.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                row.push(c);
            }
            '{' | '[' => {
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    row.push(c);
                    row.push(close);
                    chars.next();
                    continue;
                }
                row.push(c);
                depth += 1;
                rows.push(std::mem::replace(&mut row, "  ".repeat(depth)));
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if !row.trim().is_empty() {
                    rows.push(std::mem::replace(&mut row, "  ".repeat(depth)));
                } else {
                    row = "  ".repeat(depth);
                }
                row.push(c);
            }
            ',' => {
                row.push(c);
                rows.push(std::mem::replace(&mut row, "  ".repeat(depth)));
            }
            ':' => row.push_str(": "),
            c if c.is_whitespace() => {}
            c => row.push(c),
        }
    }
    if !row.trim().is_empty() {
        rows.push(row);
    }
    rows.into_iter().flat_map(split_long).collect()
}

fn split_long(row: String) -> Vec<String> {
    if row.chars().count() <= ROW_CHARS {
        return vec![row];
    }
    let indent = row.len() - row.trim_start().len();
    let chars: Vec<char> = row.chars().collect();
    chars
        .chunks(ROW_CHARS)
        .enumerate()
        .map(|(i, chunk)| {
            let text: String = chunk.iter().collect();
            if i == 0 {
                text
            } else {
                format!("{}↪ {text}", " ".repeat(indent))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indenting_keeps_the_tokens_in_order() {
        let rows = pretty(r#"{"z":1,"a":[true,{"k":"x, {y}"}],"e":{}}"#, 0);
        assert_eq!(
            rows,
            [
                "{",
                "  \"z\": 1,",
                "  \"a\": [",
                "    true,",
                "    {",
                "      \"k\": \"x, {y}\"",
                "    }",
                "  ],",
                "  \"e\": {}",
                "}"
            ]
        );
        let long = format!("\"{}\"", "x".repeat(400));
        assert_eq!(pretty(&long, 0).len(), 3);
    }
}
