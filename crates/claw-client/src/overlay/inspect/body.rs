//! The Body view's document: the exact JSON of a request, indented (order and text as
//! sent), one foldable block per message, tool and large value; built once when a
//! request is opened, so drawing only copies rows.

use claw_runtime::inspect::RequestLog;
use claw_runtime::inspect::log::{Body, FieldValue};

/// Longest row of the document; longer text continues on the next rows.
const ROW_CHARS: usize = 160;
/// A value longer than this gets a block of its own, folded.
const FOLD_BYTES: usize = 200;

/// What a folded block's rows are made from when it is first unfolded.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Source {
    /// The JSON as sent.
    raw: String,
    /// Its indentation level.
    level: usize,
    /// `"key": ` in front of its first row, if it is a field.
    key: Option<String>,
    /// What follows its last row (`,` or nothing).
    comma: &'static str,
}

/// One block of rows: a field, or an element of an array field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The one row shown while folded.
    pub summary: String,
    /// The rows shown unfolded (made when first unfolded).
    rows: Vec<String>,
    source: Option<Source>,
    /// Whether it folds at all.
    pub foldable: bool,
    /// Whether it is folded now.
    pub folded: bool,
}

impl Block {
    /// The rows it shows now.
    pub fn shown(&self) -> &[String] {
        if self.folded || self.rows.is_empty() {
            std::slice::from_ref(&self.summary)
        } else {
            &self.rows
        }
    }

    /// Shows its rows (indenting its JSON the first time).
    pub fn unfold(&mut self) {
        self.folded = false;
        if let Some(source) = self.source.take() {
            let mut rows = pretty(&source.raw, source.level);
            if let (Some(key), Some(first)) = (&source.key, rows.first_mut()) {
                *first = format!("{}{key}: {}", "  ".repeat(source.level), first.trim_start());
            }
            if let Some(last) = rows.last_mut() {
                last.push_str(source.comma);
            }
            self.rows = rows;
        }
    }

    /// Whether its text holds `query` (lower case).
    fn holds(&self, query: &str) -> bool {
        let raw = self.source.as_ref().map_or("", |s| s.raw.as_str());
        raw.to_lowercase().contains(query)
            || self.summary.to_lowercase().contains(query)
            || self.rows.iter().any(|r| r.to_lowercase().contains(query))
    }

    fn fixed(rows: Vec<String>) -> Self {
        Self {
            summary: rows.first().cloned().unwrap_or_default(),
            rows,
            source: None,
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
                let raw = log.blob(*id);
                let summary = format!("  ▸ body ({} bytes)", raw.len());
                blocks.push(folding(summary, source(raw.to_owned(), 1, None, "")));
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

    /// The next block from `after` on (wrapping around) whose text holds `query`,
    /// unfolded, and the row of the first hit inside it (relative to the block).
    pub fn find(&mut self, query: &str, after: usize) -> Option<(usize, usize)> {
        let query = query.to_lowercase();
        if query.is_empty() || self.blocks.is_empty() {
            return None;
        }
        let count = self.blocks.len();
        let b = (1..=count)
            .map(|step| (after + step) % count)
            .find(|&b| self.blocks[b].holds(&query))?;
        let block = &mut self.blocks[b];
        block.unfold();
        let row = block
            .rows
            .iter()
            .position(|r| r.to_lowercase().contains(&query))
            .unwrap_or(0);
        Some((b, row))
    }
}

fn field(
    log: &RequestLog,
    blocks: &mut Vec<Block>,
    (key, value): (&str, &FieldValue),
    comma: &'static str,
) {
    match value {
        FieldValue::Array(ids) => {
            blocks.push(Block::fixed(vec![format!("  {key}: [")]));
            for (i, &id) in ids.iter().enumerate() {
                let text = log.blob(id);
                let more = if i + 1 < ids.len() { "," } else { "" };
                let summary = format!("    ▸ [{i}] {} ({} bytes)", describe(text), text.len());
                blocks.push(folding(summary, source(text.to_owned(), 2, None, more)));
            }
            blocks.push(Block::fixed(vec![format!("  ]{comma}")]));
        }
        other => {
            let text = log.value_text(other);
            let len = text.len();
            let mut block = folding(
                format!("  ▸ {key}: … ({len} bytes)"),
                source(text, 1, Some(key.to_owned()), comma),
            );
            if len <= FOLD_BYTES {
                block.unfold();
                block.foldable = false;
            }
            blocks.push(block);
        }
    }
}

fn source(raw: String, level: usize, key: Option<String>, comma: &'static str) -> Source {
    Source {
        raw,
        level,
        key,
        comma,
    }
}

fn folding(summary: String, source: Source) -> Block {
    Block {
        summary,
        rows: Vec::new(),
        source: Some(source),
        foldable: true,
        folded: true,
    }
}

/// The fields an element's one-line description names; the rest is skipped unparsed.
#[derive(Default, serde::Deserialize)]
struct Head {
    role: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    name: Option<String>,
}

/// What an element is: its role, type or name and the start of its text, read without
/// parsing all of it (the document is built for every element of the history).
fn describe(text: &str) -> String {
    let head: Head = serde_json::from_str(text).unwrap_or_default();
    let name = head.name.or_else(|| string_after(text, r#""name":""#));
    let kind = head
        .role
        .or(head.kind)
        .or_else(|| name.clone())
        .unwrap_or_default();
    let name = name
        .filter(|n| *n != kind)
        .map(|n| format!(" {n}"))
        .unwrap_or_default();
    let preview = [
        r#""text":""#,
        r#""content":""#,
        r#""output":""#,
        r#""description":""#,
    ]
    .iter()
    .find_map(|key| string_after(text, key))
    .unwrap_or_default();
    // The JSON string decoded once and shown as text: escaping it again for the row
    // made a tool call's arguments (JSON inside a string) read `{\\\"path\\\":…`.
    let preview = serde_json::from_str::<String>(&format!("\"{preview}\""))
        .unwrap_or(preview)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let preview: String = preview
        .chars()
        .filter(|c| !c.is_control())
        .take(60)
        .collect();
    format!("{kind}{name} “{preview}”")
}

/// The (still escaped) text of the first string that follows `key` in `raw`.
fn string_after(raw: &str, key: &str) -> Option<String> {
    let start = raw.find(key)? + key.len();
    let rest = &raw[start..];
    let mut escaped = false;
    let end = rest
        .char_indices()
        .find(|&(_, c)| {
            let close = !escaped && c == '"';
            escaped = !escaped && c == '\\';
            close
        })
        .map_or(rest.len(), |(i, _)| i);
    Some(rest[..end].to_owned())
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

    #[test]
    fn an_element_is_described_with_its_text_decoded_once() {
        // An OpenAI tool call: its arguments are JSON inside a string.
        let call = r#"{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/a.rs\"}"}}],"content":"I will \"read\" it\nnow"}"#;
        assert_eq!(
            describe(call),
            "assistant read_file “I will \"read\" it now”"
        );
        let result = r#"{"type":"function_call_output","output":"{\"ok\":true}\t\u001b[31m"}"#;
        assert_eq!(
            describe(result),
            "function_call_output “{\"ok\":true} [31m”"
        );
    }
}
