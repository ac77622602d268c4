//! Writing a request body straight to bytes. A body is a few small fields and one long
//! list (the conversation); building the list as one JSON tree first would hold the
//! whole history a second and third time (the tree's strings and its nodes) beside the
//! bytes. Here each list item is made and written on its own, then dropped. The bytes
//! are compact, every object's keys in sorted order: what `serde_json::to_vec` writes
//! for the same object when its maps sort, whatever order `serde_json::Map` keeps in
//! this build (the ACP SDK turns on serde_json's `preserve_order`, under which a map
//! keeps insertion order). A request's bytes so stay the same from build to build, and
//! a provider's prompt cache keeps matching them.
//!
//! A body is written to a [`BodyOut`]: a byte sink that is also told where each field
//! and list element begins and ends. The same writing makes the bytes sent, counts
//! them, and hands the request log its fields and elements one by one, so a long
//! session's body need never exist whole ([`BodySource`]).

use serde::Serialize;
use serde_json::{Map, Value};
use std::io;
use std::sync::Arc;

/// Where a body is written: its bytes in order, and marks saying where its parts begin
/// and end, for a reader that takes them one by one (the request log).
pub trait BodyOut: io::Write {
    /// The bytes written next belong to `mark` (see [`Mark`]). Ignored by a sink that
    /// wants only the bytes.
    fn mark(&mut self, mark: Mark<'_>) {
        let _ = mark;
    }
}

impl BodyOut for Vec<u8> {}

/// A place in a body being written. The body's own punctuation (the braces, the keys,
/// the commas, the list's brackets) is written outside any `Value` or `Element`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark<'a> {
    /// The value of the top-level field `key` follows (any field but the long list).
    Value(&'a str),
    /// The long list under `key` follows, its elements marked one by one.
    List(&'a str),
    /// An element of the long list follows.
    Element,
    /// The value, the element or the list begun last ends here.
    End,
}

/// The long list of a body being written: each item pushed is serialized at once.
pub(crate) struct ListWriter<'w> {
    out: &'w mut dyn BodyOut,
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
        if let Err(e) = self.element(item) {
            self.failed = Some(e);
        }
    }

    /// Writes one element, after a comma unless it is the first.
    fn element(&mut self, item: &impl Serialize) -> Result<(), serde_json::Error> {
        if !std::mem::take(&mut self.empty) {
            self.out.write_all(b",").map_err(serde_json::Error::io)?;
        }
        self.out.mark(Mark::Element);
        serde_json::to_writer(&mut *self.out, item)?;
        self.out.mark(Mark::End);
        Ok(())
    }
}

/// A body's top-level fields, sorted once, and the key its long list goes under: ready
/// to be written any number of times, the list made anew by the caller each time.
#[derive(Clone, Debug)]
pub(crate) struct BodyPlan {
    fields: Vec<(String, Value)>,
    list_key: String,
}

impl BodyPlan {
    /// The plan of a body made of `fields` and the list under `list_key`.
    pub(crate) fn new(fields: Map<String, Value>, list_key: &str) -> Self {
        // Sorted here, not by `Map` (which keeps insertion order under
        // `preserve_order`): the list goes where its key sorts.
        let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, value) in &mut fields {
            value.sort_all_objects();
        }
        Self {
            fields,
            list_key: list_key.to_owned(),
        }
    }

    /// Writes the body to `out`, the list's items pushed by `fill`.
    pub(crate) fn write(
        &self,
        out: &mut dyn BodyOut,
        fill: impl FnOnce(&mut ListWriter<'_>),
    ) -> Result<(), serde_json::Error> {
        let mut fill = Some(fill);
        let mut first = true;
        out.write_all(b"{").map_err(serde_json::Error::io)?;
        let mut fields = self.fields.iter().peekable();
        loop {
            let list_now = fill.is_some()
                && fields
                    .peek()
                    .is_none_or(|(key, _)| key.as_str() > self.list_key.as_str());
            if list_now && let Some(fill) = fill.take() {
                key(out, &mut first, &self.list_key)?;
                out.mark(Mark::List(&self.list_key));
                out.write_all(b"[").map_err(serde_json::Error::io)?;
                let mut list = ListWriter {
                    out: &mut *out,
                    empty: true,
                    failed: None,
                };
                fill(&mut list);
                if let Some(e) = list.failed {
                    return Err(e);
                }
                out.write_all(b"]").map_err(serde_json::Error::io)?;
                out.mark(Mark::End);
                continue;
            }
            let Some((name, value)) = fields.next() else {
                break;
            };
            key(out, &mut first, name)?;
            out.mark(Mark::Value(name));
            serde_json::to_writer(&mut *out, value)?;
            out.mark(Mark::End);
        }
        out.write_all(b"}").map_err(serde_json::Error::io)
    }

    /// The body as one run of bytes.
    pub(crate) fn to_vec(
        &self,
        fill: impl FnOnce(&mut ListWriter<'_>),
    ) -> Result<Vec<u8>, serde_json::Error> {
        let mut out = Vec::new();
        self.write(&mut out, fill)?;
        Ok(out)
    }
}

/// The body made of `fields` and the list under `list_key`, whose items `fill` pushes.
#[cfg(test)]
pub(crate) fn write(
    fields: Map<String, Value>,
    list_key: &str,
    fill: impl FnOnce(&mut ListWriter<'_>),
) -> Result<Vec<u8>, serde_json::Error> {
    BodyPlan::new(fields, list_key).to_vec(fill)
}

/// Writes `"name":`, after a comma unless it is the object's first key.
fn key(out: &mut dyn BodyOut, first: &mut bool, name: &str) -> Result<(), serde_json::Error> {
    if !std::mem::take(first) {
        out.write_all(b",").map_err(serde_json::Error::io)?;
    }
    serde_json::to_writer(&mut *out, name)?;
    out.write_all(b":").map_err(serde_json::Error::io)
}

/// What writes one request's body, the same bytes every time.
pub(crate) trait WriteBody: Send + Sync {
    /// Writes the whole body to `out`.
    fn write_to(&self, out: &mut dyn BodyOut) -> Result<(), serde_json::Error>;
}

/// A request body that is written anew whenever it is needed (for each attempt sent,
/// for the request log) rather than kept: the same bytes each time, `size` of them.
/// Cheap to clone; it keeps the request it is written from.
#[derive(Clone)]
pub struct BodySource {
    writer: Arc<dyn WriteBody>,
    size: usize,
}

impl std::fmt::Debug for BodySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodySource")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl BodySource {
    /// The body's length in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Writes the body to `out`, its fields and the list's elements marked.
    pub fn write_to(&self, out: &mut dyn BodyOut) -> Result<(), serde_json::Error> {
        self.writer.write_to(out)
    }

    /// The body as one run of bytes (for a reader that wants it whole).
    pub fn to_vec(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut out = Vec::with_capacity(self.size);
        self.write_to(&mut out)?;
        Ok(out)
    }
}

/// A body measured: its bytes when there are at most the limit of them, else the means
/// to write them again.
pub(crate) enum Measured {
    /// The whole body, small enough to keep.
    Whole(Vec<u8>),
    /// A larger body, written anew each time.
    Source(BodySource),
}

/// Writes the body once to learn its length, keeping the bytes when there are no more
/// than `keep` of them. A body that cannot be written fails here, before anything is
/// sent.
pub(crate) fn measure(
    writer: Arc<dyn WriteBody>,
    keep: usize,
) -> Result<Measured, serde_json::Error> {
    let mut count = Counter {
        size: 0,
        kept: Vec::new(),
        keep,
    };
    writer.write_to(&mut count)?;
    if count.size <= keep {
        return Ok(Measured::Whole(count.kept));
    }
    Ok(Measured::Source(BodySource {
        writer,
        size: count.size,
    }))
}

/// Counts the bytes of a body, keeping them while they fit in `keep`.
struct Counter {
    size: usize,
    kept: Vec<u8>,
    keep: usize,
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.size += buf.len();
        if self.size <= self.keep {
            self.kept.extend_from_slice(buf);
        } else if !self.kept.is_empty() {
            self.kept = Vec::new();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl BodyOut for Counter {}

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

    /// The body's bytes, with the marks written into them as `<v:key>`, `<l:key>`,
    /// `<e>` and `</>`.
    #[derive(Default)]
    struct Marked(Vec<u8>);

    impl io::Write for Marked {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl BodyOut for Marked {
        fn mark(&mut self, mark: Mark<'_>) {
            let shown = match mark {
                Mark::Value(key) => format!("<v:{key}>"),
                Mark::List(key) => format!("<l:{key}>"),
                Mark::Element => "<e>".to_owned(),
                Mark::End => "</>".to_owned(),
            };
            self.0.extend_from_slice(shown.as_bytes());
        }
    }

    #[test]
    fn the_marks_frame_each_field_and_each_element_of_the_list() {
        let fields = json!({"model": "m", "tools": [1, 2]})
            .as_object()
            .unwrap()
            .clone();
        let plan = BodyPlan::new(fields, "messages");
        let mut out = Marked::default();
        plan.write(&mut out, |list| {
            list.push(json!({"b": 1, "a": "x"}));
            list.write(&"y");
        })
        .unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            r#"{"messages":<l:messages>[<e>{"a":"x","b":1}</>,<e>"y"</>]</>,"model":<v:model>"m"</>,"tools":<v:tools>[1,2]</>}"#
        );
    }
}
