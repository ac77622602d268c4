//! Checking a tool call's arguments against the tool's JSON Schema, once, and the one
//! error type that says why they fail; typed tools' schemas and reading ([`typed`]).

use serde_json::Value;
use std::fmt;
use std::sync::Arc;

pub mod typed;
pub use typed::{given, non_blank, read, schema};

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

/// Where `args` break the schema `validator` was compiled from (`schema`), each in the
/// words a model can act on where there are such words (empty: they fit).
pub fn violations(
    validator: &jsonschema::Validator,
    schema: &Value,
    args: &Value,
) -> SchemaViolations {
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
                    message: typed::refusal(&e, schema)
                        .map_or_else(|| e.to_string(), |r| r.to_string()),
                }
            })
            .collect(),
    )
}

/// Checks the arguments of a call of the tool `name` against its `schema` (compiled as
/// `validator`), the one check a call's arguments get: the arguments the tool is given,
/// or every problem with them. `normalise` (the tool's own schema, not one from
/// elsewhere): `null` counts as absent and a whole float where an integer is wanted is
/// that integer, first.
pub fn check(
    name: &str,
    validator: &jsonschema::Validator,
    schema: &Value,
    args: Value,
    normalise: bool,
) -> Result<Value, ArgsError> {
    let args = if normalise {
        typed::normalise(args, schema)?
    } else {
        args
    };
    let violations = violations(validator, schema, &args);
    if violations.0.is_empty() {
        return Ok(args);
    }
    Err(ArgsError::Invalid {
        name: name.to_owned(),
        violations,
        received: args,
    })
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
    /// The arguments are not a JSON object.
    #[error("The arguments must be a JSON object, got {got}.")]
    NotAnObject {
        /// What was sent instead.
        got: &'static str,
    },
    /// A required argument is absent or `null`.
    #[error("Missing required argument \"{field}\". Call again with \"{field}\" set.")]
    Missing {
        /// The argument.
        field: String,
    },
    /// An argument has the wrong JSON type.
    #[error("Argument \"{field}\" must be {expected}, got {got}.")]
    WrongType {
        /// The argument.
        field: String,
        /// What it must be, e.g. "a string".
        expected: String,
        /// What it was.
        got: String,
    },
    /// An argument is not one of the allowed values.
    #[error("Unknown {field} {got}. Use one of: {options}.")]
    NotOneOf {
        /// The argument.
        field: String,
        /// The value sent, as JSON.
        got: String,
        /// The allowed values, comma-separated.
        options: String,
    },
    /// A number below the argument's minimum.
    #[error("Argument \"{field}\" must be at least {min}, got {got}.")]
    TooSmall {
        /// The argument.
        field: String,
        /// The smallest allowed value.
        min: String,
        /// The value sent.
        got: String,
    },
    /// An argument the tool does not take (only tools that refuse unknown arguments).
    #[error("Unknown argument \"{field}\". This tool takes: {known}.")]
    Unknown {
        /// The argument.
        field: String,
        /// The arguments it takes, comma-separated.
        known: String,
    },
    /// A text argument that is empty or only whitespace.
    #[error("Argument \"{field}\" must not be empty.")]
    Empty {
        /// The argument.
        field: String,
    },
    /// Anything else the schema or the type refuses, with the argument it is about.
    #[error("Argument \"{field}\" is invalid: {problem}.")]
    Problem {
        /// The argument (`.` for the arguments as a whole).
        field: String,
        /// What is wrong, as the validator or serde says it.
        problem: String,
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
        assert!(
            violations(&validator, &schema, &json!({"n": 1}))
                .0
                .is_empty()
        );
        let text = violations(&validator, &schema, &json!({})).to_string();
        assert!(text.starts_with("  - /: "), "{text}");
        assert!(text.contains("\"n\""), "{text}");
        let text = violations(&validator, &schema, &json!({"n": "x"})).to_string();
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
            _args: crate::CheckedArgs,
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
