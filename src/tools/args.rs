//! Reading tool arguments with errors a model can act on.
//!
//! The agent loop validates arguments against each tool's schema, but tools can also be
//! called directly, so every tool re-checks what it reads. `null` counts as absent
//! because models often send it for optional fields they do not use.

use serde_json::Value;

/// A required string argument; absent, `null` or not a string is an error.
pub fn required_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    match args.get(key) {
        None | Some(Value::Null) => Err(format!(
            "Missing required argument \"{key}\" (a string). Call again with \"{key}\" set."
        )),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "Argument \"{key}\" must be a string, got {}.",
            kind(other)
        )),
    }
}

/// A required string argument that must not be empty or only whitespace.
pub fn required_text<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    let text = required_str(args, key)?;
    if text.trim().is_empty() {
        return Err(format!("Argument \"{key}\" must not be empty."));
    }
    Ok(text)
}

/// An optional string argument.
pub fn optional_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "Argument \"{key}\" must be a string, got {}.",
            kind(other)
        )),
    }
}

/// An optional string argument where an empty or blank string counts as absent.
pub fn optional_text<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    Ok(optional_str(args, key)?.filter(|s| !s.trim().is_empty()))
}

/// An optional non-negative integer argument; whole floats such as `3.0` are accepted.
pub fn optional_u64(args: &Value, key: &str) -> Result<Option<u64>, String> {
    let value = match args.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    if let Some(n) = value.as_u64() {
        return Ok(Some(n));
    }
    if let Some(f) = value.as_f64()
        && f >= 0.0
        && f.fract() == 0.0
        && f <= u64::MAX as f64
    {
        // Exact: the value is whole and within range.
        return Ok(Some(f as u64));
    }
    Err(format!(
        "Argument \"{key}\" must be a non-negative whole number, got {value}."
    ))
}

/// An optional integer argument that must be at least `min`.
pub fn optional_u64_min(args: &Value, key: &str, min: u64) -> Result<Option<u64>, String> {
    match optional_u64(args, key) {
        Ok(Some(n)) if n < min => Err(format!(
            "Argument \"{key}\" must be at least {min}, got {n}."
        )),
        Err(_) if min > 0 && args.get(key).and_then(Value::as_i64).is_some() => Err(format!(
            "Argument \"{key}\" must be at least {min}, got {}.",
            args[key]
        )),
        other => other,
    }
}

/// An optional boolean argument.
pub fn optional_bool(args: &Value, key: &str) -> Result<Option<bool>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!(
            "Argument \"{key}\" must be true or false, got {}.",
            kind(other)
        )),
    }
}

/// The JSON type name of `value`, for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_and_their_limits() {
        let args = json!({"a": 3, "b": 3.0, "c": -1, "d": 2.5, "e": "3", "f": null, "z": 0});
        assert_eq!(optional_u64(&args, "a"), Ok(Some(3)));
        assert_eq!(optional_u64(&args, "b"), Ok(Some(3)));
        assert_eq!(optional_u64(&args, "f"), Ok(None));
        assert_eq!(optional_u64(&args, "missing"), Ok(None));
        assert!(optional_u64(&args, "d").is_err());
        assert!(optional_u64(&args, "e").is_err());
        assert_eq!(
            optional_u64_min(&args, "c", 1),
            Err("Argument \"c\" must be at least 1, got -1.".to_owned())
        );
        assert_eq!(
            optional_u64_min(&args, "z", 1),
            Err("Argument \"z\" must be at least 1, got 0.".to_owned())
        );
    }

    #[test]
    fn strings_report_what_is_wrong() {
        let args = json!({"s": "x", "n": 1, "blank": "  "});
        assert_eq!(required_str(&args, "s"), Ok("x"));
        assert!(
            required_str(&args, "missing")
                .unwrap_err()
                .contains("Missing")
        );
        assert!(required_str(&args, "n").unwrap_err().contains("a number"));
        assert!(required_text(&args, "blank").unwrap_err().contains("empty"));
        assert_eq!(optional_text(&args, "blank"), Ok(None));
    }
}
