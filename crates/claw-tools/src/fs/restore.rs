//! Putting a file back as it was (undo), and reading what it holds now (to notice a
//! change made since by someone else), both through the same workspace handles as the
//! tools: a symlink swapped in since cannot lead a restore outside the workspace. Nor
//! inside it: the path must still resolve to itself, or a command that replaced the
//! file (or a directory above it) with a link could make undo write or remove another
//! file that merely holds the same content.

use super::{Kept, MAX_KEPT_BYTES, read_regular, replace_file};
use crate::Workspace;
use crate::workspace::{Access, Located};
use std::io;
use std::path::Path;

/// Where the file the tools changed at `path` (absolute, real) is, refusing a path that
/// now resolves elsewhere through a symlink.
fn locate(workspace: &Workspace, path: &Path) -> io::Result<Located> {
    let located = workspace
        .locate(path, Access::Write)
        .map_err(|refusal| io::Error::new(io::ErrorKind::PermissionDenied, refusal.to_string()))?;
    if located.path() != path {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "a symlink is there now, leading to {}; left as it is",
                located.path().display()
            ),
        ));
    }
    Ok(located)
}

/// What the file at `path` holds now: `Ok(None)` when it does not exist. Content larger
/// than [`MAX_KEPT_BYTES`], or something that is not a regular file, is an error.
pub fn read_current(workspace: &Workspace, path: &Path) -> io::Result<Option<Vec<u8>>> {
    let located = locate(workspace, path)?;
    let Some((parent, name)) = located.parent_and_name() else {
        return Err(io::Error::other("the workspace itself is not a file"));
    };
    let dir = match located.dir().open_dir(parent) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match read_regular(&dir, name) {
        Ok(Some((Kept::Bytes(bytes), _))) => Ok(Some(bytes)),
        Ok(Some((Kept::TooLarge(size), _))) => Err(io::Error::other(format!(
            "it is {size} bytes, more than the {MAX_KEPT_BYTES} kept for undo"
        ))),
        Ok(None) => Err(io::Error::other("it is not a regular file")),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Makes the file at `path` hold `content` again (missing parent directories are
/// created, the mode of a file still there is kept), or removes it (`None`).
pub fn restore_file(workspace: &Workspace, path: &Path, content: Option<&[u8]>) -> io::Result<()> {
    let located = locate(workspace, path)?;
    let Some((parent, name)) = located.parent_and_name() else {
        return Err(io::Error::other("the workspace itself is not a file"));
    };
    let tree = located.dir();
    let held = |dir: cap_std::fs::Dir| {
        located
            .check_held(&dir, name)
            .map(|()| dir)
            .map_err(|refused| io::Error::new(io::ErrorKind::PermissionDenied, refused.to_string()))
    };
    let Some(content) = content else {
        return match tree
            .open_dir(parent)
            .and_then(held)
            .and_then(|dir| dir.remove_file(name))
        {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        };
    };
    tree.create_dir_all(parent)?;
    let dir = held(tree.open_dir(parent)?)?;
    let mode = match dir.metadata(name) {
        Ok(meta) if meta.is_dir() => {
            return Err(io::Error::other("a directory is there now"));
        }
        Ok(meta) => {
            use cap_std::fs::PermissionsExt;
            Some(meta.permissions().mode() & 0o7777)
        }
        Err(_) => None,
    };
    replace_file(&dir, name, content, mode)
}
