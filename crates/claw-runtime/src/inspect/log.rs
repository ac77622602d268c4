//! Reading a request log: every request with its response, each body reassembled from
//! its blobs byte for byte.

use super::encode::apply;
use super::format::{BlobLine, BodyRef, Item, LogLine, RequestLine, ResponseLine};
use std::collections::HashMap;
use std::path::Path;

/// Why a request log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The file could not be read.
    #[error("cannot read the request log {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A request refers to a piece the file does not hold (the file was damaged).
    #[error("request {index} cannot be rebuilt: the log is missing part of its body ({what})")]
    Incomplete {
        /// The request.
        index: usize,
        /// What is missing.
        what: Missing,
    },
    /// No such request.
    #[error("there is no request {index} (the session has {count})")]
    NoSuchRequest {
        /// Asked for.
        index: usize,
        /// How many there are.
        count: usize,
    },
}

/// The part of a request's body a damaged log is missing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    /// A blob (by its hash) no line stored.
    #[error("piece {0}")]
    Piece(String),
    /// A field (by its name) taken from the agent's previous request, which does not
    /// hold it.
    #[error("{0} of the request it continues")]
    Continued(String),
}

pub use crate::session::requests_path;

/// A field's value after the references are followed.
#[derive(Clone, Debug)]
pub enum FieldValue {
    /// A small value, inline.
    Inline(Box<str>),
    /// A blob.
    Blob(u32),
    /// An array of blobs.
    Array(Vec<u32>),
}

/// A body after the references are followed.
#[derive(Clone, Debug)]
pub enum Body {
    /// One blob.
    Whole(u32),
    /// The object's fields in order.
    Object(Vec<(String, FieldValue)>),
}

/// One recorded request.
#[derive(Debug)]
pub struct Request {
    /// What was sent (its `body` refers to blobs; see [`Request::body`]).
    pub sent: RequestLine,
    /// Its headers (secrets redacted), also when the line left them out as the same as
    /// the agent's previous request's.
    pub headers: Vec<(String, String)>,
    /// How it ended; `None` while in flight (or when the process died meanwhile).
    pub response: Option<ResponseLine>,
    /// The body's pieces.
    pub body: Result<Body, Missing>,
}

/// A session's requests.
#[derive(Debug, Default)]
pub struct RequestLog {
    /// In send order.
    pub requests: Vec<Request>,
    blobs: Vec<Box<str>>,
    hashes: Vec<String>,
    ids: HashMap<String, u32>,
    /// Lines that could not be read (a torn last line, damage).
    pub damaged: usize,
}

impl RequestLog {
    /// Reads the log at `path`; a missing file is an empty log.
    pub fn load(path: &Path) -> Result<Self, LogError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Self::parse(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(LogError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Reads a log's text, skipping (and counting) lines that cannot be read.
    pub fn parse(text: &str) -> Self {
        let mut log = Self::default();
        let mut at: HashMap<usize, usize> = HashMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<LogLine>(line) {
                Ok(LogLine::Blob(blob)) => {
                    let Some(bytes) = log.blob_bytes(&blob) else {
                        log.damaged += 1;
                        continue;
                    };
                    let id = u32::try_from(log.blobs.len()).unwrap_or(u32::MAX);
                    log.ids.entry(blob.h.clone()).or_insert(id);
                    log.blobs.push(bytes);
                    log.hashes.push(blob.h);
                }
                Ok(LogLine::Request(sent)) => {
                    let body = log.resolve(&sent, &at);
                    let headers = match &sent.headers {
                        Some(headers) => headers.clone(),
                        None => log
                            .requests
                            .iter()
                            .rev()
                            .find(|r| r.sent.agent == sent.agent)
                            .map(|r| r.headers.clone())
                            .unwrap_or_default(),
                    };
                    at.insert(sent.index, log.requests.len());
                    log.requests.push(Request {
                        sent: *sent,
                        headers,
                        response: None,
                        body,
                    });
                }
                Ok(LogLine::Response(response)) => match at.get(&response.index) {
                    Some(&n) => log.requests[n].response = Some(response),
                    None => log.damaged += 1,
                },
                Err(_) => log.damaged += 1,
            }
        }
        log
    }

    /// A blob's text: as stored, or an earlier blob with the edit applied.
    fn blob_bytes(&self, blob: &BlobLine) -> Option<Box<str>> {
        if let Some(json) = &blob.json {
            return Some(json.get().into());
        }
        match (&blob.from, &blob.put) {
            (Some(from), Some(put)) => {
                let old = self.blob(*self.ids.get(from)?);
                apply(old, blob.at, blob.cut, put).map(String::into_boxed_str)
            }
            _ => blob.text.as_deref().map(Into::into),
        }
    }

    fn resolve(&self, sent: &RequestLine, at: &HashMap<usize, usize>) -> Result<Body, Missing> {
        let blob = |h: &str| {
            self.ids
                .get(h)
                .copied()
                .ok_or_else(|| Missing::Piece(h.to_owned()))
        };
        match &sent.body {
            BodyRef::Whole(h) => Ok(Body::Whole(blob(h)?)),
            BodyRef::Object { base, fields } => {
                let base = base.and_then(|b| at.get(&b)).map(|&n| &self.requests[n]);
                let mut out = Vec::with_capacity(fields.len());
                for field in fields {
                    let value = if let Some(items) = &field.a {
                        FieldValue::Array(self.elements(items, base, &field.k)?)
                    } else if let Some(h) = &field.h {
                        FieldValue::Blob(blob(h)?)
                    } else if let Some(v) = &field.v {
                        FieldValue::Inline(v.get().into())
                    } else {
                        base_value(base, &field.k)
                            .ok_or_else(|| Missing::Continued(field.k.clone()))?
                    };
                    out.push((field.k.clone(), value));
                }
                Ok(Body::Object(out))
            }
        }
    }

    fn elements(
        &self,
        items: &[Item],
        base: Option<&Request>,
        key: &str,
    ) -> Result<Vec<u32>, Missing> {
        let before = base
            .and_then(|b| b.body.as_ref().ok())
            .and_then(|b| match b {
                Body::Object(fields) => fields.iter().find_map(|(k, v)| match v {
                    FieldValue::Array(ids) if k == key => Some(ids.as_slice()),
                    _ => None,
                }),
                Body::Whole(_) => None,
            });
        let mut ids = Vec::new();
        for item in items {
            match item {
                Item::Blob(h) => ids.push(
                    self.ids
                        .get(h)
                        .copied()
                        .ok_or_else(|| Missing::Piece(h.clone()))?,
                ),
                Item::Run([start, len]) => {
                    let run = before
                        .and_then(|b| b.get(*start..start + len))
                        .ok_or_else(|| Missing::Continued(key.to_owned()))?;
                    ids.extend_from_slice(run);
                }
            }
        }
        Ok(ids)
    }

    /// How many requests the log holds.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The text of blob `id`.
    pub fn blob(&self, id: u32) -> &str {
        self.blobs.get(id as usize).map_or("", |b| b)
    }

    /// The hash of blob `id`.
    pub fn blob_hash(&self, id: u32) -> &str {
        self.hashes.get(id as usize).map_or("", String::as_str)
    }

    /// Every blob hash in the file.
    pub fn blob_hashes(&self) -> impl Iterator<Item = &str> {
        self.hashes.iter().map(String::as_str)
    }

    /// The request at position `n` (0-based) in send order.
    pub fn get(&self, n: usize) -> Result<&Request, LogError> {
        self.requests.get(n).ok_or(LogError::NoSuchRequest {
            index: n + 1,
            count: self.len(),
        })
    }

    /// The body of the request at position `n`, exactly as sent.
    pub fn body(&self, n: usize) -> Result<String, LogError> {
        let request = self.get(n)?;
        let body = request.body.as_ref().map_err(|what| LogError::Incomplete {
            index: request.sent.index,
            what: what.clone(),
        })?;
        Ok(self.join(body))
    }

    /// The text of a resolved body.
    pub fn join(&self, body: &Body) -> String {
        let fields = match body {
            Body::Whole(id) => return self.blob(*id).to_owned(),
            Body::Object(fields) => fields,
        };
        let mut out = String::from("{");
        for (n, (key, value)) in fields.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).unwrap_or_default());
            out.push(':');
            out.push_str(&self.value_text(value));
        }
        out.push('}');
        out
    }

    /// The text of one field's value.
    pub fn value_text(&self, value: &FieldValue) -> String {
        match value {
            FieldValue::Inline(text) => text.to_string(),
            FieldValue::Blob(id) => self.blob(*id).to_owned(),
            FieldValue::Array(ids) => {
                let mut out = String::from("[");
                for (n, id) in ids.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(self.blob(*id));
                }
                out.push(']');
                out
            }
        }
    }

    /// The position of the previous request of the same agent as the one at `n`.
    pub fn previous_of_agent(&self, n: usize) -> Option<usize> {
        let agent = &self.requests.get(n)?.sent.agent;
        (0..n)
            .rev()
            .find(|&p| &self.requests[p].sent.agent == agent)
    }

    /// Positions of the requests sent in turn `turn`.
    pub fn in_turn(&self, turn: u32) -> Vec<usize> {
        (0..self.len())
            .filter(|&n| self.requests[n].sent.turn == turn)
            .collect()
    }
}

/// The value of field `key` in `base`, when it is not an array.
fn base_value(base: Option<&Request>, key: &str) -> Option<FieldValue> {
    match base?.body.as_ref().ok()? {
        Body::Object(fields) => fields
            .iter()
            .find(|(k, v)| k == key && !matches!(v, FieldValue::Array(_)))
            .map(|(_, v)| v.clone()),
        Body::Whole(_) => None,
    }
}
