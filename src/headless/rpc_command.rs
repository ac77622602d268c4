//! Reading one RPC command: the command names and their fields come from the
//! [`Command`] type itself, through its generated JSON Schema, so an error response lists
//! exactly the commands that exist and says which field is wrong.

use super::rpc::Command;
use crate::tools::args;
use serde_json::Value;
use std::sync::OnceLock;

/// Why a line is not a command; the text is the response's `error`.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum CommandError {
    /// No `type` string.
    #[error("missing \"type\"; expected one of {}", names())]
    NoType,
    /// A `type` that names no command.
    #[error("unknown command type \"{name}\"; expected one of {}", names())]
    Unknown {
        /// The `type` sent.
        name: String,
    },
    /// A known command with fields it cannot take.
    #[error("bad \"{name}\" command: {problem}")]
    Bad {
        /// The command.
        name: String,
        /// What is wrong, with the field it is about.
        problem: String,
    },
}

/// The command in `value`, a JSON object with a `type`.
pub(super) fn parse(value: Value) -> Result<Command, CommandError> {
    let name = match value.get("type") {
        Some(Value::String(name)) => name.clone(),
        _ => return Err(CommandError::NoType),
    };
    let Some(schema) = variant_schema(&name) else {
        return Err(CommandError::Unknown { name });
    };
    // The schema's wording names the field ("/turn: \"x\" is not of type \"integer\"");
    // serde's would not for a tagged enum, so it is asked only when the schema says yes.
    if let Ok(validator) = jsonschema::validator_for(schema)
        && let Some(e) = validator.iter_errors(&value).next()
    {
        let path = e.instance_path().to_string();
        let problem = if path.is_empty() {
            e.to_string()
        } else {
            format!("{path}: {e}")
        };
        return Err(CommandError::Bad { name, problem });
    }
    serde_json::from_value(value).map_err(|e| CommandError::Bad {
        name,
        problem: e.to_string(),
    })
}

/// The command names, comma-separated, in the order they are declared.
pub(super) fn names() -> &'static str {
    static NAMES: OnceLock<String> = OnceLock::new();
    NAMES.get_or_init(|| {
        variants()
            .iter()
            .filter_map(tag_of)
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// The schema of each command, one per variant of [`Command`].
fn variants() -> &'static [Value] {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA
        .get_or_init(args::schema::<Command>)
        .get("oneOf")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn variant_schema(name: &str) -> Option<&'static Value> {
    variants().iter().find(|v| tag_of(v) == Some(name))
}

/// The `type` a command's schema requires.
fn tag_of(variant: &Value) -> Option<&str> {
    let tag = &variant["properties"]["type"];
    tag["const"]
        .as_str()
        .or_else(|| tag["enum"].get(0).and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_command_is_named_in_declaration_order() {
        assert_eq!(
            names(),
            "prompt, steer, follow_up, abort, interrupt_tools, compact, get_state, set_queue_mode, \
             approve, set_mode, undo, rewind, diff, get_requests, get_request"
        );
    }

    #[test]
    fn errors_say_which_command_and_field() {
        let problem = |line: Value| parse(line).unwrap_err().to_string();
        assert_eq!(
            problem(json!({"content": "hi"})),
            format!("missing \"type\"; expected one of {}", names())
        );
        assert_eq!(
            problem(json!({"type": "frobnicate"})),
            format!(
                "unknown command type \"frobnicate\"; expected one of {}",
                names()
            )
        );
        assert_eq!(
            problem(json!({"type": "prompt"})),
            "bad \"prompt\" command: \"content\" is a required property"
        );
        assert_eq!(
            problem(json!({"type": "rewind", "turn": "two", "files": true})),
            "bad \"rewind\" command: /turn: \"two\" is not of type \"integer\""
        );
        let bad_mode =
            problem(json!({"type": "set_queue_mode", "queue": "steering", "mode": "some"}));
        assert!(
            bad_mode.starts_with("bad \"set_queue_mode\" command: /mode: "),
            "{bad_mode}"
        );
        assert!(matches!(
            parse(json!({"type": "rewind", "turn": 2, "files": true})),
            Ok(Command::Rewind {
                turn: 2,
                files: true,
                conversation: false,
                ..
            })
        ));
    }

    /// docs/rpc.md's table of commands has a row for each command, naming each of its
    /// fields, and no row for a command that does not exist.
    #[test]
    fn the_protocol_document_lists_every_command_and_field() {
        let doc = include_str!("../../docs/rpc.md");
        let rows: Vec<&str> = doc
            .lines()
            .skip_while(|l| !l.starts_with("## Commands"))
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with('|'))
            .collect();
        for variant in variants() {
            let name = tag_of(variant).unwrap();
            let row = rows
                .iter()
                .find(|r| r.starts_with(&format!("| `{name}` |")))
                .unwrap_or_else(|| panic!("docs/rpc.md has no row for `{name}`"));
            let fields_column = row.split(" | ").nth(1).unwrap();
            for field in variant["properties"].as_object().unwrap().keys() {
                if field != "type" {
                    assert!(
                        fields_column.contains(&format!("`{field}`")),
                        "docs/rpc.md: `{name}` does not mention `{field}`: {row}"
                    );
                }
            }
        }
        for row in &rows {
            let name = row.trim_start_matches("| `").split('`').next().unwrap();
            assert!(variant_schema(name).is_some(), "docs/rpc.md lists `{name}`");
        }
    }
}
