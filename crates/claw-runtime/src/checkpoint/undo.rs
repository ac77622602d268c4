//! Putting files back: `/undo` (the latest turn not undone yet), `/rewind` (files,
//! conversation or both, back to a prompt) and `/diff` (every file changed this session
//! against its content before the first change).
//!
//! A file changed since the turn by someone else (its content is not what the turn left)
//! is never overwritten silently: with [`Conflicts::Ask`] nothing is done and the files
//! are listed for the user to confirm; [`Conflicts::Skip`] leaves them, and
//! [`Conflicts::Overwrite`] restores them too.

use super::store::{Blob, Record, Store, TurnRecord};
use super::{CheckpointError, Checkpoints};
use crate::agent::{Message, now_ms};

use crate::tools::fs::{ChangeKind, FileChange, read_current, restore_file};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to do with files changed since by someone else.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Conflicts {
    /// Do nothing yet; list them so the user can decide.
    #[default]
    Ask,
    /// Leave them as they are; restore the rest.
    Skip,
    /// Restore them too.
    Overwrite,
}

/// What the commands of the undone turns did, as far as it is known.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSummary {
    /// How many `exec` calls the turns made.
    pub commands: usize,
    /// Whether the workspace is a git repository (so `changed` is known).
    pub git: bool,
    /// The files `git status` shows those calls changed.
    pub changed: Vec<String>,
}

/// What an undo did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoReport {
    /// The prompts of the turns undone (empty: there was nothing to undo).
    pub turns: Vec<String>,
    /// Files put back as they were.
    pub restored: Vec<String>,
    /// Files the turns created, removed again.
    pub removed: Vec<String>,
    /// Files changed since by someone else, left as they are.
    pub skipped: Vec<String>,
    /// Files changed since by someone else, restored on the user's word.
    pub overwritten: Vec<String>,
    /// Files that could not be put back, with the reason.
    pub failed: Vec<String>,
    /// What the turns' commands changed (not undone).
    pub exec: ExecSummary,
}

/// The files changed since, for the user to decide about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The prompts of the turns that would be undone.
    pub turns: Vec<String>,
    /// Files that would be put back without question.
    pub clean: Vec<String>,
    /// Files changed since by someone else.
    pub changed: Vec<String>,
}

/// The result of an undo or a file rewind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum UndoOutcome {
    /// It was done.
    Done(UndoReport),
    /// Nothing was done: some files changed since; ask again with Skip or Overwrite.
    Confirm(Confirmation),
}

/// A conversation taken back to a prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversationRewind {
    /// The prompt, for the composer.
    pub prompt: String,
    /// The history now (everything before that prompt): the agent's own messages,
    /// shared, so the chat can show them without a copy.
    pub messages: std::sync::Arc<[Message]>,
}

/// One file of `/diff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFile {
    /// From its content before the session's first change to what it holds now.
    pub change: FileChange,
    /// Someone else changed it after the agent's last change.
    pub changed_outside: bool,
}

/// What each file goes back to, and what the turns left in it.
struct Target {
    before: Blob,
    after: Blob,
}

impl UndoReport {
    /// The report in words: which turn, which files, what was left and why.
    pub fn message(&self) -> String {
        if self.turns.is_empty() {
            return "Nothing to undo: no turn of this session changed files.".into();
        }
        let what = match self.turns.as_slice() {
            [one] => format!("turn “{}”", one),
            many => format!("{} turns (back to “{}”)", many.len(), many[0]),
        };
        let mut parts = vec![format!("Undid {what}.")];
        let list = |files: &[String]| files.join(", ");
        if !self.restored.is_empty() {
            parts.push(format!("Restored {}.", list(&self.restored)));
        }
        if !self.removed.is_empty() {
            parts.push(format!("Removed {} (created by it).", list(&self.removed)));
        }
        if !self.overwritten.is_empty() {
            parts.push(format!(
                "Also restored, as you confirmed, though changed since by something else: {}.",
                list(&self.overwritten)
            ));
        }
        if !self.skipped.is_empty() {
            parts.push(format!(
                "Left as they are (changed since by something else): {}.",
                list(&self.skipped)
            ));
        }
        if !self.failed.is_empty() {
            parts.push(format!("Could not restore: {}.", self.failed.join("; ")));
        }
        if self.restored.is_empty() && self.removed.is_empty() && self.overwritten.is_empty() {
            parts.push("No file needed restoring.".into());
        }
        if self.exec.commands > 0 {
            let commands = match self.exec.commands {
                1 => "a command".to_owned(),
                n => format!("{n} commands"),
            };
            let changed = match (self.exec.git, self.exec.changed.is_empty()) {
                (false, _) => {
                    " This is not a git repository: check what they changed yourself.".to_owned()
                }
                (true, true) => " git status shows no file changed by them.".to_owned(),
                (true, false) => format!(
                    " git status shows they changed: {}.",
                    self.exec.changed.join(", ")
                ),
            };
            parts.push(format!(
                "It also ran {commands} (exec), whose changes cannot be undone.{changed}"
            ));
        }
        parts.join(" ")
    }
}

impl Confirmation {
    /// The question in words.
    pub fn message(&self) -> String {
        format!(
            "Changed since by something else (your editor, a command): {}.",
            self.changed.join(", ")
        )
    }
}

impl Checkpoints {
    fn refuse_while_running(&self) -> Result<(), CheckpointError> {
        match self.agent() {
            Some(agent) if agent.state().is_streaming => Err(CheckpointError::AgentWorking),
            _ => Ok(()),
        }
    }

    /// Undoes the latest turn whose changes are not undone yet.
    pub fn undo(&self, conflicts: Conflicts) -> Result<UndoOutcome, CheckpointError> {
        self.refuse_while_running()?;
        let ws = self.clone();
        self.with_store(|store| {
            let turn = store
                .turns()
                .iter()
                .rev()
                .find(|t| !t.undone && (!t.files.is_empty() || !t.execs.is_empty()))
                .map(|t| t.id);
            match turn {
                Some(id) => ws.put_back(store, &[id], conflicts),
                None => nothing_recorded(store).map(|()| UndoOutcome::Done(UndoReport::default())),
            }
        })?
    }

    /// The user prompts of the conversation, oldest first (what `/rewind` offers; turn
    /// `n` is the `n`th, from 1).
    pub fn prompts(&self) -> Vec<String> {
        self.agent()
            .map(|agent| {
                agent
                    .state()
                    .messages
                    .iter()
                    .filter_map(|m| match m {
                        Message::User(u) => Some(u.content.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Where the `turn`th user prompt is in the history, and its timestamp.
    fn prompt_at(&self, turn: usize) -> Result<(usize, u64, String), CheckpointError> {
        let agent = self.agent().ok_or(CheckpointError::NoAgent)?;
        let state = agent.state();
        let found = state
            .messages
            .iter()
            .enumerate()
            .filter_map(|(i, m)| match m {
                Message::User(u) => Some((i, u.timestamp, u.content.clone())),
                _ => None,
            })
            .nth(turn.wrapping_sub(1));
        found.ok_or_else(|| {
            let count = state
                .messages
                .iter()
                .filter(|m| matches!(m, Message::User(_)))
                .count();
            CheckpointError::NoSuchTurn { turn, count }
        })
    }

    /// Puts back every file changed since the `turn`th prompt (by that turn and every
    /// later one) as it was before it.
    pub fn rewind_files(
        &self,
        turn: usize,
        conflicts: Conflicts,
    ) -> Result<UndoOutcome, CheckpointError> {
        self.refuse_while_running()?;
        let (_, since, _) = self.prompt_at(turn)?;
        let ws = self.clone();
        self.with_store(|store| {
            let ids: Vec<u64> = store
                .turns()
                .iter()
                .filter(|t| !t.undone && t.prompt_ts >= since)
                .map(|t| t.id)
                .collect();
            if ids.is_empty() {
                return nothing_recorded(store).map(|()| UndoOutcome::Done(UndoReport::default()));
            }
            ws.put_back(store, &ids, conflicts)
        })?
    }

    /// Takes the conversation back to just before the `turn`th prompt: the agent's
    /// history loses that prompt and everything after it, and the session file records
    /// the cut. Returns the prompt (for the composer) and the history kept.
    pub fn rewind_conversation(&self, turn: usize) -> Result<ConversationRewind, CheckpointError> {
        self.refuse_while_running()?;
        let agent = self.agent().ok_or(CheckpointError::NoAgent)?;
        let (index, _, prompt) = self.prompt_at(turn)?;
        // The session records the cut from the agent's `history_cut` event, in order
        // after the messages before it (written from their own events).
        let messages = agent.cut_history(index)?;
        Ok(ConversationRewind { prompt, messages })
    }

    /// Puts the files of the turns `ids` back as they were before the first of them.
    fn put_back(
        &self,
        store: &mut Store,
        ids: &[u64],
        conflicts: Conflicts,
    ) -> Result<UndoOutcome, CheckpointError> {
        let turns: Vec<&TurnRecord> = ids.iter().filter_map(|id| store.turn(*id)).collect();
        let prompts: Vec<String> = turns.iter().map(|t| t.prompt.clone()).collect();
        let mut targets: BTreeMap<PathBuf, Target> = BTreeMap::new();
        let mut exec = ExecSummary::default();
        for turn in &turns {
            for (path, file) in &turn.files {
                targets
                    .entry(path.clone())
                    .or_insert(Target {
                        before: file.before.clone(),
                        after: file.after.clone(),
                    })
                    .after = file.after.clone();
            }
            for run in &turn.execs {
                exec.commands += 1;
                exec.git |= run.git;
                exec.changed.extend(run.changed.iter().cloned());
            }
        }
        // A file a tool changed is put back below; that a command ran meanwhile (calls
        // run in parallel) does not make it the command's change.
        let mut by_exec: Vec<String> = exec
            .changed
            .iter()
            .filter(|p| !targets.contains_key(Path::new(p.as_str())))
            .map(|p| self.shown(Path::new(p)))
            .collect();
        by_exec.sort();
        by_exec.dedup();
        exec.changed = by_exec;
        let mut report = UndoReport {
            turns: prompts.clone(),
            exec,
            ..UndoReport::default()
        };
        let mut to_restore = Vec::new();
        let mut changed = Vec::new();
        for (path, target) in &targets {
            let shown = self.shown(path);
            match read_current(&self.inner.workspace, path) {
                Ok(current) if target.before.matches(current.as_deref()) => {
                    report.restored.push(shown)
                }
                Ok(current) if target.after.matches(current.as_deref()) => {
                    to_restore.push((path, target, shown, false))
                }
                Ok(_) => changed.push((path, target, shown, None)),
                // Unreadable now (a symlink swapped in, a directory...): the user decides,
                // and a forced restore refuses what would not be safe.
                Err(e) => changed.push((path, target, shown, Some(e.to_string()))),
            }
        }
        if !changed.is_empty() && conflicts == Conflicts::Ask {
            return Ok(UndoOutcome::Confirm(Confirmation {
                turns: prompts,
                clean: to_restore.iter().map(|(_, _, s, _)| s.clone()).collect(),
                changed: changed
                    .into_iter()
                    .map(|(_, _, shown, why)| with_reason(shown, why))
                    .collect(),
            }));
        }
        for (path, target, shown, why) in changed {
            if conflicts == Conflicts::Overwrite {
                to_restore.push((path, target, shown, true));
            } else {
                report.skipped.push(with_reason(shown, why));
            }
        }
        for (path, target, shown, forced) in to_restore {
            let restored = store
                .content(&target.before)
                .and_then(|content| restore_file(&self.inner.workspace, path, content.as_deref()));
            match (restored, &target.before, forced) {
                (Err(e), _, _) => report.failed.push(format!("{shown}: {e}")),
                (Ok(()), _, true) => report.overwritten.push(shown),
                (Ok(()), Blob::Absent, false) => report.removed.push(shown),
                (Ok(()), _, false) => report.restored.push(shown),
            }
        }
        store
            .append(Record::Undone {
                turns: ids.to_vec(),
                at: now_ms(),
            })
            .map_err(|e| CheckpointError::NotRecorded(Arc::new(e)))?;
        Ok(UndoOutcome::Done(report))
    }

    /// Every file the agent changed this session, from its content before the first
    /// change to what it holds now (files back as they were are left out).
    pub fn session_diff(&self) -> Result<Vec<SessionFile>, CheckpointError> {
        let ws = self.clone();
        self.with_store(|store| {
            if store.turns().is_empty() {
                nothing_recorded(store)?;
            }
            let mut targets: BTreeMap<PathBuf, Target> = BTreeMap::new();
            for turn in store.turns() {
                for (path, file) in &turn.files {
                    targets
                        .entry(path.clone())
                        .or_insert(Target {
                            before: file.before.clone(),
                            after: file.after.clone(),
                        })
                        .after = file.after.clone();
                }
            }
            let mut files = Vec::new();
            for (path, target) in targets {
                let shown = ws.shown(&path);
                let current = match read_current(&ws.inner.workspace, &path) {
                    Ok(current) => current,
                    Err(e) => {
                        let why = format!("cannot read it now: {e}");
                        files.push(SessionFile {
                            change: FileChange::omitted(&shown, ChangeKind::Edited, &why),
                            changed_outside: false,
                        });
                        continue;
                    }
                };
                if target.before.matches(current.as_deref()) {
                    continue;
                }
                let changed_outside = !target.after.matches(current.as_deref());
                let change = match store.content(&target.before) {
                    Ok(before) => {
                        FileChange::between(&shown, before.as_deref(), current.as_deref(), false)
                    }
                    Err(e) => FileChange::omitted(&shown, ChangeKind::Edited, &e.to_string()),
                };
                files.push(SessionFile {
                    change,
                    changed_outside,
                });
            }
            Ok(files)
        })?
    }
}

/// Finding no turn to act on is an answer only when the index is there to say so; a
/// deleted one is named instead.
fn nothing_recorded(store: &Store) -> Result<(), CheckpointError> {
    match store.missing_index() {
        Some(path) => Err(CheckpointError::IndexMissing { path }),
        None => Ok(()),
    }
}

/// `shown`, with why it could not be read now when it could not.
fn with_reason(shown: String, why: Option<String>) -> String {
    match why {
        Some(why) => format!("{shown} ({why})"),
        None => shown,
    }
}
