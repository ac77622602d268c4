//! A server's input schema as the server means it. Servers generated from zod or
//! pydantic models often list a field with a `default` under `required` (Playwright's
//! `browser_snapshot` does): the server fills the default in when the field is missing,
//! but a validator reading the schema literally refuses every call without it. Such a
//! field is made optional here, in every object of the schema, before the model sees
//! it and before calls are checked against it.

use serde_json::Value;

/// Object keywords whose values are schemas, and those whose values are lists or maps
/// of schemas, walked to reach nested objects.
const ONE_SCHEMA: &[&str] = &["items", "additionalProperties", "not", "if", "then", "else"];
const LIST_OF_SCHEMAS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP_OF_SCHEMAS: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];

/// `schema` with each field that has a `default` taken out of its object's `required`.
pub(crate) fn defaults_optional(mut schema: Value) -> Value {
    walk(&mut schema, 0);
    schema
}

/// How deep a schema is walked: far beyond any real one, short of a stack overflow on
/// a hostile server's.
const MAX_DEPTH: usize = 64;

fn walk(schema: &mut Value, depth: usize) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let defaulted: Vec<String> = object
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, p)| p.get("default").is_some())
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| {
            !name
                .as_str()
                .is_some_and(|n| defaulted.iter().any(|d| d == n))
        });
    }
    for key in ONE_SCHEMA {
        if let Some(inner) = object.get_mut(*key) {
            walk(inner, depth + 1);
        }
    }
    for key in LIST_OF_SCHEMAS {
        if let Some(Value::Array(list)) = object.get_mut(*key) {
            list.iter_mut().for_each(|s| walk(s, depth + 1));
        }
    }
    for key in MAP_OF_SCHEMAS {
        if let Some(Value::Object(map)) = object.get_mut(*key) {
            map.values_mut().for_each(|s| walk(s, depth + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_required_field_with_a_default_is_optional_at_every_depth() {
        // The shape of Playwright MCP's `browser_snapshot` and `browser_take_screenshot`.
        let schema = json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
                "url": {"type": "string"},
                "options": {
                    "type": "object",
                    "properties": {"depth": {"type": "integer", "default": 3}, "x": {}},
                    "required": ["depth", "x"]
                },
                "list": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"n": {"default": 1}},
                    "required": ["n"]
                }}
            },
            "required": ["type", "url", "options"]
        });
        let fixed = defaults_optional(schema);
        assert_eq!(fixed["required"], json!(["url", "options"]));
        assert_eq!(fixed["properties"]["options"]["required"], json!(["x"]));
        assert_eq!(fixed["properties"]["list"]["items"]["required"], json!([]));
    }

    #[test]
    fn a_schema_nested_past_the_limit_is_left_as_it_is() {
        let mut deep = json!({"properties": {"a": {"default": 1}}, "required": ["a"]});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"n": deep}});
        }
        let _ = defaults_optional(deep);
    }
}
