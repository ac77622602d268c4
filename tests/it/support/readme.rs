//! The README as tests read it: its fenced blocks and its section headings, so that
//! what it tells a user is run as written.

use std::path::Path;

/// The README's text.
pub fn text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The fenced blocks of the README, as (info string, text).
pub fn blocks() -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text().lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) => current = Some((info.trim().to_owned(), String::new())),
            (Some(_), Some(_)) => blocks.extend(current.take()),
            (Some((_, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// The README block of kind `info` that mentions `needle`.
pub fn block(info: &str, needle: &str) -> String {
    blocks()
        .into_iter()
        .find(|(i, text)| i == info && text.contains(needle))
        .map(|(_, text)| text)
        .unwrap_or_else(|| panic!("the README has no {info} block with {needle}"))
}

/// The README's `## ` section headings, in order (those inside code blocks left out).
pub fn sections() -> Vec<String> {
    let mut fenced = false;
    text()
        .lines()
        .filter(|line| {
            if line.starts_with("```") {
                fenced = !fenced;
            }
            !fenced
        })
        .filter_map(|line| line.strip_prefix("## ").map(str::to_owned))
        .collect()
}
