//! Filling a command's template with what the user typed after it.

/// `body` with `$ARGUMENTS` replaced by `arguments` (trimmed) and `$1`…`$9` by its
/// words (`"quoted words"` count as one; a missing one is empty). When the template
/// uses neither and there are arguments, they are added at the end, so nothing the
/// user typed is lost.
pub fn expand(body: &str, arguments: &str) -> String {
    let arguments = arguments.trim();
    let words = split_arguments(arguments);
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
            continue;
        }
        let mut chars = after.chars();
        match (chars.next(), chars.next()) {
            // `$1`…`$9`, but not `$10` or `$1a`-like longer tokens' first digit alone.
            (Some(d @ '1'..='9'), next) if !next.is_some_and(|c| c.is_ascii_digit()) => {
                let index = usize::from(d as u8 - b'1');
                out.push_str(words.get(index).map_or("", String::as_str));
                used = true;
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(arguments);
    }
    out
}

/// The words of `arguments`: split at whitespace, a `"double-quoted"` or
/// `'single-quoted'` run kept as one word without its quotes.
pub fn split_arguments(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in arguments.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_and_positions_are_filled_and_nothing_typed_is_lost() {
        assert_eq!(
            expand(
                "Review $1 for $2. All: $ARGUMENTS",
                "src/a.rs \"error handling\""
            ),
            "Review src/a.rs for error handling. All: src/a.rs \"error handling\""
        );
        assert_eq!(expand("Fix $3 now", "a b"), "Fix  now");
        assert_eq!(
            expand("Cost $10 or $ or $x", "a"),
            "Cost $10 or $ or $x\n\nARGUMENTS: a"
        );
        assert_eq!(expand("Plain", ""), "Plain");
        assert_eq!(
            expand("Plain", "  extra words "),
            "Plain\n\nARGUMENTS: extra words"
        );
        assert_eq!(split_arguments("a 'b c'  \"d\"e"), ["a", "b c", "de"]);
    }
}
