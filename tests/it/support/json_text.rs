//! Pieces of JSON text as sent, byte for byte: the raw value of a top-level field and
//! the raw elements of an array, for checking that request bodies stay byte-stable.

/// The byte ranges of the values at depth 1 of `raw` (an object's values with their keys,
/// or an array's elements), in order.
fn top_level(raw: &str) -> Vec<(Option<&str>, &str)> {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = None;
    let mut key: Option<&str> = None;
    let mut string_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    // A string at depth 1 followed by `:` is a key.
                    if depth == 1 && start.is_none() && raw[i + 1..].trim_start().starts_with(':') {
                        key = Some(&raw[string_start + 1..i]);
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i;
                // A string value (after a key, or an array element), not a key.
                if depth == 1 && start.is_none() && (key.is_some() || bytes[0] == b'[') {
                    start = Some(i);
                }
            }
            b'{' | b'[' => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
                depth += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 0
                    && let Some(s) = start.take()
                {
                    out.push((key.take(), raw[s..i].trim_end()));
                }
            }
            b',' if depth == 1 => {
                if let Some(s) = start.take() {
                    out.push((key.take(), raw[s..i].trim_end()));
                }
            }
            b':' | b' ' | b'\n' | b'\t' | b'\r' => {}
            _ => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
            }
        }
    }
    out
}

/// The raw text of the value of the top-level `key` of the object `raw`.
pub fn field<'a>(raw: &'a str, key: &str) -> &'a str {
    top_level(raw)
        .into_iter()
        .find(|(k, _)| *k == Some(key))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no field {key} in {raw}"))
}

/// The raw texts of the elements of the array `raw`.
pub fn elements(raw: &str) -> Vec<&str> {
    assert!(raw.starts_with('['), "not an array: {raw}");
    top_level(raw).into_iter().map(|(_, v)| v).collect()
}

#[test]
fn fields_and_elements_are_cut_as_written() {
    let raw = r#"{"a":[1,{"b":"x,]}"},"c\"d"],"s":"q","n":{"k":[2]}}"#;
    assert_eq!(field(raw, "a"), r#"[1,{"b":"x,]}"},"c\"d"]"#);
    assert_eq!(field(raw, "s"), r#""q""#);
    assert_eq!(field(raw, "n"), r#"{"k":[2]}"#);
    assert_eq!(
        elements(field(raw, "a")),
        vec!["1", r#"{"b":"x,]}"}"#, r#""c\"d""#]
    );
}
