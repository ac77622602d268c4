//! Writing a request body straight to bytes. A body is a few small fields and one long
//! list (the conversation); building the list as one JSON tree first would hold the
//! whole history a second and third time (the tree's strings and its nodes) beside the
//! bytes. Here each list item is made and written on its own, then dropped. The bytes
//! are compact, every object's keys in sorted order: what `serde_json::to_vec` writes
//! for the same object when its maps sort, whatever order `serde_json::Map` keeps in
//! this build (the ACP SDK turns on serde_json's `preserve_order`, under which a map
//! keeps insertion order). A request's bytes so stay the same from build to build, and
//! a provider's prompt cache keeps matching them.

use serde::Serialize;
use serde_json::{Map, Value};

/// The long list of a body being written: each item pushed is serialized at once.
pub(crate) struct ListWriter<'w> {
    out: &'w mut Vec<u8>,
    empty: bool,
    failed: Option<serde_json::Error>,
}

impl ListWriter<'_> {
    /// Writes `item` as the list's next element, its objects' keys sorted (after a
    /// failure, nothing more is written; the body then fails with the first error).
    pub(crate) fn push(&mut self, mut item: Value) {
        item.sort_all_objects();
        self.write(&item);
    }

    /// Writes any serializable `item` as the list's next element: a struct whose
    /// fields are declared in sorted order and hold no `Value` (its bytes are then those
    /// of the same item as a sorted value).
    pub(crate) fn write(&mut self, item: &impl Serialize) {
        if self.failed.is_some() {
            return;
        }
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        if let Err(e) = serde_json::to_writer(&mut *self.out, item) {
            self.failed = Some(e);
        }
    }
}

/// The body made of `fields` and the list under `list_key`, whose items `fill` pushes.
pub(crate) fn write(
    fields: Map<String, Value>,
    list_key: &str,
    fill: impl FnOnce(&mut ListWriter<'_>),
) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    let mut fill = Some(fill);
    let mut first = true;
    out.push(b'{');
    // Sorted here, not by `Map` (which keeps insertion order under `preserve_order`): the
    // list goes where its key sorts.
    let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, value) in &mut fields {
        value.sort_all_objects();
    }
    let mut fields = fields.into_iter().peekable();
    loop {
        let list_now =
            fill.is_some() && fields.peek().is_none_or(|(key, _)| key.as_str() > list_key);
        if list_now && let Some(fill) = fill.take() {
            key(&mut out, &mut first, list_key)?;
            out.push(b'[');
            let mut list = ListWriter {
                out: &mut out,
                empty: true,
                failed: None,
            };
            fill(&mut list);
            if let Some(e) = list.failed {
                return Err(e);
            }
            out.push(b']');
            continue;
        }
        let Some((name, value)) = fields.next() else {
            break;
        };
        key(&mut out, &mut first, &name)?;
        serde_json::to_writer(&mut out, &value)?;
    }
    out.push(b'}');
    Ok(out)
}

/// Writes `"name":`, after a comma unless it is the object's first key.
fn key(out: &mut Vec<u8>, first: &mut bool, name: &str) -> Result<(), serde_json::Error> {
    if !std::mem::take(first) {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, name)?;
    out.push(b':');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The same object as one tree, every object's keys sorted.
    fn tree(fields: &Value, key: &str, items: &[Value]) -> Vec<u8> {
        let mut all = fields.as_object().unwrap().clone();
        all.insert(key.into(), Value::Array(items.to_vec()));
        let mut all = Value::Object(all);
        all.sort_all_objects();
        serde_json::to_vec(&all).unwrap()
    }

    #[test]
    fn the_bytes_are_those_of_the_whole_tree_wherever_the_list_sorts() {
        let items = [
            json!({"role": "user", "content": "a \"quoted\"\nline"}),
            json!(null),
        ];
        // Nested objects whose keys were written out of order, too.
        let fields = json!({"model": "m", "stream": true, "tools": [{"name": "ls", "input_schema": {"type": "object", "properties": {}}}], "a": 1});
        for key in ["0first", "messages", "input", "zlast", "model2"] {
            let written = write(fields.as_object().unwrap().clone(), key, |list| {
                for item in &items {
                    list.push(item.clone());
                }
            })
            .unwrap();
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(tree(&fields, key, &items)).unwrap()
            );
        }
    }

    #[test]
    fn an_empty_list_and_no_fields_are_written_as_such() {
        assert_eq!(
            write(Map::new(), "messages", |_| {}).unwrap(),
            br#"{"messages":[]}"#
        );
        let fields = json!({"b": 2}).as_object().unwrap().clone();
        assert_eq!(write(fields, "a", |_| {}).unwrap(), br#"{"a":[],"b":2}"#);
    }

    #[test]
    fn a_value_that_cannot_be_written_fails_the_body() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let result = write(Map::new(), "messages", |list| {
            list.write(&Refuses);
            list.push(json!(1));
        });
        assert!(result.unwrap_err().to_string().contains("no"));
    }
}
