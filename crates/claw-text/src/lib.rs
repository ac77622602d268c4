//! Text for people, shortened or summed up: a line cut to a width, a call's most telling
//! argument, a token count, a byte size. One place, so that every front-end and tool
//! says these things alike; nothing here knows of the rest of the program.

/// At most `max` characters, with an ellipsis when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// `text` on one line (runs of whitespace made one space), cut to `max` characters
/// with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// The most telling argument of a tool call (its command, path, URL, query, task or
/// action; else the whole arguments), on one line of at most 80 characters.
pub fn summarize_args(args: &serde_json::Value) -> String {
    let key_order = ["command", "path", "url", "query", "task", "action"];
    let text = key_order
        .iter()
        .find_map(|k| args.get(*k).and_then(|v| v.as_str()).map(str::to_owned))
        .unwrap_or_else(|| args.to_string());
    clip(&text.replace('\n', " "), 80)
}

/// A token count as the chat shows it: `950`, `7.9k`, `182k`, `1.2M`.
pub fn short_tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=9_949 => format!("{:.1}k", n as f64 / 1000.0),
        9_950..=999_499 => format!("{}k", (n + 500) / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// A byte size for people, in binary units as the program counts its limits: `512 B`,
/// `1.5 KiB`, `16 MiB` (the `bytesize` crate's IEC form, without a `.0`).
pub fn byte_size(bytes: u64) -> String {
    let text = bytesize::ByteSize::b(bytes).display().iec().to_string();
    text.replace(".0 ", " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clips_count_characters_and_end_with_an_ellipsis() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("ééééé", 3), "éé…");
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("word  word", 6), "word…");
    }

    #[test]
    fn a_call_is_summed_up_by_its_most_telling_argument() {
        assert_eq!(
            summarize_args(&json!({"path": "a.rs", "command": "ls\n-l"})),
            "ls -l"
        );
        assert_eq!(summarize_args(&json!({"n": 1})), r#"{"n":1}"#);
    }

    #[test]
    fn counts_and_sizes_read_naturally() {
        assert_eq!(short_tokens(950), "950");
        assert_eq!(short_tokens(7_900), "7.9k");
        assert_eq!(short_tokens(182_000), "182k");
        assert_eq!(short_tokens(1_200_000), "1.2M");
        assert_eq!(byte_size(512), "512 B");
        assert_eq!(byte_size(1536), "1.5 KiB");
        assert_eq!(byte_size(16 * 1024 * 1024), "16 MiB");
        assert_eq!(byte_size(209_500), "204.6 KiB");
    }
}
