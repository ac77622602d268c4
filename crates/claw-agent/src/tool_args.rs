//! Checking a tool call's arguments against the tool's JSON Schema, and why they fail.

use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// A tool's parameter schema that the validator cannot compile.
#[derive(Debug, thiserror::Error)]
#[error("the tool's parameter schema is invalid: {0}")]
pub struct InvalidSchema(#[source] pub jsonschema::ValidationError<'static>);

/// One place where arguments break the schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// The JSON Pointer of the offending value (`/` for the arguments as a whole).
    pub path: String,
    /// What is wrong there, in the validator's words.
    pub message: String,
}

/// Every place where arguments break the schema, shown one `  - PATH: MESSAGE` line each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolations(pub Vec<SchemaViolation>);

impl fmt::Display for SchemaViolations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "  - {}: {}", violation.path, violation.message)?;
        }
        Ok(())
    }
}

/// Where `args` break the schema `validator` was compiled from (empty: they fit).
pub fn violations(validator: &jsonschema::Validator, args: &Value) -> SchemaViolations {
    SchemaViolations(
        validator
            .iter_errors(args)
            .map(|e| {
                let path = e.instance_path().to_string();
                SchemaViolation {
                    path: if path.is_empty() {
                        "/".to_owned()
                    } else {
                        path
                    },
                    message: e.to_string(),
                }
            })
            .collect(),
    )
}

/// Why a tool call's arguments were refused before the tool ran.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ArgsError {
    /// No tool of that name is offered.
    #[error("Tool \"{name}\" not found")]
    UnknownTool {
        /// The name the call gave.
        name: String,
    },
    /// The tool's own schema does not compile, so no call of it can be checked.
    #[error("Cannot validate arguments for tool \"{name}\": {source}")]
    Uncheckable {
        /// The tool.
        name: String,
        /// Why its schema does not compile.
        #[source]
        source: Arc<InvalidSchema>,
    },
    /// The arguments break the schema.
    #[error(
        "Validation failed for tool \"{name}\":\n{violations}\n\nReceived arguments:\n{}",
        pretty(.received)
    )]
    Invalid {
        /// The tool.
        name: String,
        /// Where and how.
        violations: SchemaViolations,
        /// The arguments as the call gave them.
        received: Value,
    },
}

/// `value` as indented JSON.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_name_each_path_and_the_root_as_a_slash() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(violations(&validator, &json!({"n": 1})).0.is_empty());
        let text = violations(&validator, &json!({})).to_string();
        assert!(text.starts_with("  - /: "), "{text}");
        assert!(text.contains("\"n\""), "{text}");
        let text = violations(&validator, &json!({"n": "x"})).to_string();
        assert!(text.starts_with("  - /n: "), "{text}");
    }

    #[test]
    fn a_schema_that_does_not_compile_says_so() {
        let error = jsonschema::validator_for(&json!({"type": 12})).unwrap_err();
        let text = InvalidSchema(error).to_string();
        assert!(
            text.starts_with("the tool's parameter schema is invalid: "),
            "{text}"
        );
    }

    /// A tool whose schema does not compile.
    struct Broken;

    #[async_trait::async_trait]
    impl crate::Tool for Broken {
        fn spec(&self) -> &crate::ToolSpec {
            static SPEC: std::sync::LazyLock<crate::ToolSpec> = std::sync::LazyLock::new(|| {
                crate::ToolSpec::new(
                    "broken",
                    "Broken",
                    "a tool with a schema that does not compile",
                    json!({"type": 12}),
                )
            });
            &SPEC
        }
        async fn execute(
            &self,
            _call_id: &str,
            _args: Value,
            _cancel: tokio_util::sync::CancellationToken,
            _updates: crate::ToolUpdates,
        ) -> crate::ToolResult {
            crate::ToolResult::text("ran")
        }
    }

    #[test]
    fn the_tool_set_names_each_refusal() {
        let set = crate::ToolSet::new(vec![Arc::new(Broken)]);
        let error = set.validate("missing", &json!({})).unwrap_err();
        assert!(matches!(error, ArgsError::UnknownTool { .. }), "{error:?}");
        assert_eq!(error.to_string(), "Tool \"missing\" not found");
        let error = set.validate("broken", &json!({})).unwrap_err();
        assert!(matches!(error, ArgsError::Uncheckable { .. }), "{error:?}");
        assert!(
            error.to_string().starts_with(
                "Cannot validate arguments for tool \"broken\": the tool's parameter schema is invalid: "
            ),
            "{error}"
        );
        assert!(std::error::Error::source(&error).is_some());
    }

    #[test]
    fn invalid_arguments_read_with_their_violations_and_the_arguments() {
        let error = ArgsError::Invalid {
            name: "greet".to_owned(),
            violations: SchemaViolations(vec![SchemaViolation {
                path: "/name".to_owned(),
                message: "42 is not of type \"string\"".to_owned(),
            }]),
            received: json!({"name": 42}),
        };
        assert_eq!(
            error.to_string(),
            "Validation failed for tool \"greet\":\n  - /name: 42 is not of type \"string\"\n\n\
             Received arguments:\n{\n  \"name\": 42\n}"
        );
    }
}
