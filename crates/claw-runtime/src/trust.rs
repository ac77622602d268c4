//! What runs outside the sandbox from the workspace, and whether the user trusted that
//! exact content.
//!
//! Hooks and MCP servers run as the user, outside the exec sandbox. When the command of
//! one names a workspace file (`sh .claw-tui/hooks/no-rm.sh`, `node tools/server.js`),
//! that file is something the model might have written. So each such file is
//! *pinned*: the file tools refuse to write it (`Workspace::with_pinned`), and the hook
//! or server runs only while the file holds content the user trusted, by SHA-256
//! ([`Trust::check`]). New or changed content is refused and asked about: the client
//! shows the question (a [`TrustRequest`], sent as a `trust_request` runtime event),
//! the headless modes only say it was refused. The answers are kept in the data dir
//! ([`store`]), beside the answer about the project's `.mcp.json` servers.

pub mod named;
mod request;
pub mod store;

pub use named::{PinnedFile, named_files, option_value, word_path, word_paths};
pub use request::{FileQuestion, ServerEntry, TrustRequest};
pub use store::{ProjectAnswer, TrustDecision, TrustStore, WorkspaceTrust};

use crate::runtime::{RuntimeEvent, RuntimeEventSender};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// Something claw-tui runs outside the sandbox: a hook or a stdio MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runner {
    /// What it is, for people: ``before_tool hook `sh x.sh` ``, `MCP server files`.
    pub label: String,
    /// Its command's words.
    pub words: Vec<String>,
    /// Where it runs (relative words start there).
    pub cwd: PathBuf,
}

/// A runner was refused: files it runs hold content the user has not trusted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Untrusted {
    /// The runner.
    pub label: String,
    /// The files, each with whether it was trusted before with other content.
    pub files: Vec<(PinnedFile, bool)>,
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<String> = self
            .files
            .iter()
            .map(|(file, changed)| {
                let what = match (&file.sha256, changed) {
                    (None, _) => "is not a regular file of a size that can be pinned",
                    (Some(_), true) => "changed since you trusted it",
                    (Some(_), false) => "was never trusted",
                };
                format!(
                    "{} {what} (sha256 {})",
                    file.path.display(),
                    file.short_hash()
                )
            })
            .collect();
        write!(
            f,
            "{} was not run: {}; review it in the claw-tui client (it asks), or move the \
             file out of the workspace",
            self.label,
            files.join("; ")
        )
    }
}

struct Inner {
    workspace: PathBuf,
    store: Option<TrustStore>,
    trusted: Mutex<BTreeMap<PathBuf, String>>,
    runners: Mutex<Vec<Runner>>,
    /// Contents already asked about this session (not asked again).
    asked: Mutex<BTreeSet<(PathBuf, Option<String>)>>,
    events: RuntimeEventSender,
    /// Bumped whenever the user trusts something, so a waiting server looks again.
    changed: watch::Sender<u64>,
}

/// The trust in one workspace's pinned files; cheap to clone, clones share everything.
#[derive(Clone)]
pub struct Trust {
    inner: Arc<Inner>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change under these locks is a single insert or push.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Trust {
    /// The trust remembered for `workspace` (absolute, symlinks resolved) in the data
    /// dir `data_dir`; questions go out on `events`.
    pub fn open(workspace: &Path, data_dir: &Path, events: RuntimeEventSender) -> Self {
        let store = TrustStore::new(data_dir);
        let trusted = store.workspace(workspace).files;
        Self::with(workspace, Some(store), trusted, events)
    }

    /// Nothing trusted, nothing remembered, nobody asked: every workspace file a runner
    /// names is refused.
    pub fn in_memory(workspace: &Path) -> Self {
        Self::with(
            workspace,
            None,
            BTreeMap::new(),
            RuntimeEventSender::discard(),
        )
    }

    fn with(
        workspace: &Path,
        store: Option<TrustStore>,
        trusted: BTreeMap<PathBuf, String>,
        events: RuntimeEventSender,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                workspace: workspace.to_path_buf(),
                store,
                trusted: Mutex::new(trusted),
                runners: Mutex::new(Vec::new()),
                asked: Mutex::new(BTreeSet::new()),
                events,
                changed: watch::channel(0).0,
            }),
        }
    }

    /// The data dir the answers are kept in (none for [`Self::in_memory`]): claw-tui's
    /// own, which commands may not write.
    pub fn data_dir(&self) -> Option<&Path> {
        self.inner.store.as_ref().and_then(|s| s.path().parent())
    }

    /// The workspace.
    pub fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    /// Makes `runner` known: its files are pinned and part of what the user is asked.
    pub fn register(&self, runner: Runner) {
        let mut runners = lock(&self.inner.runners);
        if !runners.contains(&runner) {
            runners.push(runner);
        }
    }

    /// The workspace files `runner` names now.
    pub fn named(&self, runner: &Runner) -> Vec<PathBuf> {
        named_files(&runner.words, &runner.cwd, &self.inner.workspace)
    }

    /// Every workspace file a known runner names now (to protect from writes).
    pub fn pinned_paths(&self) -> Vec<PathBuf> {
        let runners = lock(&self.inner.runners).clone();
        let mut paths: Vec<PathBuf> = runners.iter().flat_map(|r| self.named(r)).collect();
        paths.sort();
        paths.dedup();
        paths
    }

    /// The files `runner` names whose content now is not what the user trusted, each
    /// with whether other content was trusted before.
    fn untrusted(&self, runner: &Runner) -> Vec<(PinnedFile, bool)> {
        let files: Vec<PinnedFile> = self
            .named(runner)
            .iter()
            .map(|p| PinnedFile::read(p))
            .collect();
        self.judge(files)
    }

    /// Those of `files` whose content is not what the user trusted.
    fn judge(&self, files: Vec<PinnedFile>) -> Vec<(PinnedFile, bool)> {
        let trusted = lock(&self.inner.trusted);
        files
            .into_iter()
            .filter_map(|file| {
                let known = trusted.get(&file.path);
                (file.sha256.is_none() || known != file.sha256.as_ref())
                    .then(|| (file, known.is_some()))
            })
            .collect()
    }

    /// Whether `runner` may run now: every workspace file it names holds trusted
    /// content. When not, the user is asked (once per content) and the refusal says why.
    /// Reads the files: call it off the async workers ([`Self::check_blocking`]).
    pub fn check(&self, runner: &Runner) -> Result<(), Untrusted> {
        self.check_kept(runner).map(|_| ())
    }

    /// [`Self::check`], which also gives each file's content exactly as it was read and
    /// found trusted: what is run must be these bytes, since the file could change
    /// between the check and the moment a program opens it again.
    pub fn check_kept(&self, runner: &Runner) -> Result<Vec<(PathBuf, Vec<u8>)>, Untrusted> {
        let mut named = self.named(runner);
        // A file the user trusted that its word names but that is not there at this
        // moment (put back, renamed, swapped by a command) is not skipped: were it back
        // by the time the program opens it, it would run unchecked. It is read, fails,
        // and refuses the run.
        {
            let trusted = lock(&self.inner.trusted);
            for path in word_paths(&runner.words, &runner.cwd) {
                if trusted.contains_key(&path) && !named.contains(&path) {
                    named.push(path);
                }
            }
        }
        let read: Vec<(PinnedFile, Option<Vec<u8>>)> =
            named.iter().map(|p| PinnedFile::read_keeping(p)).collect();
        let files = self.judge(read.iter().map(|(file, _)| file.clone()).collect());
        if files.is_empty() {
            return Ok(read
                .into_iter()
                .filter_map(|(file, bytes)| Some((file.path, bytes?)))
                .collect());
        }
        self.register(runner.clone());
        let mut fresh = false;
        {
            let mut asked = lock(&self.inner.asked);
            // Every file recorded as asked about, not only up to the first new one.
            for (file, _) in &files {
                fresh |= asked.insert((file.path.clone(), file.sha256.clone()));
            }
        }
        if fresh {
            let request = TrustRequest {
                workspace: self.inner.workspace.clone(),
                files: self.pending(),
                ..TrustRequest::default()
            };
            if !request.is_empty() {
                self.inner
                    .events
                    .send(RuntimeEvent::TrustRequest { request });
            }
        }
        Err(Untrusted {
            label: runner.label.clone(),
            files,
        })
    }

    /// [`Self::check_kept`] on a blocking thread.
    pub async fn check_blocking(
        &self,
        runner: &Runner,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, Untrusted> {
        let trust = self.clone();
        let runner = runner.clone();
        tokio::task::spawn_blocking(move || trust.check_kept(&runner))
            .await
            .unwrap_or_else(|_| {
                Err(Untrusted {
                    label: "a hook or server".into(),
                    files: Vec::new(),
                })
            })
    }

    /// The files known runners name whose content is not trusted now, with what runs
    /// each: what the client asks about.
    pub fn pending(&self) -> Vec<FileQuestion> {
        let runners = lock(&self.inner.runners).clone();
        let mut questions: Vec<FileQuestion> = Vec::new();
        for runner in &runners {
            for (file, changed) in self.untrusted(runner) {
                match questions.iter_mut().find(|q| q.file.path == file.path) {
                    Some(question) => question.run_by.push(runner.label.clone()),
                    None => questions.push(FileQuestion {
                        file,
                        run_by: vec![runner.label.clone()],
                        changed,
                    }),
                }
            }
        }
        questions
    }

    /// For the modes that cannot ask: one warning per workspace file a known runner runs
    /// whose content is not trusted, so that it will not run.
    pub fn untrusted_warnings(&self) -> Vec<String> {
        self.pending()
            .iter()
            .map(|q| {
                format!(
                    "{} will not run: {} {} (sha256 {}); start claw-tui in this workspace to \
                     review it",
                    q.run_by.join(" and "),
                    q.file.path.display(),
                    if q.changed {
                        "changed since you trusted it"
                    } else {
                        "was never trusted"
                    },
                    q.file.short_hash()
                )
            })
            .collect()
    }

    /// Trusts `files` with the content each held when shown, for this session and in
    /// the store (a failure to save still trusts them for this session).
    pub fn allow(&self, files: &[PinnedFile]) -> std::io::Result<()> {
        let trusted = self.allow_for_session(files);
        match &self.inner.store {
            Some(store) => store.update(&self.inner.workspace, |w| w.files.extend(trusted)),
            None => Ok(()),
        }
    }

    /// Trusts `files` for this session only (`--trust-project-mcp`); returns them as
    /// path → hash.
    pub fn allow_for_session(&self, files: &[PinnedFile]) -> Vec<(PathBuf, String)> {
        let pairs: Vec<(PathBuf, String)> = files
            .iter()
            .filter_map(|f| Some((f.path.clone(), f.sha256.clone()?)))
            .collect();
        lock(&self.inner.trusted).extend(pairs.iter().cloned());
        self.inner.changed.send_modify(|n| *n += 1);
        pairs
    }

    /// Changes each time something is trusted.
    pub fn changed(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// The store the answers are kept in (none for [`Self::in_memory`]).
    pub fn store(&self) -> Option<&TrustStore> {
        self.inner.store.as_ref()
    }
}

impl fmt::Debug for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trust")
            .field("workspace", &self.inner.workspace)
            .field("runners", &lock(&self.inner.runners).len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(ws: &Path, command: &str) -> Runner {
        Runner {
            label: format!("hook `{command}`"),
            words: command.split(' ').map(str::to_owned).collect(),
            cwd: ws.to_path_buf(),
        }
    }

    #[test]
    fn a_trusted_file_missing_at_the_check_refuses_the_run() {
        // Absent for a moment (put back, swapped): were it skipped, the program would
        // open whatever is there when it runs, unchecked.
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("hook.sh"), "exit 0").unwrap();
        let trust = Trust::in_memory(&ws);
        trust.allow_for_session(&[PinnedFile::read(&ws.join("hook.sh"))]);
        let hook = runner(&ws, "sh hook.sh");
        let kept = trust.check_kept(&hook).unwrap();
        assert_eq!(kept.len(), 1);
        std::fs::remove_file(ws.join("hook.sh")).unwrap();
        assert!(trust.check_kept(&hook).is_err());
    }

    #[test]
    fn a_file_runs_only_with_the_content_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("hook.sh"), "exit 0").unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let trust = Trust::open(&ws, &ws.join("data"), RuntimeEventSender::new(tx));
        let hook = runner(&ws, "sh hook.sh");
        trust.register(hook.clone());
        assert_eq!(trust.pinned_paths(), [ws.join("hook.sh")]);
        assert!(runner(&ws, "true").words.len() == 1 && trust.check(&runner(&ws, "true")).is_ok());

        // Never trusted: refused, and asked once.
        let refused = trust.check(&hook).unwrap_err();
        assert!(refused.to_string().contains("never trusted"), "{refused}");
        let Ok(RuntimeEvent::TrustRequest { request }) = rx.try_recv() else {
            panic!("not asked")
        };
        assert_eq!(request.files.len(), 1);
        assert!(trust.check(&hook).is_err());
        assert!(rx.try_recv().is_err(), "asked twice about the same content");

        // Trusted as shown: runs, also in a new process (the store).
        trust.allow(&[request.files[0].file.clone()]).unwrap();
        assert!(trust.check(&hook).is_ok());
        let again = Trust::open(&ws, &ws.join("data"), RuntimeEventSender::discard());
        assert!(again.check(&hook).is_ok());

        // Changed: refused again, and asked about the new content.
        std::fs::write(ws.join("hook.sh"), "rm -rf ~").unwrap();
        let refused = again.check(&hook).unwrap_err();
        assert!(refused.files[0].1, "not seen as a change");
        assert!(refused.to_string().contains("changed since you trusted it"));
        assert!(trust.check(&hook).is_err());
        assert!(matches!(
            rx.try_recv(),
            Ok(RuntimeEvent::TrustRequest { .. })
        ));
    }
}
