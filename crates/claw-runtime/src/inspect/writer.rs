//! Writing a session's request log: a thread of its own per session receives the calls
//! the providers report (so neither the client's thread nor the agent's task encodes or
//! writes), splits each body into blobs, appends the lines and flushes at the end of
//! each call (a turn boundary) and on close.

use super::encode::{Encoder, Fields, keeps_text};
use super::format::{BlobId, BlobLine, BodyRef, LogLine, RequestLine, ResponseLine};
use super::log::{Body, FieldValue, RequestLog, requests_path};
use super::written;
use crate::agent::{Agent, AgentState, Message};
use crate::llm::body::BodySource;
use crate::llm::{CallSink, FinishedCall, RequestTap, SentCall};
use crate::session::SideLogReport;
use crate::session::side_log::SideLog;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

enum Command {
    Sent(SentCall),
    /// A call whose body is written again here (see [`CallSink::sent_from`]).
    SentFrom(SentCall, BodySource),
    Finished(FinishedCall),
    Sync(tokio::sync::oneshot::Sender<()>),
    Close(tokio::sync::oneshot::Sender<()>),
}

/// The sink a tap reports to: hands each call to the writer thread.
struct ChannelSink(mpsc::Sender<Command>);

impl CallSink for ChannelSink {
    fn sent(&self, call: SentCall) {
        let _ = self.0.send(Command::Sent(call));
    }

    fn sent_from(&self, call: SentCall, body: BodySource) {
        let _ = self.0.send(Command::SentFrom(call, body));
    }

    fn finished(&self, call: FinishedCall) {
        let _ = self.0.send(Command::Finished(call));
    }

    fn sync(&self) -> BoxFuture<'static, ()> {
        let (done, wait) = tokio::sync::oneshot::channel();
        let sent = self.0.send(Command::Sync(done)).is_ok();
        Box::pin(async move {
            if sent {
                let _ = wait.await;
            }
        })
    }
}

/// A session's request log being written. Close it (or drop it) to detach it from the
/// tap; closing also waits until everything reported is on disk.
pub struct RequestRecorder {
    tap: RequestTap,
    commands: mpsc::Sender<Command>,
    path: PathBuf,
}

impl RequestRecorder {
    /// Starts recording `tap`'s calls beside the session file `session`, numbering
    /// each call by the turn of `main` it happened in ([`main_turn`]); trouble writing
    /// the log goes to `report` (the session's saving status).
    pub fn start(tap: &RequestTap, session: &Path, main: &Agent, report: SideLogReport) -> Self {
        let path = requests_path(session);
        let (commands, received) = mpsc::channel();
        let thread_path = path.clone();
        let spawned = std::thread::Builder::new()
            .name("request-log".into())
            .spawn(move || write_loop(&thread_path, report, &received));
        if let Err(e) = spawned {
            tracing::warn!("the request log is not recorded: {e}");
        }
        let agent = main.clone();
        tap.attach(
            Arc::new(ChannelSink(commands.clone())),
            move || main_turn(&agent.state()),
            Some(path.clone()),
        );
        Self {
            tap: tap.clone(),
            commands,
            path,
        }
    }

    /// Where the log is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Detaches from the tap and waits until every call reported is written.
    pub async fn close(self) {
        self.tap.detach();
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.commands.send(Command::Close(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

impl crate::session::SideRecorder for RequestRecorder {
    fn close(self: Box<Self>) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(RequestRecorder::close(*self))
    }
}

impl Drop for RequestRecorder {
    fn drop(&mut self) {
        // The tap's turn source holds the agent, whose provider holds the tap.
        self.tap.detach();
    }
}

use std::sync::Arc;

/// The main agent's turn a call happens in, numbered as the client's status bar and a
/// replay's timeline number them: a turn is one model call of the main agent and its
/// tool calls, counted through the session, so turn N is the N-th answer of the
/// history. While a turn's call is being made its answer is not in the history yet
/// (`turn_open`); a subagent's call, or a compaction's, belongs to the turn under way,
/// or after it, to the last one.
pub fn main_turn(state: &AgentState) -> u32 {
    let answers = state
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant(_)))
        .count();
    let turn = answers + usize::from(state.turn_open);
    u32::try_from(turn).unwrap_or(u32::MAX)
}

/// Appends `calls` (each as sent and as ended) to the log at `path` on this thread, as
/// the writer thread would: for tools that build a log without a session (benches,
/// tests of the views).
pub fn write_calls(path: &Path, calls: impl IntoIterator<Item = (SentCall, FinishedCall)>) {
    let mut writer = Writer::open(path, SideLogReport::unheard());
    for (sent, mut finished) in calls {
        finished.id = sent.id;
        writer.sent(sent);
        writer.finished(&finished);
    }
    writer.flush();
}

/// What the writer thread keeps.
struct Writer {
    /// The file, written with the session file's discipline (whole lines, held back
    /// while the disk is full).
    log: SideLog,
    encoder: Encoder,
    next_index: usize,
    /// Process-local call ids of calls in flight → their index.
    pending: HashMap<u64, usize>,
    /// Each agent's latest headers.
    headers: HashMap<String, Vec<(String, String)>>,
}

fn write_loop(path: &Path, report: SideLogReport, received: &mpsc::Receiver<Command>) {
    let mut writer = Writer::open(path, report);
    while let Ok(command) = received.recv() {
        match command {
            // Each call's start and end are turn boundaries: flushed at once, so a
            // reader of the file (RPC, the inspector) sees the call in flight.
            Command::Sent(call) => {
                writer.sent(call);
                writer.flush();
            }
            Command::SentFrom(call, body) => {
                writer.sent_from(call, &body);
                writer.flush();
            }
            Command::Finished(call) => {
                writer.finished(&call);
                writer.flush();
            }
            Command::Sync(done) => drop(done.send(())),
            Command::Close(done) => {
                // Calls reported before the close are in the channel ahead of it.
                while let Ok(command) = received.try_recv() {
                    match command {
                        Command::Sent(call) => writer.sent(call),
                        Command::SentFrom(call, body) => writer.sent_from(call, &body),
                        Command::Finished(call) => writer.finished(&call),
                        Command::Sync(other) | Command::Close(other) => drop(other.send(())),
                    }
                }
                writer.flush();
                let _ = done.send(());
                return;
            }
        }
    }
    writer.flush();
}

impl Writer {
    /// Continues the log at `path` (numbering, blobs and bases from what it holds).
    fn open(path: &Path, report: SideLogReport) -> Self {
        let mut encoder = Encoder::default();
        let mut headers = HashMap::new();
        let log = RequestLog::load(path).unwrap_or_else(|e| {
            tracing::warn!("{e}; its requests are not continued");
            RequestLog::default()
        });
        for h in log.blob_hashes() {
            encoder.know_blob(h);
        }
        for request in &log.requests {
            if let Ok(Body::Object(fields)) = &request.body {
                let mut known = Fields::default();
                for (key, value) in fields {
                    match value {
                        FieldValue::Array(ids) => {
                            // A hash the encoder could not have made (a log edited by
                            // hand) leaves the array out: its next request is stored
                            // whole instead of as runs of this one.
                            let elements: Option<Vec<_>> = ids
                                .iter()
                                .enumerate()
                                .map(|(at, &id)| {
                                    let text =
                                        keeps_text(at, ids.len()).then(|| Arc::from(log.blob(id)));
                                    BlobId::parse(log.blob_hash(id)).map(|h| (h, text))
                                })
                                .collect();
                            if let Some(elements) = elements {
                                known.arrays.insert(key.clone(), elements);
                            }
                        }
                        other => {
                            let text = log.value_text(other);
                            known.values.insert(key.clone(), Arc::from(text.as_str()));
                        }
                    }
                }
                encoder.know_request(&request.sent.agent, request.sent.index, known);
            }
            headers.insert(request.sent.agent.clone(), request.headers.clone());
        }
        let next_index = log.requests.last().map_or(0, |r| r.sent.index) + 1;
        Self {
            log: SideLog::new(path.to_owned(), report),
            encoder,
            next_index,
            pending: HashMap::new(),
            headers,
        }
    }

    fn sent(&mut self, call: SentCall) {
        let body = call.body.clone();
        self.record(call, body.len(), |encoder, agent, index, blobs| {
            encoder.encode(agent, index, &body, blobs)
        });
    }

    /// A call whose body was written as it was sent: written once more, here, and
    /// encoded field by field as it is.
    fn sent_from(&mut self, call: SentCall, body: &BodySource) {
        self.record(call, body.size(), |encoder, agent, index, blobs| {
            written::encode(encoder, agent, index, body, blobs)
        });
    }

    /// Writes the blobs and the line of `call`, a body of `bytes` that `encode` makes.
    fn record(
        &mut self,
        call: SentCall,
        bytes: usize,
        encode: impl FnOnce(&mut Encoder, &str, usize, &mut dyn FnMut(BlobLine)) -> BodyRef,
    ) {
        let index = self.next_index;
        self.next_index += 1;
        self.pending.insert(call.id, index);
        // Each new blob is written as it is made: the first request of a resumed long
        // session is all new blobs, which are not held all at once.
        let log = &mut self.log;
        let mut lost = false;
        let body = encode(&mut self.encoder, &call.agent, index, &mut |blob| {
            lost |= !log_line(log, &LogLine::Blob(blob));
        });
        if lost {
            self.forget();
        }
        let same_headers = self.headers.get(&call.agent) == Some(&call.headers);
        if !same_headers {
            self.headers
                .insert(call.agent.clone(), call.headers.clone());
        }
        self.line(&LogLine::Request(Box::new(RequestLine {
            index,
            agent: call.agent,
            turn: call.turn,
            time_ms: call.time_ms,
            provider: call.provider,
            format: Some(call.format),
            model: call.model,
            url: call.url,
            headers: (!same_headers).then_some(call.headers),
            bytes,
            body,
        })));
    }

    fn finished(&mut self, call: &FinishedCall) {
        let Some(index) = self.pending.remove(&call.id) else {
            return;
        };
        let usage = call.usage.clone().unwrap_or_default();
        let streaming_ms = call
            .ttft_ms
            .map(|first| call.duration_ms.saturating_sub(first));
        let per_s = streaming_ms
            .filter(|&ms| ms > 0 && usage.output > 0)
            .map(|ms| usage.output as f64 * 1000.0 / ms as f64);
        self.line(&LogLine::Response(ResponseLine {
            index,
            status: call.status,
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            usage_reported: call.usage.is_some(),
            stop_reason: call.stop_reason.clone(),
            error: call.error.clone(),
            ttft_ms: call.ttft_ms,
            duration_ms: call.duration_ms,
            output_tokens_per_s: per_s,
            retries: call.retries,
        }));
    }

    fn line(&mut self, line: &LogLine) {
        if !log_line(&mut self.log, line) {
            self.forget();
        }
    }

    /// Lines were dropped after writing failed for too long: later requests must not
    /// refer to pieces or bases the log lost, so they are stored whole.
    fn forget(&mut self) {
        self.encoder = Encoder::default();
        self.headers.clear();
    }

    fn flush(&mut self) {
        self.log.flush();
    }
}

/// Appends `line` to `log` as a whole line or not at all (the file is made with the
/// first: a session whose model sends no HTTP request, the offline demo, gets no empty
/// log beside it). False when lines were dropped after writing failed for too long.
fn log_line(log: &mut SideLog, line: &LogLine) -> bool {
    let mut bytes = match serde_json::to_vec(line) {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::warn!("a request could not be logged: {e}");
            return true;
        }
    };
    bytes.push(b'\n');
    log.push(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: u64, agent: &str, body: &str) -> SentCall {
        SentCall {
            id,
            agent: agent.into(),
            turn: 1,
            format: crate::llm::WireFormat::ChatCompletions,
            provider: "P".into(),
            model: "m".into(),
            url: "http://x/v1".into(),
            headers: vec![("accept".into(), "text/event-stream".into())],
            body: bytes::Bytes::copy_from_slice(body.as_bytes()),
            time_ms: 0,
        }
    }

    #[test]
    fn a_call_belongs_to_the_main_agents_turn_under_way() {
        use crate::agent::{AssistantMessage, History};
        let answer = || Message::Assistant(AssistantMessage::default());
        let mut state = AgentState {
            turn_open: true,
            messages: Arc::new(History::unshared(vec![Message::user("hi")])),
            ..AgentState::default()
        };
        // Turn 1's model call (its answer not in yet).
        assert_eq!(main_turn(&state), 1);
        // Its tool calls (a subagent's requests): still turn 1.
        state.turn_open = false;
        state.messages = Arc::new(History::unshared(vec![Message::user("hi"), answer()]));
        assert_eq!(main_turn(&state), 1);
        // Turn 2's call, two prompts or one: the answers count, not the prompts.
        state.turn_open = true;
        assert_eq!(main_turn(&state), 2);
        state.turn_open = false;
        state.messages = Arc::new(History::unshared(vec![
            Message::user("hi"),
            answer(),
            answer(),
        ]));
        assert_eq!(main_turn(&state), 2, "idle after turn 2");
    }

    #[test]
    fn a_reopened_log_continues_its_numbering_and_its_bases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.requests.jsonl");
        let bodies = [
            r#"{"model":"m","system":"a system prompt long enough to be stored as a blob of its own, not inline","messages":[{"a":1}]}"#,
            r#"{"model":"m","system":"a system prompt long enough to be stored as a blob of its own, not inline","messages":[{"a":1},{"b":2}]}"#,
            r#"{"model":"m","system":"a system prompt long enough to be stored as a blob of its own, not inline","messages":[{"a":1},{"b":2},{"c":3}]}"#,
        ];
        let mut writer = Writer::open(&path, SideLogReport::unheard());
        writer.sent(call(0, "main", bodies[0]));
        writer.sent(call(1, "subagent-1", bodies[0]));
        writer.flush();
        drop(writer);
        let mut writer = Writer::open(&path, SideLogReport::unheard());
        writer.sent(call(0, "main", bodies[1]));
        writer.sent(call(1, "main", bodies[2]));
        writer.flush();
        let log = RequestLog::load(&path).unwrap();
        let indexes: Vec<usize> = log.requests.iter().map(|r| r.sent.index).collect();
        assert_eq!(indexes, [1, 2, 3, 4]);
        for (n, body) in [bodies[0], bodies[0], bodies[1], bodies[2]]
            .iter()
            .enumerate()
        {
            assert_eq!(log.body(n).unwrap(), *body);
        }
        assert_eq!(log.requests[3].headers, log.requests[0].headers);
        let text = std::fs::read_to_string(&path).unwrap();
        // The system prompt is stored once, the headers twice (once per agent).
        assert_eq!(text.matches("a system prompt").count(), 1);
        assert_eq!(text.matches("text/event-stream").count(), 2);
    }
}
