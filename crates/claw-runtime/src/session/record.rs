//! Recording an agent into its session: completed messages, queue and setting changes
//! into the file, the run in progress into its side file (see `streaming.rs`).

use super::Entry;
use super::events::{EventRecording, LogEntry, SegmentStart};
use super::sink::SaveStatus;
use super::streaming::{FLUSH_BYTES, FLUSH_EVERY, StreamCommand, StreamLine};
use super::writer::SessionWriter;
use crate::agent::{Agent, AgentEvent, EventKind, Message, MessageDelta, now_ms};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Records an agent's messages and queue changes into `writer` until `finish` is sent;
/// then drains what is left, syncs and closes the file. Every agent event also goes to
/// the event log; see [`record_events_with`] for runtime events or no log.
pub fn record_events(
    agent: &Agent,
    writer: SessionWriter,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<SaveStatus>) {
    record_events_with(agent, writer, &EventRecording::agent_only(true))
}

/// [`record_events`], with the event log as `log` says: with `log.enabled`, every
/// agent event (and every runtime event of `log.runtime`) also goes to the event log
/// (`events.rs`). The task ends with how saving went.
pub fn record_events_with(
    agent: &Agent,
    writer: SessionWriter,
    log: &EventRecording,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<SaveStatus>) {
    let mut events = agent.subscribe(None);
    let mut runtime = match (log.enabled, &log.runtime) {
        (true, Some(sender)) => Some(sender.tap()),
        _ => None,
    };
    let mut cron_jobs = log
        .cron_jobs
        .clone()
        .filter(|_| log.enabled)
        .map(|rx| JobsWatch { rx, logged: None });
    let clock = log.enabled.then(|| {
        writer.log_event(LogEntry::Start(SegmentStart {
            wall_ms: now_ms(),
            messages: agent.state().messages.len(),
        }));
        Instant::now()
    });
    let (finish, mut finished) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut deltas = Deltas::default();
        let mut batch = EventBatch::default();
        let on_event = |writer: &SessionWriter,
                        deltas: &mut Deltas,
                        batch: &mut EventBatch,
                        event: AgentEvent| {
            let Some(clock) = clock else {
                return record(writer, deltas, &event);
            };
            let update = matches!(
                event.kind(),
                EventKind::MessageUpdate | EventKind::ToolExecutionUpdate
            );
            if !update {
                // What came before a boundary goes to the log before the boundary's sync.
                batch.send(writer);
            }
            record(writer, deltas, &event);
            batch.push(LogEntry::Agent(micros(clock), Box::new(event)), writer);
            if !update {
                batch.send(writer);
            }
        };
        loop {
            let flush_at = [deltas.since, batch.since]
                .into_iter()
                .flatten()
                .min()
                .map(|since| since + FLUSH_EVERY);
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Some(event) => on_event(&writer, &mut deltas, &mut batch, event),
                    None => break,
                },
                jobs = next_jobs(&mut cron_jobs) => match (jobs, clock) {
                    (Some(JobsLine::Whole(jobs)), Some(clock)) => batch.push(LogEntry::CronJobs(micros(clock), jobs), &writer),
                    (Some(JobsLine::Changes(changes)), Some(clock)) => batch.push(LogEntry::CronChanges(micros(clock), changes), &writer),
                    _ => cron_jobs = None,
                },
                event = next(&mut runtime) => match (event, clock) {
                    (Some(event), Some(clock)) => batch.push(LogEntry::Runtime(micros(clock), Box::new(event)), &writer),
                    // Another recording took the tap over.
                    _ => runtime = None,
                },
                _ = &mut finished => {
                    while let Ok(event) = events.try_recv() {
                        on_event(&writer, &mut deltas, &mut batch, event);
                    }
                    if let (Some(rx), Some(clock)) = (runtime.as_mut(), clock) {
                        while let Ok(event) = rx.try_recv() {
                            batch.push(LogEntry::Runtime(micros(clock), Box::new(event)), &writer);
                        }
                    }
                    break;
                }
                () = at(flush_at) => {
                    deltas.flush(&writer);
                    batch.send(&writer);
                }
            }
        }
        batch.send(&writer);
        // A run still active keeps its side file: what it streamed is recovered later.
        deltas.flush(&writer);
        writer.close().await
    });
    (finish, task)
}

/// Event-log lines not yet handed to the writer thread. Deltas arrive hundreds of times a
/// second and waking the writer for each cost more than the writing (a quarter of the
/// client's CPU for a long answer): they go over in batches, at the next event that is
/// not an update, at [`EVENT_BATCH`] lines or after [`FLUSH_EVERY`]. Each line keeps the
/// time it was received, so the log's spacing is unchanged.
#[derive(Default)]
struct EventBatch {
    entries: Vec<LogEntry>,
    /// When the oldest waiting line arrived.
    since: Option<Instant>,
}

/// Lines a batch holds at most before it goes to the writer.
const EVENT_BATCH: usize = 512;

impl EventBatch {
    fn push(&mut self, entry: LogEntry, writer: &SessionWriter) {
        self.entries.push(entry);
        self.since.get_or_insert_with(Instant::now);
        if self.entries.len() >= EVENT_BATCH {
            self.send(writer);
        }
    }

    fn send(&mut self, writer: &SessionWriter) {
        self.since = None;
        if !self.entries.is_empty() {
            writer.log_events(std::mem::take(&mut self.entries));
        }
    }
}

/// Microseconds since `clock`.
fn micros(clock: Instant) -> u64 {
    u64::try_from(clock.elapsed().as_micros()).unwrap_or(u64::MAX)
}

async fn next(
    rx: &mut Option<tokio::sync::mpsc::UnboundedReceiver<crate::runtime::RuntimeEvent>>,
) -> Option<crate::runtime::RuntimeEvent> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

type CronJobs = crate::runtime::cron::CronJobInfo;

/// The cron jobs' list being watched, and the list as last logged (by id; `None` until
/// the list as it is at the start has been logged).
struct JobsWatch {
    rx: tokio::sync::watch::Receiver<Vec<CronJobs>>,
    logged: Option<std::collections::HashMap<String, CronJobs>>,
}

/// What the log gets of the cron jobs: the whole list once, then what changed.
enum JobsLine {
    Whole(Vec<CronJobs>),
    Changes(super::events::CronChanges),
}

/// The list as it is at the start, then each change of it; `None` once the service is
/// gone. A fire changes one job: only that job is logged, not the whole list again.
async fn next_jobs(watch: &mut Option<JobsWatch>) -> Option<JobsLine> {
    let Some(watch) = watch else {
        return std::future::pending().await;
    };
    let Some(logged) = watch.logged.as_mut() else {
        let jobs = watch.rx.borrow_and_update().clone();
        watch.logged = Some(jobs.iter().map(|j| (j.id.clone(), j.clone())).collect());
        return Some(JobsLine::Whole(jobs));
    };
    loop {
        watch.rx.changed().await.ok()?;
        let changes = super::events::CronChanges::between(logged, &watch.rx.borrow_and_update());
        if !changes.is_empty() {
            return Some(JobsLine::Changes(changes));
        }
    }
}

async fn at(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Deltas of the streaming answer not yet in the side file, merged where they extend
/// the same block.
#[derive(Default)]
struct Deltas {
    pending: Vec<MessageDelta>,
    bytes: usize,
    /// When the oldest pending delta arrived.
    since: Option<Instant>,
}

impl Deltas {
    fn push(&mut self, delta: &MessageDelta) {
        let grown = match (self.pending.last_mut(), delta) {
            (
                Some(MessageDelta::Text { index: a, text }),
                MessageDelta::Text {
                    index: b,
                    text: more,
                },
            )
            | (
                Some(MessageDelta::Thinking { index: a, text }),
                MessageDelta::Thinking {
                    index: b,
                    text: more,
                },
            )
            | (
                Some(MessageDelta::ToolCallArgs {
                    index: a,
                    json: text,
                }),
                MessageDelta::ToolCallArgs {
                    index: b,
                    json: more,
                },
            ) if a == b => {
                text.push_str(more);
                more.len()
            }
            _ => {
                self.pending.push(delta.clone());
                64
            }
        };
        self.bytes += grown;
        self.since.get_or_insert_with(Instant::now);
    }

    fn flush(&mut self, writer: &SessionWriter) {
        self.since = None;
        self.bytes = 0;
        if self.pending.is_empty() {
            return;
        }
        let line = StreamLine::Deltas {
            deltas: std::mem::take(&mut self.pending),
        };
        writer.stream(StreamCommand::Append(stream_line(&line)));
    }

    fn discard(&mut self) {
        *self = Self::default();
    }
}

fn stream_line(line: &StreamLine) -> String {
    let mut text = serde_json::to_string(line).unwrap_or_default();
    text.push('\n');
    text
}

fn record(writer: &SessionWriter, deltas: &mut Deltas, event: &AgentEvent) {
    match event {
        AgentEvent::AgentStart => {
            writer.stream(StreamCommand::Begin(stream_line(&StreamLine::RunStart {
                timestamp: now_ms(),
            })))
        }
        AgentEvent::MessageStart {
            message: Message::Assistant(m),
        } => {
            deltas.discard();
            writer.stream(StreamCommand::Append(stream_line(
                &StreamLine::MessageStart {
                    model: m.model.clone(),
                    timestamp: m.timestamp,
                },
            )));
        }
        AgentEvent::MessageUpdate { delta } => {
            deltas.push(delta);
            if deltas.bytes >= FLUSH_BYTES {
                deltas.flush(writer);
            }
        }
        AgentEvent::MessageEnd { message } => {
            // The line names its images by hash; their bytes go to the store first.
            if let Err(e) = super::images::save(writer.path(), message) {
                tracing::error!(
                    "cannot store the images of {}: {e}",
                    writer.path().display()
                );
            }
            writer.append(&Entry::Message {
                timestamp: now_ms(),
                message: message.clone(),
            });
            if matches!(message, Message::Assistant(_)) {
                deltas.discard();
                writer.stream(StreamCommand::Append(stream_line(&StreamLine::MessageEnd)));
            }
        }
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => writer.append(&Entry::Queue {
            timestamp: now_ms(),
            steering: steering.clone(),
            follow_up: follow_up.clone(),
        }),
        AgentEvent::HistoryCut { kept } => writer.append(&Entry::Rewind {
            timestamp: now_ms(),
            messages: *kept,
        }),
        AgentEvent::SettingUpdate { key, value } => writer.append(&Entry::Setting {
            timestamp: now_ms(),
            key: key.clone(),
            value: value.clone(),
        }),
        // The complete history stays; the line records what the model sees from now on.
        AgentEvent::CompactionEnd(end) => {
            if let Some(compaction) = end.record() {
                writer.append(&Entry::Compaction(compaction));
                writer.sync();
            }
        }
        AgentEvent::TurnEnd { .. } => writer.sync(),
        AgentEvent::AgentEnd { .. } => {
            deltas.discard();
            writer.sync();
            writer.stream(StreamCommand::End);
        }
        _ => {}
    }
}
