//! Checkpoints: what every turn changed, so `/undo` and `/rewind` can put files back.
//!
//! A *turn* here is one prompt (a user message, or a notification the runtime delivered)
//! with everything the agent did for it. Before `write_file` or `edit_file` changes a
//! file, [`Checkpoints`] (the tools' [`ChangeObserver`]) records what the file held,
//! once per turn, in the session's checkpoint store beside the session file (see
//! [`store`]); after the change it records the new content's hash, which tells a later
//! undo whether someone else changed the file since. `exec` calls are recorded too: what
//! they changed cannot be put back, but in a git repository the files `git status` shows
//! them changing are named ([`git`]).
//!
//! Which turn a change belongs to is read from the main agent's history at the moment
//! of the change (its latest prompt), so a subagent's change counts for the prompt that
//! is current when it happens.

mod error;
mod git;
pub mod store;
mod undo;

pub use error::CheckpointError;
pub use undo::{
    Confirmation, Conflicts, ConversationRewind, ExecSummary, SessionFile, UndoOutcome, UndoReport,
};

use crate::agent::{Agent, CheckedArgs, Interceptor, Message, Next, ToolCallContext, ToolResult};
use crate::session::SessionAppender;
use crate::text::clip;
use crate::tools::Workspace;
use crate::tools::exec::{ExecTool, HelperRunner};
use crate::tools::fs::{ChangeObserver, Prior, Unkept};
use crate::tools::pipeline::{Caller, Stage};
use async_trait::async_trait;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use store::{Blob, Record, Store};

/// What `write_file` and `edit_file` do when the content a file holds cannot be kept
/// for undo before they change it (a full disk): `[session] checkpoint_failure`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointFailure {
    /// Change the file anyway; the tool's result says the change cannot be undone.
    #[default]
    Warn,
    /// Leave the file as it is; the tool's result says why.
    Refuse,
}

/// The prompt a change belongs to, as the main agent's history has it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TurnKey {
    message_index: usize,
    prompt_ts: u64,
    prompt: String,
}

/// Where the store lives.
enum Location {
    /// Beside a session file (`store` is open on it).
    Session,
    /// No session (`--no-session`): a private temp dir, removed at exit.
    Temporary(Option<tempfile::TempDir>),
}

struct State {
    store: Option<Store>,
    location: Location,
    /// Appends to the session file (conversation rewinds are recorded there).
    appender: Option<SessionAppender>,
}

struct Inner {
    workspace: Arc<Workspace>,
    failure: CheckpointFailure,
    agent: Mutex<Option<Agent>>,
    state: Mutex<State>,
    repo: tokio::sync::OnceCell<Option<git::Repo>>,
}

/// The checkpoints of the active session; cheap to clone, clones share everything.
#[derive(Clone)]
pub struct Checkpoints {
    inner: Arc<Inner>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change under these locks is a whole replace or a single append.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Checkpoints {
    /// Checkpoints of changes in `workspace`, kept in a temp dir until a session is
    /// entered; a change whose earlier content cannot be kept is made with a warning.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_failure(workspace, CheckpointFailure::Warn)
    }

    /// [`Self::new`], with `failure` deciding what happens to a change whose earlier
    /// content cannot be kept.
    pub fn with_failure(workspace: Arc<Workspace>, failure: CheckpointFailure) -> Self {
        Self {
            inner: Arc::new(Inner {
                workspace,
                failure,
                agent: Mutex::new(None),
                state: Mutex::new(State {
                    store: None,
                    location: Location::Temporary(None),
                    appender: None,
                }),
                repo: tokio::sync::OnceCell::new(),
            }),
        }
    }

    /// The agent whose prompts make the turns (the main agent).
    pub fn attach(&self, agent: &Agent) {
        *lock(&self.inner.agent) = Some(agent.clone());
    }

    /// Makes the session in the file `session` (under the private data dir `top`) the
    /// active one: its store is read, later changes go there, and conversation rewinds
    /// are recorded through `appender`. Returns problems met reading the store.
    pub fn enter(&self, session: &Path, top: &Path, appender: SessionAppender) -> Vec<String> {
        let store = Store::open(store::store_dir(session), top.to_path_buf());
        let warnings = store.warnings.clone();
        let mut state = lock(&self.inner.state);
        state.store = Some(store);
        state.location = Location::Session;
        state.appender = Some(appender);
        warnings
    }

    /// The workspace the files are in.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.inner.workspace
    }

    fn agent(&self) -> Option<Agent> {
        lock(&self.inner.agent).clone()
    }

    fn turn_key(&self) -> TurnKey {
        let Some(agent) = self.agent() else {
            return TurnKey {
                message_index: 0,
                prompt_ts: 0,
                prompt: String::new(),
            };
        };
        let state = agent.state();
        let found = state
            .messages
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, m)| match m {
                Message::User(u) => Some((i, u.timestamp, clip(&u.content, 200))),
                Message::Notification(n) => Some((
                    i,
                    n.timestamp,
                    format!("[{} notification] {}", n.source, clip(&n.content, 160)),
                )),
                _ => None,
            });
        let (message_index, prompt_ts, prompt) = found.unwrap_or((0, 0, String::new()));
        TurnKey {
            message_index,
            prompt_ts,
            prompt,
        }
    }

    /// Runs `work` on the open store (a temp one is made on first need).
    fn with_store<T>(&self, work: impl FnOnce(&mut Store) -> T) -> Result<T, CheckpointError> {
        let mut state = lock(&self.inner.state);
        let store = match state.store.take() {
            Some(store) => store,
            None => {
                let dir = match &mut state.location {
                    Location::Temporary(slot @ None) => {
                        let made = tempfile::Builder::new()
                            .prefix("claw-tui-checkpoints-")
                            .tempdir()
                            .map_err(|e| CheckpointError::TempDir(Arc::new(e)))?;
                        let path = made.path().to_path_buf();
                        *slot = Some(made);
                        path
                    }
                    Location::Temporary(Some(dir)) => dir.path().to_path_buf(),
                    Location::Session => return Err(CheckpointError::SessionNotOpen),
                };
                Store::open(dir.join("checkpoints"), dir)
            }
        };
        Ok(work(state.store.insert(store)))
    }

    /// The store's turn for `key`: its latest turn when that is the same prompt and not
    /// undone yet, else a new one.
    fn turn_for(store: &mut Store, key: &TurnKey) -> std::io::Result<u64> {
        if let Some(last) = store.turns().last()
            && !last.undone
            && last.message_index == key.message_index
            && last.prompt_ts == key.prompt_ts
        {
            return Ok(last.id);
        }
        let turn = store.next_turn_id();
        let record = Record::Turn {
            turn,
            message_index: key.message_index,
            prompt_ts: key.prompt_ts,
            prompt: key.prompt.clone(),
        };
        if let Err(e) = store.append(record.clone()) {
            // Still this process's turn: the changes that follow belong to it (and the
            // next call finds it instead of starting another).
            store.remember(record);
            return Err(e);
        }
        Ok(turn)
    }

    fn record(&self, what: &str, work: impl FnOnce(&mut Store, &TurnKey) -> std::io::Result<()>) {
        let key = self.turn_key();
        match self.with_store(|store| work(store, &key)) {
            Err(e) => tracing::error!("cannot record {what} for undo: {e}"),
            Ok(Err(e)) => tracing::error!("cannot record {what} for undo: {e}"),
            Ok(Ok(())) => {}
        }
    }

    /// Records a command run in the current turn and what it changed.
    fn record_exec(&self, command: String, git: bool, changed: Vec<String>) {
        self.record("a command", |store, key| {
            let turn = Self::turn_for(store, key)?;
            store.append(Record::Exec {
                turn,
                command,
                git,
                changed,
            })
        });
    }

    async fn repo(&self, helper: &HelperRunner) -> Option<git::Repo> {
        let root = self.inner.workspace.root().to_path_buf();
        self.inner
            .repo
            .get_or_init(|| async move { git::Repo::find(helper, &root).await })
            .await
            .clone()
    }

    /// The pipeline step that records each call of `exec` in the current turn, with
    /// the files `git status` shows it changing (git run as exec's sandbox runs
    /// helpers). It belongs innermost, after the approval: it sees what really runs.
    pub fn exec_stage(&self, exec: Arc<ExecTool>) -> Arc<dyn Stage> {
        Arc::new(TrackedExec {
            helper: exec.helper(),
            exec,
            checkpoints: self.clone(),
        })
    }

    /// Takes again what the file a tool result names (`details.path`) holds, as what
    /// the current turn left in it: an `after_tool` hook (a formatter) may have changed
    /// it after the tool. Files the turn did not change are left alone.
    pub fn refresh_after_hooks(&self, details: &Value) {
        let Some(path) = details.get("path").and_then(Value::as_str) else {
            return;
        };
        let path = PathBuf::from(path);
        let Ok(Some(current)) = crate::tools::fs::read_current(&self.inner.workspace, &path) else {
            return;
        };
        self.record("a hook's change", |store, key| {
            let Some(turn) = store.turns().last().filter(|t| {
                t.message_index == key.message_index
                    && t.prompt_ts == key.prompt_ts
                    && t.files.contains_key(&path)
            }) else {
                return Ok(());
            };
            let turn = turn.id;
            store.append(Record::After {
                turn,
                path: path.clone(),
                blob: Blob::Content {
                    sha256: store::hash(&current),
                    stored: false,
                },
            })
        });
    }

    /// The path as the user reads it: relative to the workspace when inside it.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(self.inner.workspace.root())
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

impl ChangeObserver for Checkpoints {
    fn before_change(&self, path: &Path, prior: Prior<'_>) -> Result<(), Unkept> {
        let key = self.turn_key();
        let refuse = self.inner.failure == CheckpointFailure::Refuse;
        let kept = self.with_store(|store| keep_before(store, &key, path, prior, refuse));
        let reason = match kept {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(reason)) => reason,
            Err(e) => e.to_string(),
        };
        tracing::error!(
            "cannot keep the content of {} for undo: {reason}",
            path.display()
        );
        Err(Unkept { reason, refuse })
    }

    fn after_change(&self, path: &Path, after: &[u8]) {
        self.record("a change", |store, key| {
            let turn = Self::turn_for(store, key)?;
            store.append(Record::After {
                turn,
                path: path.to_path_buf(),
                blob: Blob::Content {
                    sha256: store::hash(after),
                    stored: false,
                },
            })
        });
    }
}

/// Records what `path` holds before the current turn first changes it; `Err` with why
/// the change could not be undone. With `refuse`, nothing of a change that will not be
/// made is recorded; otherwise what cannot be written is remembered in this process,
/// so an undo now names the file it cannot restore.
fn keep_before(
    store: &mut Store,
    key: &TurnKey,
    path: &Path,
    prior: Prior<'_>,
    refuse: bool,
) -> Result<(), String> {
    let index = |e: std::io::Error| format!("the checkpoint index cannot be written: {e}");
    let (turn, mut trouble) = match Checkpoints::turn_for(store, key) {
        Ok(turn) => (turn, None),
        Err(e) if refuse => return Err(index(e)),
        Err(e) => (store.turns().last().map_or(0, |t| t.id), Some(index(e))),
    };
    if store.turn(turn).is_some_and(|t| t.files.contains_key(path)) {
        return trouble.map_or(Ok(()), Err);
    }
    let blob = match prior {
        Prior::Absent => Blob::Absent,
        Prior::Content(bytes) => match store.keep(bytes) {
            Ok(blob) => blob,
            Err(e) => {
                let reason = e.to_string();
                trouble = Some(reason.clone());
                Blob::NotKept {
                    reason: Some(reason),
                }
            }
        },
        Prior::NotKept => {
            trouble = Some(format!(
                "it is larger than {} or not a regular file",
                crate::text::byte_size(crate::tools::fs::MAX_KEPT_BYTES)
            ));
            Blob::NotKept { reason: None }
        }
    };
    if refuse && let Some(reason) = trouble {
        // The file stays as it is: there is nothing to record.
        return Err(reason);
    }
    let record = Record::Before {
        turn,
        path: path.to_path_buf(),
        blob,
    };
    if let Err(e) = store.append(record.clone()) {
        if refuse {
            return Err(index(e));
        }
        store.remember(record);
        trouble.get_or_insert_with(|| index(e));
    }
    trouble.map_or(Ok(()), Err)
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir: Option<PathBuf> = lock(&self.inner.state)
            .store
            .as_ref()
            .map(|s| s.dir().to_path_buf());
        f.debug_struct("Checkpoints").field("store", &dir).finish()
    }
}

/// Each call of `exec` recorded for undo.
struct TrackedExec {
    exec: Arc<ExecTool>,
    helper: HelperRunner,
    checkpoints: Checkpoints,
}

impl Stage for TrackedExec {
    fn interceptor(&self, _caller: &Caller) -> Option<Arc<dyn Interceptor>> {
        Some(Arc::new(TrackedExec {
            exec: self.exec.clone(),
            helper: self.helper.clone(),
            checkpoints: self.checkpoints.clone(),
        }))
    }
}

#[async_trait]
impl Interceptor for TrackedExec {
    async fn around(
        &self,
        call: &ToolCallContext<'_>,
        args: CheckedArgs,
        next: Next<'_>,
    ) -> ToolResult {
        // The very tool, not a namesake (a replacement registered under its name).
        let is_exec = std::ptr::addr_eq(Arc::as_ptr(call.tool), Arc::as_ptr(&self.exec));
        if !is_exec {
            return next.run(args).await;
        }
        // A call refused by its arguments, a deny rule or its working directory runs
        // nothing, so no snapshot is taken either.
        if self.exec.check(args.value()).is_err() {
            return next.run(args).await;
        }
        let Some(command) = args
            .value()
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return next.run(args).await;
        };
        let helper = &self.helper;
        let repo = self.checkpoints.repo(helper).await;
        let before = match &repo {
            Some(repo) => repo.snapshot(helper).await,
            None => None,
        };
        let result = next.run(args).await;
        // A command refused before it ran changed nothing.
        if result.details.get("refused").is_some() {
            return result;
        }
        let changed = match (&repo, before) {
            (Some(repo), Some(before)) => repo
                .snapshot(helper)
                .await
                .map(|after| {
                    before
                        .changed_in(&after)
                        .iter()
                        .map(|p| repo.absolute(p).display().to_string())
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let checkpoints = self.checkpoints.clone();
        let git = repo.is_some();
        // The store's I/O is blocking; it is small, but kept off the async workers.
        let _ = tokio::task::spawn_blocking(move || {
            checkpoints.record_exec(command, git, changed);
        })
        .await;
        result
    }
}
