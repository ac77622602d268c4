//! The protected paths (`crate::protected`) around a command: read-only to it.
//!
//! Those that exist are held by the launcher in the command's mount namespace
//! ([`Plan::guards`]): bound read-only onto themselves, the `.git` directory pinned
//! (bound onto itself, so `mv .git x && mkdir .git` fails) and `.claw-tui/MEMORY.md`
//! pinned writable inside the read-only `.claw-tui`. What cannot be mounted over is
//! checked after the command ([`Watch::settle`]): a protected path that did not exist
//! and was created is moved aside next to itself (`NAME.quarantined-TIMESTAMP`), and a
//! symlink that was one is put back. A new `.git` stays when it is a plain new
//! repository (git_init.rs), so `git init` works. Where the command gets no mount
//! namespace, the check covers everything: each protected path is recorded with its
//! content before the command and put back after it if it changed.
//!
//! All of it goes through directory handles that never follow a symlink.

mod git_init;
mod links;
mod nested;
mod snapshot;
#[cfg(test)]
mod tests;

pub(super) use links::separate;

use super::launcher::{Guard, GuardKind};
use crate::protected::{
    MODEL_WRITABLE, PROTECTED_DIRS, PROTECTED_FILES, PROTECTED_GIT_ENTRIES, Protected,
};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use snapshot::Tree;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What to do about the protected paths for one command.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Held in the command's mount namespace, parents first.
    pub guards: Vec<Guard>,
    /// Checked after the command.
    pub watch: Watch,
}

/// Protected paths as they were before the command.
#[derive(Clone, Debug, Default)]
pub(super) struct Watch {
    items: Vec<Item>,
    /// The workspace and the protected entries below its top before the command
    /// (`nested.rs`); `None` where the tree was too large to walk.
    nested: Option<(PathBuf, std::collections::BTreeSet<PathBuf>)>,
    /// The protected paths and where a command may write: to look for protected files
    /// given another name.
    links: Option<(Protected, Vec<PathBuf>)>,
}

#[derive(Clone, Debug)]
struct Item {
    /// A directory claw-tui trusts (the workspace or one above it).
    root: PathBuf,
    /// The path beneath it.
    rel: PathBuf,
    /// Everything beneath it recorded too.
    deep: bool,
    before: Option<Tree>,
}

/// Every path that is protected when it exists, as (root, path beneath it): in each
/// root, the protected names and the git directory's protected entries, and the pinned
/// files in the workspace.
fn candidates(protected: &Protected) -> Vec<(PathBuf, PathBuf)> {
    let mut found = Vec::new();
    for root in protected.roots() {
        for name in PROTECTED_DIRS
            .iter()
            .chain(&PROTECTED_FILES)
            .chain(&[".git"])
        {
            found.push((root.clone(), PathBuf::from(name)));
        }
        if root
            .join(".git")
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir())
        {
            for entry in PROTECTED_GIT_ENTRIES {
                found.push((root.clone(), Path::new(".git").join(entry)));
            }
        }
    }
    if let Some(workspace) = protected.roots().first() {
        for pinned in protected.pinned() {
            if let Ok(rel) = pinned.strip_prefix(workspace) {
                found.push((workspace.clone(), rel.to_path_buf()));
            }
        }
    }
    found
}

/// Plans the protection; `fallback`: no mount namespace is expected to hold, so every
/// protected path is recorded with its content.
pub(super) fn plan(protected: &Protected, fallback: bool) -> Plan {
    let mut plan = Plan::default();
    for (root, rel) in candidates(protected) {
        let path = root.join(&rel);
        let meta = path.symlink_metadata();
        let exists = meta.is_ok();
        let link = meta.as_ref().is_ok_and(|m| m.is_symlink());
        let git_dir = rel == Path::new(".git") && meta.as_ref().is_ok_and(|m| m.is_dir());
        if exists && !link {
            if protected.pinned().contains(&path) {
                pin_parents(protected, &root, &rel, &mut plan.guards);
            }
            let kind = if git_dir {
                GuardKind::Pin
            } else {
                GuardKind::ReadOnly
            };
            plan.guards.push(Guard {
                path: path.clone(),
                kind,
            });
            let memory = root.join(MODEL_WRITABLE);
            if rel == Path::new(PROTECTED_DIRS[0])
                && memory.symlink_metadata().is_ok_and(|m| m.is_file())
            {
                plan.guards.push(Guard {
                    path: memory,
                    kind: GuardKind::Pin,
                });
            }
            if !fallback {
                continue;
            }
        }
        // The git directory's own contents are checked entry by entry, not whole.
        let deep = fallback && exists && !git_dir;
        let before = record(&root, &rel, deep).unwrap_or_else(|e| {
            tracing::warn!("exec: cannot record {}: {e}", path.display());
            None
        });
        plan.watch.items.push(Item {
            root,
            rel,
            deep,
            before,
        });
    }
    if let Some(workspace) = protected.roots().first()
        && let Some(found) = nested::scan(workspace)
    {
        for (rel, deep) in nested::watched(workspace, &found) {
            let before = record(workspace, &rel, deep).unwrap_or_else(|e| {
                tracing::warn!(
                    "exec: cannot record {}: {e}",
                    workspace.join(&rel).display()
                );
                None
            });
            plan.watch.items.push(Item {
                root: workspace.clone(),
                rel,
                deep,
                before,
            });
        }
        plan.watch.nested = Some((workspace.clone(), found));
    }
    plan
}

/// Pins each directory between `root` (the workspace) and the pinned file `rel` in it,
/// so that none can be renamed or replaced while a command runs: the file's own bind
/// holds its content, but swapping a directory above it for another would put other
/// content at its path. Directories that are protected themselves (or beneath one) are
/// read-only already; a symlink cannot be bound (what runs is checked when it runs).
fn pin_parents(protected: &Protected, root: &Path, rel: &Path, guards: &mut Vec<Guard>) {
    let mut dir = root.to_path_buf();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        dir.push(part);
        let real_dir = dir.symlink_metadata().is_ok_and(|m| m.is_dir());
        if !real_dir {
            return;
        }
        let held = guards.iter().any(|g| g.path == dir);
        if !held && protected.check(&dir).is_ok() {
            guards.push(Guard {
                path: dir.clone(),
                kind: GuardKind::Pin,
            });
        }
    }
}

/// The parent directory of `rel` in `root`, opened without following a symlink below
/// the root, and the name in it.
fn parent(root: &Path, rel: &Path) -> io::Result<(Dir, OsString)> {
    let name = rel
        .file_name()
        .ok_or_else(|| io::Error::other("no file name"))?
        .to_owned();
    let mut dir = Dir::open_ambient_dir(root, ambient_authority())?;
    if let Some(parents) = rel.parent() {
        for part in parents.components() {
            dir = snapshot::open_subdir(&dir, part.as_os_str())?;
        }
    }
    Ok((dir, name))
}

fn record(root: &Path, rel: &Path, deep: bool) -> io::Result<Option<Tree>> {
    match parent(root, rel) {
        Ok((dir, name)) => snapshot::record(&dir, &name, deep),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What the check after a command did about one protected path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Settled {
    /// The protected path.
    pub path: PathBuf,
    /// What happened.
    pub outcome: Outcome,
}

/// What was done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// It was created; it was moved here.
    MovedAside(PathBuf),
    /// It was changed; it was put back, and what the command left moved here.
    Restored(Option<PathBuf>),
    /// A plain new git repository: it stays.
    NewRepository,
    /// It had other names (hard links); these were given copies of their own.
    Separated(Vec<PathBuf>),
    /// It has this many other names that could not be found where commands write.
    StillLinked(u64),
    /// It changed and could not be put back (or moved aside).
    Failed(String),
}

impl fmt::Display for Settled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.outcome {
            Outcome::MovedAside(to) => write!(
                f,
                "The command created {path}, which is read-only to the agent (it configures \
                 claw-tui or git and runs outside the sandbox): it was moved aside to {}. \
                 Ask the user if it is needed.",
                to.display()
            ),
            Outcome::Restored(moved) => write!(
                f,
                "The command changed {path}, which is read-only to the agent: it was put \
                 back as it was{}.",
                moved.as_ref().map_or_else(String::new, |to| format!(
                    " (what the command left there is in {})",
                    to.display()
                ))
            ),
            Outcome::Separated(others) => write!(
                f,
                "{path} is read-only to commands, but it had another name (a hard link) \
                 through which a command could write it: {} now hold{} a copy of {} own, and \
                 writing there no longer changes {path}.",
                names(others),
                if others.len() == 1 { "s" } else { "" },
                if others.len() == 1 { "its" } else { "their" },
            ),
            Outcome::StillLinked(left) => write!(
                f,
                "{path} is read-only to commands, but it has {left} other name{} (hard \
                 links) that claw-tui could not find in the workspace, through which a \
                 command could write it. Tell the user: the file needs a name of its own \
                 (`cp -p FILE FILE.new && mv FILE.new FILE`).",
                if *left == 1 { "" } else { "s" }
            ),
            Outcome::NewRepository => write!(
                f,
                "{path} is a new git repository: it stays, and its configuration and hooks \
                 are protected from now on (the file tools refuse them, and no later command \
                 keeps a change there)."
            ),
            Outcome::Failed(why) => write!(
                f,
                "The command changed {path}, which is read-only to the agent, and it could \
                 not be put back ({why}). Tell the user."
            ),
        }
    }
}

/// Paths for a sentence: `a, b and c`.
fn names(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match shown.split_last() {
        None => "no other name".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

impl Watch {
    /// Also looks for protected files of `protected` given another name beneath
    /// `search` at each check.
    pub fn with_links(mut self, protected: Protected, search: Vec<PathBuf>) -> Self {
        self.links = Some((protected, search));
        self
    }

    /// Compares every watched path with its record and puts right what changed.
    pub fn settle(&self) -> Vec<Settled> {
        let mut settled = Vec::new();
        let mut gone: Vec<&Path> = Vec::new();
        for item in &self.items {
            // The entries of a git directory that was replaced are not its own any more.
            if gone.iter().any(|root| *root == item.root) && item.rel.starts_with(".git") {
                continue;
            }
            if let Some(done) = item.settle() {
                if item.is_git_dir() && matches!(done.outcome, Outcome::Failed(_)) {
                    gone.push(&item.root);
                }
                settled.push(done);
            }
        }
        if let Some((workspace, before)) = &self.nested
            && let Some(now) = nested::scan(workspace)
        {
            for rel in now.difference(before) {
                let made = Item {
                    root: workspace.clone(),
                    rel: rel.clone(),
                    deep: false,
                    before: None,
                };
                settled.extend(made.settle());
            }
        }
        if let Some((protected, search)) = &self.links {
            settled.extend(separate(protected, search));
        }
        settled
    }
}

impl Item {
    /// An existing `.git` directory, recorded without its contents.
    fn is_git_dir(&self) -> bool {
        self.rel == Path::new(".git") && self.before.is_some()
    }

    fn settle(&self) -> Option<Settled> {
        let path = self.root.join(&self.rel);
        let settled = |outcome| {
            Some(Settled {
                path: path.clone(),
                outcome,
            })
        };
        let now = match record(&self.root, &self.rel, self.deep) {
            Ok(now) => now,
            Err(e) => return settled(Outcome::Failed(format!("cannot read it: {e}"))),
        };
        // `.claw-tui/MEMORY.md` is the model's to write, as long as it stays a file.
        let memory = self.rel == Path::new(PROTECTED_DIRS[0]);
        let memory_file = Path::new("MEMORY.md");
        let still_a_file = now.as_ref().is_none_or(|t| {
            matches!(
                t.entries.get(memory_file),
                None | Some(snapshot::Entry::File { .. })
            )
        });
        let free = |p: &Path| memory && still_a_file && p == memory_file;
        let outcome = match (&self.before, &now) {
            (None, None) => return None,
            // The git directory itself is never put back (its objects are not recorded):
            // it must still be the same directory.
            (Some(before), Some(now)) if self.is_git_dir() && before.identity != now.identity => {
                match self.move_aside() {
                    Ok(to) => Outcome::Failed(format!(
                        "the repository's git directory was replaced: the one that was \
                         there is no longer at this path, and what took its place was moved \
                         to {}",
                        to.display()
                    )),
                    Err(why) => Outcome::Failed(why),
                }
            }
            (Some(_), None) if self.is_git_dir() => Outcome::Failed(
                "the repository's git directory was moved away from this path".into(),
            ),
            (Some(_), Some(_)) if self.is_git_dir() => return None,
            (Some(before), Some(now)) if before.same(now, free) => return None,
            (None, Some(_)) if self.rel.file_name().is_some_and(|n| n == ".git") => {
                match self.new_repository() {
                    Ok(()) => Outcome::NewRepository,
                    Err(why) => {
                        tracing::warn!(
                            "exec: {} is not a plain new repository: {why}",
                            path.display()
                        );
                        self.move_aside()
                            .map_or_else(Outcome::Failed, Outcome::MovedAside)
                    }
                }
            }
            (None, Some(_)) => self
                .move_aside()
                .map_or_else(Outcome::Failed, Outcome::MovedAside),
            (Some(before), _) if !before.restorable() => {
                Outcome::Failed("it was too large to keep a copy of".into())
            }
            (Some(before), now) => self.put_back(before, now.is_some()),
        };
        settled(outcome)
    }

    fn new_repository(&self) -> Result<(), String> {
        let (dir, name) = parent(&self.root, &self.rel).map_err(|e| e.to_string())?;
        let git = snapshot::open_subdir(&dir, &name).map_err(|_| "it is not a directory")?;
        git_init::check(&git)
    }

    /// Renames the path to `NAME.quarantined-TIMESTAMP[-N]` next to it.
    fn move_aside(&self) -> Result<PathBuf, String> {
        let (dir, name) = parent(&self.root, &self.rel).map_err(|e| e.to_string())?;
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        for n in 1..100 {
            let mut aside = name.clone();
            aside.push(format!(".quarantined-{stamp}"));
            if n > 1 {
                aside.push(format!("-{n}"));
            }
            if dir.symlink_metadata(&aside).is_ok() {
                continue;
            }
            dir.rename(&name, &dir, &aside)
                .map_err(|e| format!("cannot move it aside: {e}"))?;
            let moved = self.root.join(&self.rel).with_file_name(aside);
            tracing::warn!(
                "exec: moved {} aside to {}",
                self.rel.display(),
                moved.display()
            );
            return Ok(moved);
        }
        Err("no free name to move it aside to".into())
    }

    fn put_back(&self, before: &Tree, occupied: bool) -> Outcome {
        let moved = if occupied {
            match self.move_aside() {
                Ok(to) => Some(to),
                Err(why) => return Outcome::Failed(why),
            }
        } else {
            None
        };
        let restored = parent(&self.root, &self.rel)
            .and_then(|(dir, name)| snapshot::restore(&dir, &name, before));
        match restored {
            Ok(()) => Outcome::Restored(moved),
            Err(e) => Outcome::Failed(format!("cannot restore it: {e}")),
        }
    }
}
