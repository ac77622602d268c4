//! The checkpoint store of one session, beside its file: `<session>.checkpoints/` holds
//! `index.jsonl` (one record per line, appended as changes happen) and `blobs/<sha256>`
//! (each content stored once, whichever turn and file it came from). Everything is
//! private: 0600 files in 0700 directories.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The index file's name inside the store.
const INDEX: &str = "index.jsonl";
/// The blob directory's name inside the store.
const BLOBS: &str = "blobs";

/// What a file held at a point: nothing, a stored content, or a content not kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Blob {
    /// The file did not exist.
    Absent,
    /// This content (its SHA-256, hex), stored under `blobs/` unless `stored` is false.
    Content {
        /// The content's SHA-256.
        sha256: String,
        /// Whether the content itself is in the store (only its hash otherwise).
        #[serde(default = "yes")]
        stored: bool,
    },
    /// The file existed, but its content was not kept: too large, not a regular file,
    /// or it could not be stored (`reason`, e.g. a full disk).
    NotKept {
        /// Why, when it is not the size or the kind of file (older records have none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

fn yes() -> bool {
    true
}

impl Blob {
    /// Whether `current` (`None`: no file) is this state.
    pub fn matches(&self, current: Option<&[u8]>) -> bool {
        match (self, current) {
            (Blob::Absent, None) => true,
            (Blob::Content { sha256, .. }, Some(bytes)) => *sha256 == hash(bytes),
            _ => false,
        }
    }
}

/// One line of `index.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A turn made its first change: the prompt it belongs to.
    Turn {
        /// The turn's number in the store (never reused).
        turn: u64,
        /// Where the prompt is in the conversation (the messages before it).
        message_index: usize,
        /// The prompt's timestamp (ms), which tells turns apart after a rewind.
        prompt_ts: u64,
        /// The prompt's text, shortened.
        prompt: String,
    },
    /// The content of `path` before `turn` first changed it.
    Before {
        /// The turn.
        turn: u64,
        /// The file, absolute.
        path: PathBuf,
        /// What it held.
        blob: Blob,
    },
    /// What `turn` left in `path` (the latest of its changes).
    After {
        /// The turn.
        turn: u64,
        /// The file, absolute.
        path: PathBuf,
        /// What it holds now (hash only).
        blob: Blob,
    },
    /// `turn` ran a command; `changed` are the files `git status` shows it changed.
    Exec {
        /// The turn.
        turn: u64,
        /// The command.
        command: String,
        /// Whether the workspace is in a git repository (else `changed` is unknown).
        git: bool,
        /// The files it changed, absolute.
        #[serde(default)]
        changed: Vec<String>,
    },
    /// The files of these turns were put back as they were before them.
    Undone {
        /// The turns.
        turns: Vec<u64>,
        /// When (ms).
        at: u64,
    },
}

/// One file a turn changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRecord {
    /// Before the turn's first change.
    pub before: Blob,
    /// After its latest change.
    pub after: Blob,
}

/// One command a turn ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRecord {
    /// The command.
    pub command: String,
    /// Whether `changed` is known (a git repository).
    pub git: bool,
    /// Files it changed, per `git status`.
    pub changed: Vec<String>,
}

/// A turn as the store knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRecord {
    /// Its number in the store.
    pub id: u64,
    /// Where its prompt is in the conversation.
    pub message_index: usize,
    /// Its prompt's timestamp.
    pub prompt_ts: u64,
    /// Its prompt, shortened.
    pub prompt: String,
    /// The files it changed with the file tools, by absolute path.
    pub files: BTreeMap<PathBuf, FileRecord>,
    /// The commands it ran.
    pub execs: Vec<ExecRecord>,
    /// Whether its files were put back already.
    pub undone: bool,
}

/// An open store: the folded index, and where to append.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    /// The private directory the store lives under (the data dir), for `create_dir`.
    top: PathBuf,
    turns: Vec<TurnRecord>,
    /// Problems met while reading it (a torn last line).
    pub warnings: Vec<String>,
}

/// The SHA-256 of `bytes`, hex.
pub fn hash(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The store of the session file `session`: `<session without .jsonl>.checkpoints`.
pub fn store_dir(session: &Path) -> PathBuf {
    let mut name = session
        .file_stem()
        .map(|s| s.to_os_string())
        .unwrap_or_default();
    name.push(".checkpoints");
    session.with_file_name(name)
}

impl Store {
    /// Opens (or starts) the store at `dir`, below the private directory `top`; nothing
    /// is created on disk until the first record.
    pub fn open(dir: PathBuf, top: PathBuf) -> Self {
        let mut store = Store {
            dir,
            top,
            turns: Vec::new(),
            warnings: Vec::new(),
        };
        store.read_index();
        store
    }

    fn read_index(&mut self) {
        let path = self.dir.join(INDEX);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) => {
                self.warnings.push(format!(
                    "cannot read the checkpoints {}: {e}",
                    path.display()
                ));
                return;
            }
        };
        let lines: Vec<&str> = text.split_terminator('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            match serde_json::from_str::<Record>(line) {
                Ok(record) => self.fold(record),
                Err(e) => self.warnings.push(format!(
                    "{}: line {} cannot be read and was skipped ({e}){}",
                    path.display(),
                    i + 1,
                    if i + 1 == lines.len() {
                        "; the process probably stopped while writing it"
                    } else {
                        ""
                    }
                )),
            }
        }
    }

    /// The turns, oldest first.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }

    /// The turn `id`.
    pub fn turn(&self, id: u64) -> Option<&TurnRecord> {
        self.turns.iter().find(|t| t.id == id)
    }

    fn turn_mut(&mut self, id: u64) -> Option<&mut TurnRecord> {
        self.turns.iter_mut().find(|t| t.id == id)
    }

    fn fold(&mut self, record: Record) {
        match record {
            Record::Turn {
                turn,
                message_index,
                prompt_ts,
                prompt,
            } => self.turns.push(TurnRecord {
                id: turn,
                message_index,
                prompt_ts,
                prompt,
                files: BTreeMap::new(),
                execs: Vec::new(),
                undone: false,
            }),
            Record::Before { turn, path, blob } => {
                if let Some(t) = self.turn_mut(turn) {
                    t.files.entry(path).or_insert(FileRecord {
                        after: blob.clone(),
                        before: blob,
                    });
                }
            }
            Record::After { turn, path, blob } => {
                if let Some(file) = self.turn_mut(turn).and_then(|t| t.files.get_mut(&path)) {
                    file.after = blob;
                }
            }
            Record::Exec {
                turn,
                command,
                git,
                changed,
            } => {
                if let Some(t) = self.turn_mut(turn) {
                    t.execs.push(ExecRecord {
                        command,
                        git,
                        changed,
                    });
                }
            }
            Record::Undone { turns, .. } => {
                for id in turns {
                    if let Some(t) = self.turn_mut(id) {
                        t.undone = true;
                    }
                }
            }
        }
    }

    /// Appends `record` to the index and applies it; nothing is applied when it cannot
    /// be written.
    pub fn append(&mut self, record: Record) -> io::Result<()> {
        self.write(&record)?;
        self.fold(record);
        Ok(())
    }

    /// Applies `record` without writing it: one that could not be written (a full
    /// disk) about a change made all the same, so an undo in this process still knows
    /// of it and can name what it cannot restore.
    pub fn remember(&mut self, record: Record) {
        self.fold(record);
    }

    fn write(&self, record: &Record) -> io::Result<()> {
        crate::private_fs::create_dir(&self.top, &self.dir)?;
        let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
        line.push('\n');
        let mut file = crate::private_fs::open(
            &self.dir.join(INDEX),
            OpenOptions::new().create(true).read(true).append(true),
        )?;
        // A crash may have left a torn last line: this record starts a line of its own
        // rather than joining the fragment (which the reader then skips alone).
        if crate::private_fs::ends_mid_line(&file)? {
            line.insert(0, '\n');
        }
        // One write per record: a crash leaves at most a torn last line.
        file.write_all(line.as_bytes())
    }

    /// The index file, when it should be there but is not: the store was made (its
    /// directory exists, which happens with the first record) and the index is gone.
    /// The turns it recorded are unknown, not absent.
    pub fn missing_index(&self) -> Option<PathBuf> {
        let index = self.dir.join(INDEX);
        (self.dir.is_dir() && !index.exists()).then_some(index)
    }

    /// A new turn's number.
    pub fn next_turn_id(&self) -> u64 {
        self.turns.iter().map(|t| t.id).max().map_or(1, |m| m + 1)
    }

    /// Keeps `bytes` (once per content) and returns its state.
    pub fn keep(&self, bytes: &[u8]) -> io::Result<Blob> {
        let sha256 = hash(bytes);
        let blobs = self.dir.join(BLOBS);
        let path = blobs.join(&sha256);
        if !path.exists() {
            crate::private_fs::create_dir(&self.top, &blobs)?;
            // Written beside, then renamed: a blob is either whole or absent.
            let tmp = blobs.join(format!(".{sha256}.{:08x}.tmp", fastrand::u32(..)));
            let mut file =
                crate::private_fs::open(&tmp, OpenOptions::new().write(true).create_new(true))?;
            let written = file
                .write_all(bytes)
                .and_then(|()| file.sync_all())
                .and_then(|()| std::fs::rename(&tmp, &path));
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written?;
        }
        Ok(Blob::Content {
            sha256,
            stored: true,
        })
    }

    /// The content of a stored blob; an error when it is missing or damaged.
    pub fn content(&self, blob: &Blob) -> io::Result<Option<Vec<u8>>> {
        match blob {
            Blob::Absent => Ok(None),
            Blob::NotKept {
                reason: Some(reason),
            } => Err(io::Error::other(format!(
                "its earlier content could not be kept ({reason})"
            ))),
            Blob::NotKept { reason: None } | Blob::Content { stored: false, .. } => {
                Err(io::Error::other(
                    "its earlier content was not kept (too large or not a regular file)",
                ))
            }
            Blob::Content { sha256, .. } => {
                let bytes = std::fs::read(self.dir.join(BLOBS).join(sha256))?;
                if hash(&bytes) != *sha256 {
                    return Err(io::Error::other("its stored content is damaged"));
                }
                Ok(Some(bytes))
            }
        }
    }

    /// Where the store is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_fold_and_survive_reopening() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = store_dir(&tmp.path().join("s/2024_abc.jsonl"));
        assert!(dir.ends_with("s/2024_abc.checkpoints"));
        let mut store = Store::open(dir.clone(), tmp.path().to_path_buf());
        let blob = store.keep(b"old\n").unwrap_or_else(|e| panic!("{e}"));
        let id = store.next_turn_id();
        let records = [
            Record::Turn {
                turn: id,
                message_index: 0,
                prompt_ts: 5,
                prompt: "fix".into(),
            },
            Record::Before {
                turn: id,
                path: "/w/a".into(),
                blob: blob.clone(),
            },
            Record::After {
                turn: id,
                path: "/w/a".into(),
                blob: Blob::Absent,
            },
            Record::Undone {
                turns: vec![id],
                at: 9,
            },
        ];
        for record in records {
            store.append(record).unwrap_or_else(|e| panic!("{e}"));
        }
        let again = Store::open(dir, tmp.path().to_path_buf());
        assert_eq!(again.turns(), store.turns());
        let turn = &again.turns()[0];
        assert!(turn.undone);
        assert_eq!(turn.files[Path::new("/w/a")].before, blob);
        assert_eq!(
            again.content(&blob).unwrap_or_default().as_deref(),
            Some(&b"old\n"[..])
        );
        assert!(blob.matches(Some(b"old\n")) && !blob.matches(None));
    }

    #[test]
    fn a_record_after_a_torn_line_starts_a_line_of_its_own() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = store_dir(&tmp.path().join("s/2024_abc.jsonl"));
        let mut store = Store::open(dir.clone(), tmp.path().to_path_buf());
        let turn = |turn, prompt: &str| Record::Turn {
            turn,
            message_index: 0,
            prompt_ts: 5,
            prompt: prompt.into(),
        };
        store
            .append(turn(1, "first"))
            .unwrap_or_else(|e| panic!("{e}"));
        let index = dir.join(INDEX);
        let mut torn = std::fs::OpenOptions::new()
            .append(true)
            .open(&index)
            .unwrap_or_else(|e| panic!("{e}"));
        torn.write_all(br#"{"type":"turn","tu"#)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut store = Store::open(dir.clone(), tmp.path().to_path_buf());
        store
            .append(turn(2, "second"))
            .unwrap_or_else(|e| panic!("{e}"));
        let again = Store::open(dir, tmp.path().to_path_buf());
        let prompts: Vec<&str> = again.turns().iter().map(|t| t.prompt.as_str()).collect();
        assert_eq!(prompts, ["first", "second"]);
    }
}
