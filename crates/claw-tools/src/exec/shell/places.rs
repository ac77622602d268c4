//! Where each word of a script is written, so that a word can be replaced by another:
//! how a hook is made to run the checked copy of a file it names.

use super::parse;
use std::ops::Range;

/// Every word of `script`, nested scripts included, unquoted, with the bytes of
/// `script` it is written as (quotes included); `None` for a word inside text that is
/// not the script as written (a here-document, backticks with escapes).
pub(crate) fn word_places(script: &str) -> Vec<(String, Option<Range<usize>>)> {
    let mut found = Vec::new();
    collect(script, Some(0), &mut found);
    let bytes: Vec<usize> = script.char_indices().map(|(b, _)| b).collect();
    let byte = |i: usize| bytes.get(i).copied().unwrap_or(script.len());
    found
        .into_iter()
        .map(|(word, at)| (word, at.map(|r| byte(r.start)..byte(r.end))))
        .collect()
}

/// The words of `script` with their character ranges, shifted by `base` (where
/// `script` starts in the outermost one; `None`: not written there as is).
fn collect(script: &str, base: Option<usize>, found: &mut Vec<(String, Option<Range<usize>>)>) {
    let parsed = parse(script);
    for (word, at) in parsed.spans {
        found.push((word, base.map(|b| b + at.start..b + at.end)));
    }
    for (nested, at) in parsed.nested.iter().zip(&parsed.nested_at) {
        collect(nested, base.and_then(|b| at.map(|a| b + a)), found);
    }
}

/// `text` as one shell word, in single quotes.
pub(crate) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `script` with every word for which `replace` gives a new text written as that text
/// instead (quoted), and the words `replace` wanted replaced that cannot be (inside a
/// here-document, or overlapping another).
pub fn replace_words(
    script: &str,
    replace: impl Fn(&str) -> Option<String>,
) -> (String, Vec<String>) {
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut stuck = Vec::new();
    for (word, at) in word_places(script) {
        let Some(new) = replace(&word) else {
            continue;
        };
        match at {
            Some(at)
                if !edits
                    .iter()
                    .any(|(r, _)| r.start < at.end && at.start < r.end) =>
            {
                edits.push((at, quote(&new)));
            }
            _ => stuck.push(word),
        }
    }
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = script.to_owned();
    for (at, new) in edits {
        out.replace_range(at, &new);
    }
    (out, stuck)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_found_where_they_are_written() {
        let script = "sh 'a b.sh' --c=\"x.json\" && out=$(sh ./y.sh) `z.sh`";
        let places = word_places(script);
        for (word, at) in &places {
            let at = at.clone().unwrap();
            let raw = &script[at];
            assert!(
                raw.replace(['\'', '"'], "") == *word || raw.contains(word.as_str()),
                "{word:?} at {raw:?}"
            );
        }
        let words: Vec<&str> = places.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            words,
            [
                "sh",
                "a b.sh",
                "--c=x.json",
                "out=$(sh ./y.sh)",
                "`z.sh`",
                "sh",
                "./y.sh",
                "z.sh"
            ]
        );
    }

    #[test]
    fn words_are_replaced_quoted_and_here_documents_are_not() {
        let pick =
            |w: &str| (w == "a b.sh" || w == "./y.sh" || w == "h.sh").then(|| format!("/c/{w}"));
        let (out, stuck) = replace_words("sh 'a b.sh' x; v=$(sh ./y.sh); é ./y.sh", pick);
        assert_eq!(out, "sh '/c/a b.sh' x; v=$(sh '/c/./y.sh'); é '/c/./y.sh'");
        assert!(stuck.is_empty());
        let (out, stuck) = replace_words("sh <<EOF\nsh h.sh\nEOF\n", pick);
        assert_eq!(out, "sh <<EOF\nsh h.sh\nEOF\n");
        assert_eq!(stuck, ["h.sh"]);
        let (_, stuck) = replace_words("echo `sh \\`x\\` h.sh`", pick);
        assert_eq!(stuck, ["h.sh"]);
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
