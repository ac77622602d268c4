//! A fake LLM server on 127.0.0.1: replays scripted HTTP responses (status, headers and
//! a body written as separate chunks, with gates, hangs and connection drops), records
//! every request, and reports when a response body ends or is dropped by the client.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc};

/// One step of a response body.
#[derive(Clone)]
pub enum Step {
    /// Bytes written as their own chunk (flushed before the next step).
    Chunk(Bytes),
    /// Pause until the test notifies this gate.
    Wait(Arc<Notify>),
    /// Send nothing more and never finish (until the client goes away).
    Hang,
    /// Break the connection mid-body, as a crashed server or proxy would.
    Fail,
    /// Send these bytes every `interval`, forever (until the client goes away): a
    /// server's keep-alive comments.
    Every(std::time::Duration, Bytes),
}

/// A scripted response.
#[derive(Clone)]
pub struct Scripted {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub steps: Vec<Step>,
}

impl Scripted {
    /// A 200 event stream whose chunks are `chunks`, each written separately.
    pub fn sse<S: AsRef<[u8]>>(chunks: impl IntoIterator<Item = S>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            steps: chunks
                .into_iter()
                .map(|c| Step::Chunk(Bytes::copy_from_slice(c.as_ref())))
                .collect(),
        }
    }

    /// A JSON response (typically an error) with `status`.
    pub fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            steps: vec![Step::Chunk(Bytes::from(body.to_string()))],
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Appends a body step.
    pub fn then(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// Appends chunks.
    pub fn then_chunks<S: AsRef<[u8]>>(mut self, chunks: impl IntoIterator<Item = S>) -> Self {
        self.steps.extend(
            chunks
                .into_iter()
                .map(|c| Step::Chunk(Bytes::copy_from_slice(c.as_ref()))),
        );
        self
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Value::Null` when it was not JSON).
    pub body: Value,
    /// The body as sent, byte for byte.
    pub raw: Bytes,
}

impl Recorded {
    /// The names of the tools an OpenAI-style request offered, in order.
    pub fn tools_offered(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| {
                        t["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// How a response body ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyEnd {
    /// Every step was sent.
    Completed,
    /// The body was dropped before its end: the client closed the connection.
    Dropped,
}

struct Shared {
    script: Mutex<VecDeque<Scripted>>,
    requests: Mutex<Vec<Recorded>>,
    ends: mpsc::UnboundedSender<BodyEnd>,
    /// How many requests arrived (what `until_requests` waits on).
    received: tokio::sync::watch::Sender<usize>,
}

/// The running server; it stops with the test's runtime.
pub struct FakeLlm {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    ends: tokio::sync::Mutex<mpsc::UnboundedReceiver<BodyEnd>>,
}

impl FakeLlm {
    /// Starts a server that plays `script` in order, one response per request.
    pub async fn start(script: Vec<Scripted>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            requests: Mutex::new(Vec::new()),
            ends: tx,
            received: tokio::sync::watch::Sender::new(0),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            addr,
            shared,
            ends: tokio::sync::Mutex::new(rx),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Waits until the server has received `count` requests in all (so the response
    /// scripted for the last of them is the one being played).
    pub async fn until_requests(&self, count: usize) {
        let mut received = self.shared.received.subscribe();
        tokio::time::timeout(super::DEADLINE, received.wait_for(|n| *n >= count))
            .await
            .expect("timed out waiting for requests")
            .expect("server gone");
    }

    /// Waits until the next response body ends, and says how.
    pub async fn next_body_end(&self) -> BodyEnd {
        let mut ends = self.ends.lock().await;
        tokio::time::timeout(super::DEADLINE, ends.recv())
            .await
            .expect("timed out waiting for a response body to end")
            .expect("server gone")
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut recorded_headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        recorded_headers
            .entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    shared.requests.lock().unwrap().push(Recorded {
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers: recorded_headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: body.clone(),
    });
    let scripted = shared.script.lock().unwrap().pop_front().unwrap_or_else(|| {
        Scripted::json(
            500,
            json!({"error": {"type": "fake_server", "message": "fake server: script exhausted"}}),
        )
    });
    // Counted once its response is taken from the script.
    shared.received.send_modify(|n| *n += 1);
    let mut response = Response::builder().status(StatusCode::from_u16(scripted.status).unwrap());
    for (name, value) in &scripted.headers {
        response = response.header(name, value);
    }
    let guard = EndGuard {
        ends: shared.ends.clone(),
        completed: false,
    };
    let body = futures::stream::unfold(
        (VecDeque::from(scripted.steps), guard, true),
        |(mut steps, mut guard, first)| async move {
            loop {
                match steps.pop_front() {
                    None => {
                        guard.complete();
                        return None;
                    }
                    Some(Step::Chunk(bytes)) => {
                        if !first {
                            // Returning Pending once makes hyper flush the previous chunk,
                            // so each chunk goes out as its own write.
                            tokio::task::yield_now().await;
                        }
                        return Some((Ok::<_, std::io::Error>(bytes), (steps, guard, false)));
                    }
                    Some(Step::Wait(gate)) => gate.notified().await,
                    Some(Step::Hang) => std::future::pending::<()>().await,
                    Some(Step::Every(interval, bytes)) => {
                        tokio::time::sleep(interval).await;
                        steps.push_front(Step::Every(interval, bytes.clone()));
                        return Some((Ok(bytes), (steps, guard, false)));
                    }
                    Some(Step::Fail) => {
                        // Let hyper flush what was sent before the connection breaks.
                        tokio::task::yield_now().await;
                        let error = std::io::Error::other("fake server dropped the connection");
                        guard.complete();
                        return Some((Err(error), (VecDeque::new(), guard, false)));
                    }
                }
            }
        },
    );
    response.body(Body::from_stream(body)).unwrap()
}

/// Reports how a body ended when hyper drops it.
struct EndGuard {
    ends: mpsc::UnboundedSender<BodyEnd>,
    completed: bool,
}

impl EndGuard {
    /// Marks the body as sent in full (a scripted failure counts as the script's end).
    fn complete(&mut self) {
        self.completed = true;
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        let end = if self.completed {
            BodyEnd::Completed
        } else {
            BodyEnd::Dropped
        };
        let _ = self.ends.send(end);
    }
}

pub mod anthropic;
pub mod drive;
pub mod long;
pub mod openai;
pub mod responses;
