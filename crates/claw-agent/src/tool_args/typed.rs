//! Tool arguments as Rust types: each typed tool's arguments are one `Deserialize +
//! JsonSchema` type, from which [`schema`] makes the JSON Schema the model is sent, so
//! the two cannot drift apart. Descriptions are the fields' doc comments, bounds their
//! `#[schemars(range(...))]`, defaults their `#[serde(default)]`.
//!
//! A call's arguments are checked once, by the tool set, against the tool's schema
//! ([`super::check`]: `null` counts as absent, because models often send it for optional
//! fields they do not use, and each problem is worded so that a model can act on it);
//! a typed tool then only reads the checked arguments into its type ([`read`]).

use super::ArgsError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The JSON Schema of the tool arguments `T`, as providers send it to the model.
pub fn schema<T: JsonSchema + 'static>() -> Value {
    compiled::<T>().as_ref().clone()
}

/// Reads checked arguments (see [`super::check`]) into `T`; what the schema cannot say
/// (a type's own rules) is refused here, naming the argument.
pub fn read<T: DeserializeOwned>(args: Value) -> Result<T, ArgsError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let field = e.path().to_string();
        ArgsError::Problem {
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

/// The schema of `T`, generated once per type.
fn compiled<T: JsonSchema + 'static>() -> Arc<Value> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Value>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(TypeId::of::<T>())
        .or_insert_with(|| Arc::new(generate::<T>()))
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
pub(super) fn normalise(args: Value, schema: &Value) -> Result<Value, ArgsError> {
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

/// What a validation error means for the model, in its words; `None` where the
/// validator's own message says it (a maximum, which the tools cap when called directly).
pub(super) fn refusal(error: &ValidationError<'_>, schema: &Value) -> Option<ArgsError> {
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
        _ => ArgsError::Problem {
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

    /// Checks `args` as the tool set does, then reads them: what a typed tool gets.
    fn parse<T: DeserializeOwned + JsonSchema + 'static>(args: Value) -> Result<T, String> {
        let schema = schema::<T>();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let checked = super::super::check("sample", &validator, &schema, args, true).map_err(
            |e| match e {
                // One problem at a time here: its words, without the call around them.
                ArgsError::Invalid { violations, .. } => violations.0[0].message.clone(),
                other => other.to_string(),
            },
        )?;
        read(checked).map_err(|e| e.to_string())
    }

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
                parse::<Sample>(args.clone()).unwrap_err(),
                expected,
                "{args}"
            );
        }
    }

    #[test]
    fn blank_text() {
        assert_eq!(non_blank("task", "do it").unwrap(), "do it");
        assert_eq!(
            non_blank("task", " \n").unwrap_err().to_string(),
            "Argument \"task\" must not be empty."
        );
        assert_eq!(given(Some("  ".into())), None);
        assert_eq!(given(Some("x".into())), Some("x".into()));
    }
}
