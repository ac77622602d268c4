//! The workspace the file tools are confined to.
//!
//! Every path a file tool touches is opened relative to a directory handle held open
//! for the tree it belongs to (the workspace, or the whole filesystem when the user
//! allows paths outside), through `cap-std`: on Linux that is `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, so the kernel itself refuses a `..`, an
//! absolute symlink or a `/proc` magic link that would lead out of the tree, at the
//! moment of the open. Working out the path from its text first (`real_path`) only
//! picks the tree and words the messages; a symlink swapped in meanwhile cannot take an
//! open outside.

mod located;
mod real_path;

pub use located::Located;

use super::protected::Protected;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use real_path::real_path;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// What a file tool means to do at a path; a read-only tree never serves a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reading a file or listing a directory.
    Read,
    /// Creating, replacing or editing a file.
    Write,
}

/// One directory tree the file tools may reach, held open.
#[derive(Clone, Debug)]
struct Tree {
    /// Absolute, symlinks resolved.
    path: PathBuf,
    /// The handle every path in the tree is opened beneath, or why it could not be opened.
    dir: Result<Arc<Dir>, Arc<std::io::Error>>,
    writable: bool,
}

impl Tree {
    fn open(path: PathBuf, writable: bool) -> Self {
        let dir = Dir::open_ambient_dir(&path, ambient_authority())
            .map(Arc::new)
            .map_err(Arc::new);
        Self {
            path,
            dir,
            writable,
        }
    }
}

/// A directory that tool paths resolve against and, unless opted out, must stay inside.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: Tree,
    /// Trees outside the workspace the tools may also reach, tried in order: read-only
    /// ones added with [`Self::with_read_only`], then the whole filesystem when
    /// `allow_outside` is set.
    others: Vec<Tree>,
    allow_outside: bool,
    /// The paths no write may reach, wherever the tree allows writing.
    protected: Arc<Protected>,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        let paths = |w: &Self| -> Vec<(PathBuf, bool)> {
            w.others
                .iter()
                .map(|t| (t.path.clone(), t.writable))
                .collect()
        };
        self.root.path == other.root.path
            && self.allow_outside == other.allow_outside
            && paths(self) == paths(other)
            && self.protected == other.protected
    }
}

impl Eq for Workspace {}

impl Workspace {
    /// A workspace at `root` (made absolute, symlinks resolved) and held open;
    /// `allow_outside` lifts the confinement. A root that cannot be opened makes every
    /// file tool call fail with the reason.
    pub fn new(root: impl Into<PathBuf>, allow_outside: bool) -> Self {
        let root = absolute(root.into());
        let root = real_path(&root).unwrap_or(root);
        let mut others = Vec::new();
        if allow_outside {
            others.push(Tree::open(PathBuf::from("/"), true));
        }
        let protected = Arc::new(Protected::for_workspace(&root));
        Self {
            root: Tree::open(root, true),
            others,
            allow_outside,
            protected,
        }
    }

    /// This workspace, with `paths` (absolute: files that a hook or a trusted MCP server
    /// runs) protected from writes as well.
    pub fn with_pinned(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        let protected = Arc::make_mut(&mut self.protected);
        for path in paths {
            let path = real_path(&path).unwrap_or(path);
            protected.pin(path);
        }
        self
    }

    /// This workspace, with claw-tui's own directories `dirs` (absolute: config, data,
    /// state) and everything beneath them protected from writes, wherever they are.
    pub fn with_own_dirs(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let protected = Arc::make_mut(&mut self.protected);
        for dir in dirs {
            protected.own(real_path(&dir).unwrap_or(dir));
        }
        self
    }

    /// The paths of this workspace that are read-only to the model.
    pub fn protected(&self) -> &Protected {
        &self.protected
    }

    /// This workspace, plus the tree at `path` (outside it) that file tools may read but
    /// never write; held open like the workspace, so a symlink in it cannot lead further
    /// out. Meant for files kept elsewhere that the agent needs to read.
    pub fn with_read_only(mut self, path: impl Into<PathBuf>) -> Self {
        let path = absolute(path.into());
        let path = real_path(&path).unwrap_or(path);
        // Before the whole filesystem, so a write there is still allowed when it is.
        let at = self.others.len() - usize::from(self.allow_outside);
        self.others.insert(at, Tree::open(path, false));
        self
    }

    /// The workspace directory, absolute and with symlinks resolved.
    pub fn root(&self) -> &Path {
        &self.root.path
    }

    /// Whether paths outside the workspace are allowed.
    pub fn allows_outside(&self) -> bool {
        self.allow_outside
    }

    /// Finds where `path` (relative to the root, absolute, or `~/...`) leads and the
    /// held-open tree to open it in, for `access`; refuses a path that leads outside
    /// every tree the tools may reach. The tree's handle does the actual confining.
    pub fn locate(&self, path: impl AsRef<Path>, access: Access) -> Result<Located, Refusal> {
        let shown = path.as_ref();
        let expanded = self.expand_home(shown)?;
        let joined = if expanded.is_absolute() {
            expanded
        } else {
            self.root.path.join(expanded)
        };
        let real = real_path(&joined).map_err(|e| {
            Refusal::Unresolvable(format!(
                "Cannot resolve {}: {e}. Use a path inside the workspace {}.",
                shown.display(),
                self.root.path.display()
            ))
        })?;
        let trees = std::iter::once(&self.root).chain(&self.others);
        let mut read_only = None;
        for tree in trees {
            let Ok(rel) = real.strip_prefix(&tree.path) else {
                continue;
            };
            if access == Access::Write && !tree.writable {
                read_only.get_or_insert(&tree.path);
                continue;
            }
            if access == Access::Write {
                self.protected
                    .check(&real)
                    .map_err(|refused| Refusal::Protected(refused.to_string()))?;
            }
            let dir = tree.dir.clone().map_err(|e| {
                Refusal::Unavailable(format!(
                    "Error: cannot open {}: {e}. The file tools cannot work there until \
                     it is usable.",
                    tree.path.display()
                ))
            })?;
            return Ok(Located {
                dir,
                rel: rel.to_path_buf(),
                path: real.clone(),
                tree: tree.path.clone(),
                workspace: self.root.path.clone(),
                protected: self.protected.clone(),
            });
        }
        if let Some(tree) = read_only {
            return Err(Refusal::ReadOnly(format!(
                "Access denied: {} is in {}, which the file tools may read but not change.",
                shown.display(),
                tree.display()
            )));
        }
        Err(Refusal::Outside(format!(
            "Access denied: {} resolves to {}, which is outside the workspace {}. Use a path \
             inside the workspace (relative paths start there); to allow this, the user can \
             set allow_outside_workspace = true under [tools] in the config.",
            shown.display(),
            real.display(),
            self.root.path.display()
        )))
    }

    /// Replaces a leading `~` with the home directory.
    fn expand_home(&self, path: &Path) -> Result<PathBuf, Refusal> {
        let mut components = path.components();
        if components.next() != Some(Component::Normal("~".as_ref())) {
            return Ok(path.to_path_buf());
        }
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                Refusal::Unresolvable(format!(
                    "Cannot resolve {}: the home directory (HOME) is not set. Use a path \
                     inside the workspace {}.",
                    path.display(),
                    self.root.path.display()
                ))
            })?;
        Ok(PathBuf::from(home).join(components.as_path()))
    }
}

/// `path` made absolute against the current directory.
fn absolute(path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        return path;
    }
    // Without a current directory the relative path is the best we have.
    std::env::current_dir().map_or_else(|_| path.clone(), |cwd| cwd.join(&path))
}

/// Why [`Workspace::locate`] refused a path; its text is written for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path leads outside every tree the tools may reach.
    Outside(String),
    /// The path leads into a tree the tools may only read, for a write.
    ReadOnly(String),
    /// The path cannot be worked out (a symlink loop, no `HOME` for `~`).
    Unresolvable(String),
    /// The tree the path is in cannot be opened.
    Unavailable(String),
    /// The path is configuration that is read-only to the model (see [`Protected`]).
    Protected(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Self::Outside(text)
        | Self::ReadOnly(text)
        | Self::Unresolvable(text)
        | Self::Unavailable(text)
        | Self::Protected(text)) = self;
        f.write_str(text)
    }
}

impl std::error::Error for Refusal {}

/// Whether `e` is the refusal of an open that would have left its tree: the kernel's
/// `EXDEV` from `RESOLVE_BENEATH`, which cap-std reports as a permission error without
/// an OS code.
pub fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none()
}

/// The directories whose instructions apply, nearest last: from the git root (or the
/// workspace alone when it is not in a repository) down to the workspace.
pub fn project_chain(workspace: &Path) -> Vec<PathBuf> {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let chain: Vec<PathBuf> = match workspace.ancestors().position(is_git_root) {
        Some(root) => workspace
            .ancestors()
            .take(root + 1)
            .map(Path::to_path_buf)
            .collect(),
        None => vec![workspace.clone()],
    };
    chain.into_iter().rev().collect()
}

fn is_git_root(dir: &Path) -> bool {
    // `.git` is a directory in a clone and a file in a worktree or submodule.
    dir.join(".git").exists()
}

/// A directory-name-safe slug for a workspace path: readable tail plus a hash of the
/// full path, so two workspaces with the same name stay apart.
pub fn workspace_slug(workspace: &Path) -> String {
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let hash = workspace
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{name}-{:08x}", hash as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Layout {
        _dir: tempfile::TempDir,
        outer: PathBuf,
        ws: Workspace,
    }

    fn layout() -> Layout {
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path().canonicalize().unwrap();
        std::fs::create_dir(outer.join("ws")).unwrap();
        std::fs::write(outer.join("secret.txt"), "top secret\n").unwrap();
        let ws = Workspace::new(outer.join("ws"), false);
        Layout {
            _dir: dir,
            outer,
            ws,
        }
    }

    /// A `Located` whose path inside the workspace was not checked at all: only the
    /// handle stands between it and the outside.
    fn unchecked(ws: &Workspace, rel: &str) -> Located {
        Located {
            dir: ws.root.dir.clone().unwrap(),
            rel: PathBuf::from(rel),
            path: ws.root().join(rel),
            tree: ws.root().to_path_buf(),
            workspace: ws.root().to_path_buf(),
            protected: ws.protected.clone(),
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_handle_refuses_escapes_the_text_never_saw() {
        let l = layout();
        std::os::unix::fs::symlink(&l.outer, l.ws.root().join("out")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", l.ws.root().join("up")).unwrap();
        for rel in ["out/secret.txt", "up", "../secret.txt", "nope/../up"] {
            let located = unchecked(&l.ws, rel);
            let err = located.dir().open(located.rel()).unwrap_err();
            assert!(
                is_escape(&err) || err.kind() == io::ErrorKind::NotFound,
                "{rel}: {err}"
            );
            let err = located
                .dir()
                .write(located.rel(), "x")
                .expect_err("a write through an escaping path");
            assert!(
                is_escape(&err) || err.kind() == io::ErrorKind::NotFound,
                "{rel}: {err}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(l.outer.join("secret.txt")).unwrap(),
            "top secret\n"
        );
        // An ordinary permission error is not taken for an escape.
        assert!(!is_escape(&io::Error::from_raw_os_error(13)));
    }

    #[test]
    fn read_only_trees_serve_reads_but_refuse_writes() {
        let l = layout();
        std::fs::create_dir(l.outer.join("skills")).unwrap();
        std::fs::write(l.outer.join("skills/a.md"), "skill").unwrap();
        let ws = l.ws.clone().with_read_only(l.outer.join("skills"));
        let skill = l.outer.join("skills/a.md");
        let found = ws.locate(&skill, Access::Read).unwrap();
        assert_eq!(found.rel(), Path::new("a.md"));
        assert_eq!(found.dir().read_to_string(found.rel()).unwrap(), "skill");
        let refused = ws.locate(&skill, Access::Write).unwrap_err();
        assert!(matches!(refused, Refusal::ReadOnly(_)), "{refused}");
        // Beside the read-only tree is still outside.
        let outside = ws.locate(l.outer.join("secret.txt"), Access::Read);
        assert!(matches!(outside, Err(Refusal::Outside(_))), "{outside:?}");
        // When the user allows the outside, writes there go through the whole filesystem.
        let open = Workspace::new(l.ws.root(), true).with_read_only(l.outer.join("skills"));
        let found = open.locate(&skill, Access::Write).unwrap();
        assert_eq!(found.rel(), skill.strip_prefix("/").unwrap());
    }

    #[test]
    fn protected_paths_are_read_but_never_written() {
        let l = layout();
        std::fs::create_dir_all(l.ws.root().join(".git/hooks")).unwrap();
        std::fs::write(l.ws.root().join("hook.sh"), "true").unwrap();
        let ws = l.ws.clone().with_pinned([l.ws.root().join("hook.sh")]);
        for rel in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".mcp.json",
            "hook.sh",
        ] {
            assert!(ws.locate(rel, Access::Read).is_ok(), "{rel}");
            let refused = ws.locate(rel, Access::Write).unwrap_err();
            assert!(matches!(refused, Refusal::Protected(_)), "{rel}: {refused}");
        }
        // A symlink does not launder a protected target.
        std::os::unix::fs::symlink(".git/config", l.ws.root().join("innocent")).unwrap();
        let refused = ws.locate("innocent", Access::Write).unwrap_err();
        assert!(matches!(refused, Refusal::Protected(_)), "{refused}");
        assert!(ws.locate(".claw-tui/MEMORY.md", Access::Write).is_ok());
        assert!(ws.locate(".git/index", Access::Write).is_ok());
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_locate_is_caught_on_the_handle() {
        let l = layout();
        let root = l.ws.root();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        let located = l.ws.locate("build/pre-commit", Access::Write).unwrap();
        let (parent, name) = located.parent_and_name().unwrap();
        let held = located.dir().open_dir(parent).unwrap();
        assert!(located.check_held(&held, name).is_ok());
        // A command swaps the directory for a link into the repository's hooks.
        std::fs::remove_dir(root.join("build")).unwrap();
        std::os::unix::fs::symlink(".git/hooks", root.join("build")).unwrap();
        let held = located.dir().open_dir(parent).unwrap();
        let refused = located.check_held(&held, name).unwrap_err();
        assert!(matches!(refused, Refusal::Protected(_)), "{refused}");
    }

    #[test]
    fn a_root_that_cannot_be_opened_is_reported_on_use() {
        let l = layout();
        let ws = Workspace::new(l.outer.join("missing"), false);
        let err = ws.locate("f", Access::Read).unwrap_err();
        assert!(matches!(err, Refusal::Unavailable(_)), "{err}");
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
