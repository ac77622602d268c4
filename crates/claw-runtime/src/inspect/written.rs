//! Encoding a request whose body was written as it was sent (a long one, never whole):
//! the body is written once more, here on the log's thread, and its fields and list
//! elements go to the encoder one by one as they are written. The lines are those the
//! whole body would give.

use super::encode::{Encoder, Encoding};
use super::format::{BlobLine, BodyRef};
use crate::llm::body::{BodyOut, BodySource, Mark};
use std::io;

/// Encodes request `index` of `agent` from `body`, handing new blobs to `blobs`.
pub(super) fn encode(
    encoder: &mut Encoder,
    agent: &str,
    index: usize,
    body: &BodySource,
    blobs: &mut dyn FnMut(BlobLine),
) -> BodyRef {
    let mut out = Fields {
        encoding: encoder.begin(agent),
        blobs,
        key: String::new(),
        part: Part::Between,
        text: Vec::new(),
    };
    if let Err(e) = body.write_to(&mut out) {
        // It was written in full before it was sent, so this does not happen; what was
        // written is kept.
        tracing::warn!("a request body could not be written again for the request log: {e}");
    }
    out.encoding.finish(index)
}

/// What the bytes being written belong to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The body's punctuation.
    Between,
    /// A field's value.
    Value,
    /// The long list, between its elements.
    List,
    /// An element of the long list.
    Element,
}

/// Collects each field's value and each list element as it is written.
struct Fields<'a, 'e> {
    encoding: Encoding<'e>,
    blobs: &'a mut dyn FnMut(BlobLine),
    /// The key of the field being written.
    key: String,
    part: Part,
    /// The value or element so far.
    text: Vec<u8>,
}

impl io::Write for Fields<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if matches!(self.part, Part::Value | Part::Element) {
            self.text.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl BodyOut for Fields<'_, '_> {
    fn mark(&mut self, mark: Mark<'_>) {
        match (mark, self.part) {
            (Mark::Value(key), _) => {
                key.clone_into(&mut self.key);
                self.text.clear();
                self.part = Part::Value;
            }
            (Mark::List(key), _) => {
                self.encoding.array(key);
                self.part = Part::List;
            }
            (Mark::Element, _) => {
                self.text.clear();
                self.part = Part::Element;
            }
            (Mark::End, Part::Value) => {
                let text = String::from_utf8_lossy(&self.text);
                self.encoding.value(&self.key, &text, self.blobs);
                self.part = Part::Between;
            }
            (Mark::End, Part::Element) => {
                let text = String::from_utf8_lossy(&self.text);
                self.encoding.element(&text, self.blobs);
                self.part = Part::List;
            }
            (Mark::End, Part::List | Part::Between) => {
                self.encoding.end_array();
                self.part = Part::Between;
            }
        }
    }
}
