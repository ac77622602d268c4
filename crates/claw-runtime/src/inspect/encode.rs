//! Splitting a request body into blobs and references (see `format.rs`), on the writer
//! thread.

use super::format::{BlobId, BlobLine, BodyRef, FieldRef, Item};
use super::split::{Value, split};
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A value longer than this is stored as a blob rather than inline.
const INLINE_MAX: usize = 64;

/// What the encoder remembers of the log so far.
#[derive(Debug, Default)]
pub struct Encoder {
    /// Hashes of the blobs already in the file.
    known: HashSet<BlobId>,
    /// Each agent's latest request: its index and its array fields as hashes.
    last: HashMap<String, Previous>,
}

#[derive(Debug, Default)]
struct Previous {
    index: usize,
    /// Each array field's elements: hash, and text where an edit is looked for.
    arrays: HashMap<String, Vec<Element>>,
    /// The other fields' texts.
    values: HashMap<String, Arc<str>>,
}

/// An array element of a request, as the base of the next: its hash, and its text when
/// the next request may hold an edit of it ([`keeps_text`]).
pub type Element = (BlobId, Option<Arc<str>>);

/// Elements whose text is kept at the start of an array (a system prompt that changed).
const KEPT_HEAD: usize = 2;
/// Elements whose text is kept at the end of an array: the turns a next request edits
/// (a cache breakpoint moved off them, the newest answer completed).
const KEPT_TAIL: usize = 8;

/// Whether the text of element `at` of an array of `len` is kept as the base of an edit.
/// The elements between are not: a conversation's next request repeats them byte for
/// byte, and holding their text would keep a second copy of the whole history.
pub fn keeps_text(at: usize, len: usize) -> bool {
    at < KEPT_HEAD || at + KEPT_TAIL >= len
}

/// A request's fields as the base of the next one: arrays (hash and text of each
/// element) and the other values' texts.
#[derive(Debug, Default)]
pub struct Fields {
    /// Array fields.
    pub arrays: HashMap<String, Vec<Element>>,
    /// Other fields.
    pub values: HashMap<String, Arc<str>>,
}

/// An edit is stored instead of a whole piece when it keeps at least this share of it.
const EDIT_KEEPS: usize = 2;

impl Encoder {
    /// Remembers that blob `h` is in the file.
    pub fn know_blob(&mut self, h: &str) {
        // A hash that is not one of ours names no blob this encoder would make.
        if let Some(id) = BlobId::parse(h) {
            self.known.insert(id);
        }
    }

    /// Remembers request `index` of `agent` with its array fields (hashes and texts),
    /// as a base for the agent's next request.
    pub fn know_request(&mut self, agent: &str, index: usize, fields: Fields) {
        let Fields { arrays, values } = fields;
        self.last.insert(
            agent.to_owned(),
            Previous {
                index,
                arrays,
                values,
            },
        );
    }

    /// Encodes request `index` of `agent`: hands each blob not yet in the file to
    /// `blobs` as it is made (to be written before the request, in that order), and
    /// returns the body as references.
    pub fn encode(
        &mut self,
        agent: &str,
        index: usize,
        body: &[u8],
        blobs: &mut dyn FnMut(BlobLine),
    ) -> BodyRef {
        let Some(fields) = split(body) else {
            let h = self.blob(body_text(body), blobs);
            self.last.remove(agent);
            return BodyRef::Whole(h.to_string());
        };
        let mut encoding = self.begin(agent);
        for field in &fields {
            match &field.value {
                Value::Array(elements) => {
                    encoding.array(&field.key);
                    for element in elements {
                        encoding.element(element, blobs);
                    }
                    encoding.end_array();
                }
                Value::Other(raw) => encoding.value(&field.key, raw, blobs),
            }
        }
        encoding.finish(index)
    }

    /// Starts encoding the next request of `agent`, given field by field (a body
    /// written as it was sent is never whole). The same fields give the same lines as
    /// [`Encoder::encode`] of the whole body.
    pub fn begin(&mut self, agent: &str) -> Encoding<'_> {
        // The agent's previous request is replaced by this one when it is finished.
        let base = self.last.remove(agent);
        Encoding {
            encoder: self,
            agent: agent.to_owned(),
            base,
            refs: Vec::new(),
            fields: Fields::default(),
            uses_base: false,
            array: None,
        }
    }

    /// The hash of array element `text`, with a blob line for it when it is new: an
    /// edit of `was` (the element at the same place in the agent's previous request)
    /// when they share most of their bytes.
    fn element(
        &mut self,
        text: &str,
        was: Option<&Element>,
        blobs: &mut dyn FnMut(BlobLine),
    ) -> BlobId {
        let h = BlobId::of(text.as_bytes());
        if self.known.contains(&h) {
            return h;
        }
        if let Some((from, Some(old))) = was
            && let Some((at, cut, put)) = edit(old, text)
        {
            self.known.insert(h);
            blobs(BlobLine {
                h: h.to_string(),
                from: Some(from.to_string()),
                at,
                cut,
                put: Some(put.to_owned()),
                ..BlobLine::default()
            });
            return h;
        }
        self.blob(text, blobs)
    }

    /// The hash of `text`, with a blob line for it when it is new.
    fn blob(&mut self, text: &str, blobs: &mut dyn FnMut(BlobLine)) -> BlobId {
        let h = BlobId::of(text.as_bytes());
        if self.known.insert(h) {
            blobs(blob_line(h, text));
        }
        h
    }
}

/// A request being encoded field by field ([`Encoder::begin`]).
pub struct Encoding<'e> {
    encoder: &'e mut Encoder,
    agent: String,
    /// The agent's previous request.
    base: Option<Previous>,
    refs: Vec<FieldRef>,
    /// This request, as the base of the next.
    fields: Fields,
    uses_base: bool,
    /// The array field being given, its key and its elements so far.
    array: Option<(String, Vec<Element>)>,
}

impl Encoding<'_> {
    /// The top-level field `key`, whose value is the JSON `raw`. An array's elements
    /// are stored one by one, as those of the long list are.
    pub fn value(&mut self, key: &str, raw: &str, blobs: &mut dyn FnMut(BlobLine)) {
        if raw.starts_with('[')
            && let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(raw)
        {
            self.array(key);
            for element in elements {
                self.element(element.get(), blobs);
            }
            self.end_array();
            return;
        }
        let mut entry = FieldRef {
            k: key.to_owned(),
            v: None,
            h: None,
            a: None,
        };
        let same = self
            .base
            .as_ref()
            .and_then(|b| b.values.get(key))
            .is_some_and(|was| **was == *raw);
        if same {
            // Only the key: the value is the base request's.
            self.uses_base = true;
        } else if raw.len() > INLINE_MAX {
            entry.h = Some(self.encoder.blob(raw, blobs).to_string());
        } else {
            entry.v = RawValue::from_string(raw.to_owned()).ok();
            if entry.v.is_none() {
                entry.h = Some(self.encoder.blob(raw, blobs).to_string());
            }
        }
        self.fields.values.insert(key.to_owned(), Arc::from(raw));
        self.refs.push(entry);
    }

    /// The array field `key` begins; its elements follow ([`Encoding::element`]).
    pub fn array(&mut self, key: &str) {
        self.end_array();
        self.array = Some((key.to_owned(), Vec::new()));
    }

    /// The next element of the array begun last, its JSON `text`.
    pub fn element(&mut self, text: &str, blobs: &mut dyn FnMut(BlobLine)) {
        let Some((key, kept)) = &mut self.array else {
            return;
        };
        let at = kept.len();
        let was = self
            .base
            .as_ref()
            .and_then(|b| b.arrays.get(key.as_str()))
            .and_then(|b| b.get(at));
        let h = self.encoder.element(text, was, blobs);
        kept.push((h, Some(Arc::from(text))));
        // The array's length is not known yet: each text is kept until it can no longer
        // be among the last (what `keeps_text` keeps once the length is known).
        if let Some(gone) = at
            .checked_sub(KEPT_TAIL)
            .filter(|&i| !keeps_text(i, at + 1))
        {
            kept[gone].1 = None;
        }
    }

    /// The array begun last ends.
    pub fn end_array(&mut self) {
        let Some((key, kept)) = self.array.take() else {
            return;
        };
        let before = self
            .base
            .as_ref()
            .and_then(|b| b.arrays.get(&key))
            .map_or(&[][..], Vec::as_slice);
        let items = items(&kept, before);
        self.uses_base |= items.iter().any(|i| matches!(i, Item::Run(_)));
        self.refs.push(FieldRef {
            k: key.clone(),
            v: None,
            h: None,
            a: Some(items),
        });
        self.fields.arrays.insert(key, kept);
    }

    /// The request's references, as request `index`; the agent's next request is
    /// encoded against this one.
    pub fn finish(mut self, index: usize) -> BodyRef {
        self.end_array();
        let base = self.base.filter(|_| self.uses_base).map(|b| b.index);
        self.encoder.know_request(&self.agent, index, self.fields);
        BodyRef::Object {
            base,
            fields: self.refs,
        }
    }
}

/// The blob line for `text`: inline JSON when it is JSON on one line, else a string.
fn blob_line(h: BlobId, text: &str) -> BlobLine {
    let one_line = !text.contains(['\n', '\r']);
    let json = one_line
        .then(|| RawValue::from_string(text.to_owned()).ok())
        .flatten();
    BlobLine {
        h: h.to_string(),
        text: json.is_none().then(|| text.to_owned()),
        json,
        ..BlobLine::default()
    }
}

/// `new` as an edit of `old` (where, how many bytes removed, what is put there), when
/// the common start and end keep at least half of `new`.
fn edit<'a>(old: &str, new: &'a str) -> Option<(usize, usize, &'a str)> {
    let limit = old.len().min(new.len());
    let mut start = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !new.is_char_boundary(start) || !old.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(limit - start)
        .take_while(|(a, b)| a == b)
        .count();
    while !new.is_char_boundary(new.len() - end) || !old.is_char_boundary(old.len() - end) {
        end -= 1;
    }
    if (start + end) * EDIT_KEEPS < new.len() {
        return None;
    }
    Some((start, old.len() - start - end, &new[start..new.len() - end]))
}

/// `old` with the edit applied.
pub(super) fn apply(old: &str, at: usize, cut: usize, put: &str) -> Option<String> {
    let head = old.get(..at)?;
    let tail = old.get(at.checked_add(cut)?..)?;
    Some(format!("{head}{put}{tail}"))
}

fn body_text(body: &[u8]) -> &str {
    // Bodies are serde_json's output, so UTF-8; anything else is not split (and `split`
    // already refused it), and is kept as far as it is text.
    std::str::from_utf8(body).unwrap_or("")
}

/// The array field's elements as runs of the base's same field and new hashes.
fn items(elements: &[Element], base: &[Element]) -> Vec<Item> {
    // A conversation's next request repeats the last one and adds a few messages: the
    // common start is one run, and the few after it are looked for one by one rather
    // than through an index of the whole base (a long session's would be rebuilt,
    // ~50 bytes a message, on every request).
    let common = elements
        .iter()
        .zip(base)
        .take_while(|((a, _), (b, _))| a == b)
        .count();
    let mut items: Vec<Item> = Vec::new();
    if common > 0 {
        items.push(Item::Run([0, common]));
    }
    let rest = &elements[common..];
    let index: Option<HashMap<BlobId, usize>> = (rest.len() > FEW).then(|| {
        let mut first = HashMap::with_capacity(base.len());
        for (at, (h, _)) in base.iter().enumerate() {
            first.entry(*h).or_insert(at);
        }
        first
    });
    let find = |h: &BlobId| match &index {
        Some(first) => first.get(h).copied(),
        None => base.iter().position(|(b, _)| b == h),
    };
    for (h, _) in rest {
        if let Some(Item::Run([start, len])) = items.last_mut()
            && base.get(*start + *len).map(|(b, _)| b) == Some(h)
        {
            *len += 1;
            continue;
        }
        match find(h) {
            Some(at) => items.push(Item::Run([at, 1])),
            None => items.push(Item::Blob(h.to_string())),
        }
    }
    items
}

/// Elements after the common start that are looked for by a scan of the base.
const FEW: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    /// The body encoded and the blob lines made for it, in order.
    fn encode(encoder: &mut Encoder, index: usize, body: &[u8]) -> (BodyRef, Vec<BlobLine>) {
        let mut blobs = Vec::new();
        let body = encoder.encode("main", index, body, &mut |b| blobs.push(b));
        (body, blobs)
    }

    #[test]
    fn appended_messages_refer_to_the_previous_request() {
        let mut encoder = Encoder::default();
        let one = br#"{"model":"m","messages":[{"a":1},{"b":2}],"stream":true}"#;
        let two = br#"{"model":"m","messages":[{"a":1},{"b":2},{"c":3}],"stream":true}"#;
        let (_, first) = encode(&mut encoder, 1, one);
        assert_eq!(first.len(), 2);
        let (second, blobs) = encode(&mut encoder, 2, two);
        assert_eq!(blobs.len(), 1, "only the new message is stored");
        let BodyRef::Object { base, fields } = second else {
            panic!("split");
        };
        assert_eq!(base, Some(1));
        let items = fields[1].a.clone().unwrap();
        assert_eq!(items[0], Item::Run([0, 2]));
        assert!(matches!(items[1], Item::Blob(_)));
    }

    #[test]
    fn a_changed_element_is_stored_as_an_edit() {
        let mut encoder = Encoder::default();
        let marked = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a long enough prompt","cache_control":{"type":"ephemeral"}}]}]}"#;
        let plain = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a long enough prompt"}]},{"b":2}]}"#;
        encode(&mut encoder, 1, marked.as_bytes());
        let (_, blobs) = encode(&mut encoder, 2, plain.as_bytes());
        let line = &blobs[0];
        assert!(line.from.is_some() && line.json.is_none(), "{line:?}");
        let old = &marked[13..marked.len() - 2];
        let put = line.put.as_deref().unwrap();
        assert_eq!(
            apply(old, line.at, line.cut, put).unwrap(),
            &plain[13..plain.len() - 10]
        );
        assert_eq!(edit(&"é".repeat(9), &"è".repeat(9)), None);
    }

    /// The runs found by scanning for a few elements are those an index finds.
    #[test]
    fn runs_are_the_same_whether_few_or_many_elements_are_new() {
        let id = |n: u32| (BlobId::of(&n.to_le_bytes()), None);
        let base: Vec<Element> = (0..100).map(id).collect();
        // The base, two new elements, then a part of the base again (an edit that
        // dropped a message), and a run that is not at the same place.
        for extra in [2, FEW + 5] {
            let mut now: Vec<Element> = (0..60).map(id).collect();
            now.extend((1000..1000 + extra as u32).map(id));
            now.extend((61..100).map(id));
            now.extend((10..13).map(id));
            let items = items(&now, &base);
            let mut expected = vec![Item::Run([0, 60])];
            expected.extend((1000..1000 + extra as u32).map(|n| Item::Blob(id(n).0.to_string())));
            expected.extend([Item::Run([61, 39]), Item::Run([10, 3])]);
            assert_eq!(items, expected, "{extra} new");
        }
    }

    #[test]
    fn bodies_that_do_not_join_back_are_kept_whole() {
        let mut encoder = Encoder::default();
        let spaced = b"{ \"model\": \"m\" }";
        assert!(matches!(
            encode(&mut encoder, 1, spaced).0,
            BodyRef::Whole(_)
        ));
        assert!(split(b"[1,2]").is_none());
        assert!(split(br#"{"a":1}"#).is_some());
    }
}
