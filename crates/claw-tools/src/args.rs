//! Tool arguments as Rust types: each tool's arguments are one `Deserialize + JsonSchema`
//! type, from which [`schema`] makes the JSON Schema the model is sent and [`parse`] reads
//! a call's arguments, so the two cannot drift apart. Descriptions are the fields' doc
//! comments, bounds their `#[schemars(range(...))]`, defaults their `#[serde(default)]`.
//!
//! The agent loop validates arguments against the schema before a tool runs, but tools
//! can also be called directly, so [`parse`] checks them again with the same schema and
//! words each problem so that a model can act on it. `null` counts as absent because
//! models often send it for optional fields they do not use.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Why a call's arguments cannot be used; the text is what the model reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
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
    Invalid {
        /// The argument (`.` for the arguments as a whole).
        field: String,
        /// What is wrong, as the validator or serde says it.
        problem: String,
    },
}

/// The JSON Schema of the tool arguments `T`, as providers send it to the model.
pub fn schema<T: JsonSchema + 'static>() -> Value {
    compiled::<T>().schema.clone()
}

/// Reads `args` into `T`, checking them against `T`'s schema first.
///
/// Numbers above a maximum are not refused here: the tools cap them (the agent loop's
/// validation, which the model's calls go through, does refuse them).
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(args: Value) -> Result<T, ArgsError> {
    let compiled = compiled::<T>();
    let args = normalise(args, &compiled.schema)?;
    if let Some(validator) = &compiled.validator
        && let Some(problem) = validator
            .iter_errors(&args)
            .find_map(|e| refusal(&e, &compiled.schema))
    {
        return Err(problem);
    }
    serde_path_to_error::deserialize(args).map_err(|e| {
        let field = e.path().to_string();
        ArgsError::Invalid {
            field,
            problem: e.into_inner().to_string(),
        }
    })
}

/// `text` itself when it has more than whitespace, else an [`ArgsError::Empty`] for `field`.
pub fn non_blank<'a>(field: &str, text: &'a str) -> Result<&'a str, ArgsError> {
    if text.trim().is_empty() {
        return Err(ArgsError::Empty {
            field: field.to_owned(),
        });
    }
    Ok(text)
}

/// An optional text argument with an empty or blank string counted as absent.
pub fn given(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.trim().is_empty())
}

/// A type's schema and the validator compiled from it, made once per type.
struct Compiled {
    schema: Value,
    /// `None` only if the generated schema does not compile, which the schema tests
    /// rule out; the serde step still checks the types then.
    validator: Option<Validator>,
}

fn compiled<T: JsonSchema + 'static>() -> Arc<Compiled> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Compiled>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(TypeId::of::<T>())
        .or_insert_with(|| {
            let schema = generate::<T>();
            let validator = jsonschema::validator_for(&schema)
                .inspect_err(|e| tracing::error!("a generated argument schema is invalid: {e}"))
                .ok();
            Arc::new(Compiled { schema, validator })
        })
        .clone()
}

/// The schema of `T` without what providers may reject or models need not read: no
/// `$schema`, `title` or `$defs` (subschemas are inlined), no `format` on integers
/// (`uint64`), no `null` type on optional fields (absent is how they are left out).
fn generate<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::RecursiveTransform(plain))
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(root) = schema.as_object_mut() {
        root.remove("title");
        // The tool's own description says what it does; the type's doc is for Rust readers.
        root.remove("description");
    }
    schema
}

fn plain(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"))
    {
        object.remove("format");
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::Array(options)) = object.get_mut("enum") {
        options.retain(|o| !o.is_null());
    }
}

/// `args` with `null` and absent arguments alike (dropped) and whole floats such as
/// `3.0` turned into integers where the schema wants an integer (the validator accepts
/// them as integers; serde would not).
fn normalise(args: Value, schema: &Value) -> Result<Value, ArgsError> {
    let mut object = match args {
        Value::Null => Map::new(),
        Value::Object(object) => object,
        other => return Err(ArgsError::NotAnObject { got: kind(&other) }),
    };
    object.retain(|_, v| !v.is_null());
    for (key, value) in &mut object {
        let wants_integer = schema["properties"][key.as_str()]["type"] == "integer";
        if wants_integer
            && value.is_f64()
            && let Some(whole) = value.as_f64()
            && whole.fract() == 0.0
            && whole.abs() <= 2f64.powi(53)
        {
            // Exact: whole and within the range where f64 holds every integer.
            *value = Value::from(whole as i64);
        }
    }
    Ok(Value::Object(object))
}

/// What a validation error means for the model; `None` for those [`parse`] lets pass.
fn refusal(error: &ValidationError<'_>, schema: &Value) -> Option<ArgsError> {
    let path = error.instance_path().to_string();
    let field = match path.trim_start_matches('/') {
        "" => ".".to_owned(),
        field => field.replace('/', "."),
    };
    let got = error.instance();
    Some(match error.kind() {
        ValidationErrorKind::Maximum { .. } | ValidationErrorKind::ExclusiveMaximum { .. } => {
            return None;
        }
        ValidationErrorKind::Required { property } => ArgsError::Missing {
            field: property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned),
        },
        ValidationErrorKind::Type { kind: wanted } => ArgsError::WrongType {
            field,
            expected: expected(wanted),
            got: match got.as_ref() {
                Value::Number(n) => n.to_string(),
                other => kind(other).to_owned(),
            },
        },
        ValidationErrorKind::Enum { options } => ArgsError::NotOneOf {
            field,
            got: got.to_string(),
            options: options
                .as_array()
                .map(|all| {
                    all.iter()
                        .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
        },
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => ArgsError::TooSmall {
            field,
            min: limit.to_string(),
            got: got.to_string(),
        },
        ValidationErrorKind::AdditionalProperties { unexpected } => ArgsError::Unknown {
            field: unexpected.join(", "),
            // Sorted: the schema's own order depends on serde_json's map.
            known: schema["properties"]
                .as_object()
                .map(|p| {
                    let mut names: Vec<&str> = p.keys().map(String::as_str).collect();
                    names.sort_unstable();
                    names.join(", ")
                })
                .unwrap_or_default(),
        },
        _ => ArgsError::Invalid {
            field,
            problem: error.to_string(),
        },
    })
}

fn expected(kind: &TypeKind) -> String {
    let one = |t: JsonType| match t {
        JsonType::String => "a string",
        JsonType::Integer => "a whole number",
        JsonType::Number => "a number",
        JsonType::Boolean => "true or false",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
        JsonType::Null => "null",
    };
    match kind {
        TypeKind::Single(t) => one(*t).to_owned(),
        TypeKind::Multiple(set) => {
            let all: Vec<&str> = set.iter().map(one).collect();
            all.join(" or ")
        }
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
    use serde::Deserialize;
    use serde_json::json;

    /// Arguments of a made-up tool.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        /// The file.
        path: String,
        /// First line.
        #[schemars(range(min = 1))]
        offset: Option<u64>,
        /// Numbered lines.
        #[serde(default)]
        numbered: bool,
        /// How.
        mode: Option<Mode>,
        /// Checked by serde only.
        #[serde(default)]
        checked: Checked,
    }

    /// How to do it.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
        Slow,
    }

    /// A string serde refuses when it is "bad", which the schema cannot say.
    #[derive(Debug, Default, PartialEq, JsonSchema)]
    #[schemars(transparent)]
    struct Checked(String);

    impl<'de> Deserialize<'de> for Checked {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let text = String::deserialize(d)?;
            if text == "bad" {
                return Err(serde::de::Error::custom("\"bad\" is not allowed"));
            }
            Ok(Checked(text))
        }
    }

    #[test]
    fn the_schema_is_plain_and_carries_the_docs() {
        assert_eq!(
            schema::<Sample>(),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file."},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line."},
                    "numbered": {"type": "boolean", "default": false, "description": "Numbered lines."},
                    "mode": {"type": "string", "enum": ["fast", "slow"], "description": "How."},
                    "checked": {"type": "string", "description": "Checked by serde only."}
                },
                "required": ["path"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn good_arguments_parse_with_nulls_absent_and_whole_floats_whole() {
        let parsed: Sample =
            parse(json!({"path": "a", "offset": 3.0, "mode": null, "numbered": true})).unwrap();
        assert_eq!(
            parsed,
            Sample {
                path: "a".into(),
                offset: Some(3),
                numbered: true,
                mode: None,
                checked: Checked::default(),
            }
        );
    }

    #[test]
    fn each_problem_names_its_argument() {
        let cases = [
            (
                json!({}),
                "Missing required argument \"path\". Call again with \"path\" set.",
            ),
            (
                json!({"path": null}),
                "Missing required argument \"path\". Call again with \"path\" set.",
            ),
            (
                json!({"path": 5}),
                "Argument \"path\" must be a string, got 5.",
            ),
            (
                json!({"path": "a", "numbered": "yes"}),
                "Argument \"numbered\" must be true or false, got a string.",
            ),
            (
                json!({"path": "a", "offset": 2.5}),
                "Argument \"offset\" must be a whole number, got 2.5.",
            ),
            (
                json!({"path": "a", "offset": 0}),
                "Argument \"offset\" must be at least 1, got 0.",
            ),
            (
                json!({"path": "a", "offset": -4}),
                "Argument \"offset\" must be at least 1, got -4.",
            ),
            (
                json!({"path": "a", "mode": "medium"}),
                "Unknown mode \"medium\". Use one of: fast, slow.",
            ),
            (
                json!({"path": "a", "speed": 1}),
                "Unknown argument \"speed\". This tool takes: checked, mode, numbered, offset, path.",
            ),
            (
                json!({"path": "a", "checked": "bad"}),
                "Argument \"checked\" is invalid: \"bad\" is not allowed.",
            ),
            (
                json!(["a"]),
                "The arguments must be a JSON object, got an array.",
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(
                parse::<Sample>(args.clone()).unwrap_err().to_string(),
                expected,
                "{args}"
            );
        }
    }

    #[test]
    fn blank_text() {
        assert_eq!(non_blank("task", "do it"), Ok("do it"));
        assert_eq!(
            non_blank("task", " \n").unwrap_err().to_string(),
            "Argument \"task\" must not be empty."
        );
        assert_eq!(given(Some("  ".into())), None);
        assert_eq!(given(Some("x".into())), Some("x".into()));
    }
}
