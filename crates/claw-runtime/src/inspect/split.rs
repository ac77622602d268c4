//! Splitting a whole request body into its top-level fields and, for an array, its
//! elements, each as the bytes sent, when they join back into exactly the body.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A top-level field of a body.
pub(super) struct Field<'a> {
    pub key: String,
    pub value: Value<'a>,
}

/// A field's value: an array's elements, or the value's text.
pub(super) enum Value<'a> {
    Array(Vec<&'a str>),
    Other(&'a str),
}

/// The body as its fields, when it is a JSON object whose fields (and array elements),
/// joined back in the compact form, give exactly `body`; `None` otherwise.
pub(super) fn split(body: &[u8]) -> Option<Vec<Field<'_>>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let raw = (&mut de).deserialize_map(FieldsVisitor).ok()?;
    de.end().ok()?;
    let mut fields = Vec::with_capacity(raw.len());
    for (key, value) in raw {
        let value = value.get();
        let value = if value.starts_with('[') {
            let elements: Vec<&RawValue> = serde_json::from_str(value).ok()?;
            Value::Array(elements.into_iter().map(RawValue::get).collect())
        } else {
            Value::Other(value)
        };
        fields.push(Field { key, value });
    }
    joins_back(&fields, body).then_some(fields)
}

/// Whether `fields`, joined in the compact form as one object, give exactly `body`
/// (compared piece by piece: a long body is not copied to be checked).
fn joins_back(fields: &[Field<'_>], body: &[u8]) -> bool {
    let mut rest = body;
    let mut take = |piece: &[u8]| match rest.strip_prefix(piece) {
        Some(after) => {
            rest = after;
            true
        }
        None => false,
    };
    if !take(b"{") {
        return false;
    }
    for (n, field) in fields.iter().enumerate() {
        let Ok(key) = serde_json::to_string(&field.key) else {
            return false;
        };
        if (n > 0 && !take(b",")) || !take(key.as_bytes()) || !take(b":") {
            return false;
        }
        let whole = match &field.value {
            Value::Array(elements) => {
                take(b"[")
                    && elements
                        .iter()
                        .enumerate()
                        .all(|(i, e)| (i == 0 || take(b",")) && take(e.as_bytes()))
                    && take(b"]")
            }
            Value::Other(text) => take(text.as_bytes()),
        };
        if !whole {
            return false;
        }
    }
    take(b"}") && rest.is_empty()
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
            fields.push((key, value));
        }
        Ok(fields)
    }
}
