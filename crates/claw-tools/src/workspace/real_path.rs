//! Where a path points, worked out from its text and the symlinks on disk. This only
//! decides which held-open tree a path belongs to and what to call it in messages: the
//! open itself happens beneath that tree's handle, where the kernel refuses escapes.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before it is taken for a loop
/// (the Linux limit).
const MAX_SYMLINK_HOPS: u32 = 40;

/// The real location of the absolute `path`: symlinks followed and `.`/`..` removed,
/// like `realpath`, except that a part that does not exist (yet) is kept as written and
/// `..` inside it steps back lexically. A dangling symlink resolves to where it points.
pub(super) fn real_path(path: &Path) -> io::Result<PathBuf> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut out = PathBuf::new();
    push_components(path, &mut out, &mut pending, false);
    let mut hops = 0;
    // How many trailing components of `out` do not exist. Nothing below a missing
    // component exists, so none of it can be a symlink, until `..` climbs back out.
    let mut missing = 0usize;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            // `out` holds real directories only (or missing ones), so its lexical
            // parent is the real one.
            out.pop();
            missing = missing.saturating_sub(1);
            continue;
        }
        let candidate = out.join(&name);
        if missing > 0 {
            missing += 1;
            out.push(name);
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(io::Error::other("too many levels of symbolic links"));
                }
                let target = match std::fs::read_link(&candidate) {
                    Ok(target) => target,
                    // Replaced by something else since it was looked at: look again.
                    Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => {
                        pending.push_front(name);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                if target.is_absolute() {
                    out = PathBuf::new();
                }
                push_components(&target, &mut out, &mut pending, true);
                continue;
            }
            Ok(_) => {}
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.kind() == io::ErrorKind::NotADirectory =>
            {
                missing = 1;
            }
            Err(e) => return Err(e),
        }
        out.push(name);
    }
    Ok(out)
}

/// Puts the root of `path` into `out` and its names into `pending`, at the front (a
/// symlink's target, resolved next) or at the back.
fn push_components(path: &Path, out: &mut PathBuf, pending: &mut VecDeque<OsString>, front: bool) {
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir | Component::Normal(_) => {
                names.push(component.as_os_str().to_owned());
            }
        }
    }
    if front {
        for name in names.into_iter().rev() {
            pending.push_front(name);
        }
    } else {
        pending.extend(names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = real_path(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn missing_tail_is_kept_and_dotdot_in_it_is_lexical() {
        let (_dir, root) = temp_root();
        let p = real_path(&root.join("a/b/../c/./d")).unwrap();
        assert_eq!(p, root.join("a/c/d"));
    }

    #[cfg(unix)]
    #[test]
    fn relative_and_chained_symlinks_are_followed() {
        let (_dir, root) = temp_root();
        std::fs::create_dir_all(root.join("x/y")).unwrap();
        std::os::unix::fs::symlink("x/y", root.join("l1")).unwrap();
        std::os::unix::fs::symlink("l1/../y", root.join("l2")).unwrap();
        assert_eq!(real_path(&root.join("l1/f")).unwrap(), root.join("x/y/f"));
        assert_eq!(real_path(&root.join("l2")).unwrap(), root.join("x/y"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_after_climbing_out_of_a_missing_part_is_followed() {
        let (_dir, root) = temp_root();
        std::fs::create_dir(root.join("ws")).unwrap();
        std::os::unix::fs::symlink("/", root.join("ws/up")).unwrap();
        assert_eq!(
            real_path(&root.join("ws/nope/../up/etc")).unwrap(),
            PathBuf::from("/etc")
        );
        assert_eq!(
            real_path(&root.join("ws/a/b/../../up")).unwrap(),
            PathBuf::from("/")
        );
        // Still inside the missing part: nothing there can be a link.
        assert_eq!(
            real_path(&root.join("ws/a/b/../up")).unwrap(),
            root.join("ws/a/up")
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_reported() {
        let (_dir, root) = temp_root();
        std::os::unix::fs::symlink("b", root.join("a")).unwrap();
        std::os::unix::fs::symlink("a", root.join("b")).unwrap();
        let err = real_path(&root.join("a")).unwrap_err();
        assert!(err.to_string().contains("symbolic links"), "{err}");
    }
}
