//! The workspace directory that file tools are confined to.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before it is taken for a loop
/// (the Linux limit).
const MAX_SYMLINK_HOPS: u32 = 40;

/// A directory that tool paths resolve against and, unless opted out, must stay inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
    allow_outside: bool,
}

impl Workspace {
    /// A workspace at `root` (made absolute, symlinks resolved); `allow_outside` lifts
    /// the confinement.
    pub fn new(root: impl Into<PathBuf>, allow_outside: bool) -> Self {
        let root = root.into();
        let absolute = if root.is_absolute() {
            root
        } else {
            // Without a current directory the relative root is the best we have.
            std::env::current_dir().map_or_else(|_| root.clone(), |cwd| cwd.join(&root))
        };
        let root = real_path(&absolute).unwrap_or(absolute);
        Self {
            root,
            allow_outside,
        }
    }

    /// The workspace directory, absolute and with symlinks resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether paths outside the workspace are allowed.
    pub fn allows_outside(&self) -> bool {
        self.allow_outside
    }

    /// Whether `path` (already resolved) lies inside the workspace.
    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    /// Resolves `path` (relative to the root, absolute, or `~/...`) to an absolute path
    /// with symlinks followed; refuses one that ends up outside the workspace.
    pub fn resolve(&self, path: impl AsRef<Path>) -> Result<PathBuf, String> {
        let path = path.as_ref();
        let expanded = self.expand_home(path)?;
        let joined = if expanded.is_absolute() {
            expanded
        } else {
            self.root.join(expanded)
        };
        let resolved = real_path(&joined).map_err(|e| {
            format!(
                "Cannot resolve {}: {e}. Use a path inside the workspace {}.",
                path.display(),
                self.root.display()
            )
        })?;
        if self.allow_outside || self.contains(&resolved) {
            return Ok(resolved);
        }
        Err(format!(
            "Access denied: {} resolves to {}, which is outside the workspace {}. Use a path \
             inside the workspace (relative paths start there); to allow this, the user can \
             set allow_outside_workspace = true under [tools] in the config.",
            path.display(),
            resolved.display(),
            self.root.display()
        ))
    }

    /// `path` relative to the root when inside it, for short messages.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Replaces a leading `~` with the home directory.
    fn expand_home(&self, path: &Path) -> Result<PathBuf, String> {
        let mut components = path.components();
        if components.next() != Some(Component::Normal("~".as_ref())) {
            return Ok(path.to_path_buf());
        }
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or_else(|| {
                format!(
                    "Cannot resolve {}: the home directory (HOME) is not set. Use a path \
                     inside the workspace {}.",
                    path.display(),
                    self.root.display()
                )
            })?;
        Ok(PathBuf::from(home).join(components.as_path()))
    }
}

/// The real location of the absolute `path`: symlinks followed and `.`/`..` removed,
/// like `realpath`, except that the missing tail of a path that does not exist (yet) is
/// kept as written. A dangling symlink resolves to where it points.
fn real_path(path: &Path) -> io::Result<PathBuf> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir | Component::Normal(_) => {
                pending.push_back(component.as_os_str().to_owned());
            }
        }
    }
    let mut hops = 0;
    // Once a component is missing, nothing below it exists, so no symlink can follow.
    let mut missing = false;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            // `out` holds real directories only, so its lexical parent is the real one.
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        if !missing {
            match std::fs::symlink_metadata(&candidate) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    let target = std::fs::read_link(&candidate)?;
                    if target.is_absolute() {
                        out = PathBuf::new();
                    }
                    for component in target.components().rev() {
                        match component {
                            Component::Prefix(p) => out.push(p.as_os_str()),
                            Component::RootDir => out.push(Component::RootDir.as_os_str()),
                            Component::CurDir => {}
                            Component::ParentDir | Component::Normal(_) => {
                                pending.push_front(component.as_os_str().to_owned());
                            }
                        }
                    }
                    continue;
                }
                Ok(_) => {}
                Err(e)
                    if e.kind() == io::ErrorKind::NotFound
                        || e.kind() == io::ErrorKind::NotADirectory =>
                {
                    missing = true;
                }
                Err(e) => return Err(e),
            }
        }
        out.push(name);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tail_is_kept_and_dotdot_in_it_is_lexical() {
        let dir = tempfile::tempdir().unwrap();
        let root = real_path(dir.path()).unwrap();
        let p = real_path(&root.join("a/b/../c/./d")).unwrap();
        assert_eq!(p, root.join("a/c/d"));
    }

    #[cfg(unix)]
    #[test]
    fn relative_and_chained_symlinks_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = real_path(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("x/y")).unwrap();
        std::os::unix::fs::symlink("x/y", root.join("l1")).unwrap();
        std::os::unix::fs::symlink("l1/../y", root.join("l2")).unwrap();
        assert_eq!(real_path(&root.join("l1/f")).unwrap(), root.join("x/y/f"));
        assert_eq!(real_path(&root.join("l2")).unwrap(), root.join("x/y"));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = real_path(dir.path()).unwrap();
        std::os::unix::fs::symlink("b", root.join("a")).unwrap();
        std::os::unix::fs::symlink("a", root.join("b")).unwrap();
        let err = real_path(&root.join("a")).unwrap_err();
        assert!(err.to_string().contains("symbolic links"), "{err}");
    }
}
