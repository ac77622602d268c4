//! Whether a `.git` directory a command created is a plain new repository — what
//! `git init`, `git config user.*`, `git remote add` and setting an upstream make — and
//! so can stay. Anything else in its executable configuration is refused: a config key
//! outside that list (`core.fsmonitor`, `core.hooksPath`, `include.path`, filters,
//! pagers, `remote.*.uploadpack`, ...), a hook that is not one of git's `*.sample`
//! files, `info/` beyond `exclude`, or `commondir`, `config.worktree`, `modules/`.
//!
//! The config is read as text by the rules below, never by git: a line they do not
//! understand (a continuation, an odd quote) refuses the repository, which at worst
//! moves aside one that git would have accepted. A config, hook or `info/` file with a
//! second name (a hard link) is refused too: once the repository stays, that file is
//! read-only to commands, but a write through the other name would still reach it.

use super::snapshot::open_subdir;
use cap_std::fs::{Dir, MetadataExt, OpenOptionsExt};
use std::io::Read;

/// Keys a new repository's config may hold: (section, subsection present, key); `*` is
/// any key.
const ALLOWED: [(&str, bool, &str); 14] = [
    ("core", false, "repositoryformatversion"),
    ("core", false, "filemode"),
    ("core", false, "bare"),
    ("core", false, "logallrefupdates"),
    ("core", false, "ignorecase"),
    ("core", false, "precomposeunicode"),
    ("core", false, "symlinks"),
    ("extensions", false, "objectformat"),
    ("extensions", false, "refstorage"),
    ("user", false, "*"),
    ("remote", true, "url"),
    ("remote", true, "fetch"),
    // `git push -u` and `git branch --set-upstream-to` name the upstream.
    ("branch", true, "remote"),
    ("branch", true, "merge"),
];

/// The largest config read.
const MAX_CONFIG: u64 = 64 * 1024;

/// Checks the new git directory `git` (opened without following a symlink); the error
/// says what keeps it from being a plain new repository.
pub(super) fn check(git: &Dir) -> Result<(), String> {
    for absent in ["commondir", "config.worktree", "modules"] {
        if git.symlink_metadata(absent).is_ok() {
            return Err(format!("it has {absent}"));
        }
    }
    match git.symlink_metadata("config") {
        Ok(meta) if meta.is_file() && meta.nlink() > 1 => {
            return Err("its config has another name (a hard link)".into());
        }
        Ok(meta) if meta.is_file() && meta.len() <= MAX_CONFIG => {
            let mut text = String::new();
            let mut options = cap_std::fs::OpenOptions::new();
            options.read(true).custom_flags(
                (nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits(),
            );
            let file = git
                .open_with("config", &options)
                .map_err(|e| e.to_string())?;
            // Bounded: the file may have grown since it was looked at.
            file.take(MAX_CONFIG + 1)
                .read_to_string(&mut text)
                .map_err(|e| format!("its config cannot be read ({e})"))?;
            if text.len() as u64 > MAX_CONFIG {
                return Err("its config is not small".into());
            }
            config(&text)?;
        }
        Ok(_) => return Err("its config is not a small regular file".into()),
        Err(_) => {}
    }
    only_files(git, "hooks", |name| name.ends_with(".sample"))?;
    only_files(git, "info", |name| name == "exclude")
}

/// `name` in `git`, if there, must be a directory of regular files that `allowed` names.
fn only_files(git: &Dir, name: &str, allowed: impl Fn(&str) -> bool) -> Result<(), String> {
    let Ok(meta) = git.symlink_metadata(name) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(format!("its {name} is not a directory"));
    }
    let dir = open_subdir(git, name).map_err(|e| e.to_string())?;
    for entry in dir.entries().map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let file = entry.file_name().to_string_lossy().into_owned();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !regular || !allowed(&file) {
            return Err(format!("it has {name}/{file}"));
        }
        let links = dir
            .symlink_metadata(entry.file_name())
            .map_or(0, |m| m.nlink());
        if links != 1 {
            return Err(format!("its {name}/{file} has another name (a hard link)"));
        }
    }
    Ok(())
}

/// Checks a config's text: every key must be one of [`ALLOWED`].
fn config(text: &str) -> Result<(), String> {
    let mut section: Option<(String, bool)> = None;
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let refuse = || {
            Err(format!(
                "its config line {} is not allowed: {line}",
                number + 1
            ))
        };
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.ends_with('\\') {
            return refuse();
        }
        if let Some(header) = line.strip_prefix('[') {
            match parse_header(header) {
                Some(parsed) => section = Some(parsed),
                None => return refuse(),
            }
            continue;
        }
        let Some((name, sub)) = &section else {
            return refuse();
        };
        let key: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let after = line[key.len()..].trim_start();
        let well_formed = key.starts_with(|c: char| c.is_ascii_alphabetic())
            && (after.is_empty() || after.starts_with('='));
        let key = key.to_ascii_lowercase();
        let allowed = ALLOWED
            .iter()
            .any(|(s, has_sub, k)| s == name && has_sub == sub && (*k == "*" || *k == key));
        if !well_formed || !allowed {
            return refuse();
        }
    }
    Ok(())
}

/// `section]` or `section "subsection"]` (after the `[`), with nothing but a comment
/// after it: the section's name in lower case and whether it has a subsection.
fn parse_header(header: &str) -> Option<(String, bool)> {
    let name: String = header
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let rest = header[name.len()..].trim_start();
    let (sub, rest) = if let Some(quoted) = rest.strip_prefix('"') {
        // Escapes inside a subsection are refused rather than interpreted.
        let end = quoted.find('"')?;
        if quoted[..end].contains('\\') {
            return None;
        }
        (true, &quoted[end + 1..])
    } else {
        (false, rest)
    };
    let tail = rest.strip_prefix(']')?.trim();
    let comment = tail.is_empty() || tail.starts_with('#') || tail.starts_with(';');
    (!name.is_empty() && comment).then(|| (name.to_ascii_lowercase(), sub))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_git_init_and_friends_write_is_allowed() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\
                    \tbare = false\n\tlogallrefupdates = true\n[user]\n\tname = A B\n\
                    \temail = a@b\n[remote \"origin\"]\n\turl = https://e.com/x.git\n\
                    \tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\
                    \tremote = origin\n\tmerge = refs/heads/main\n# a comment\n\
                    [extensions]\n\tobjectformat = sha256\n";
        assert_eq!(config(text), Ok(()));
    }

    #[test]
    fn keys_that_run_programs_or_read_more_are_refused() {
        for bad in [
            "[core]\n\tfsmonitor = touch /tmp/x\n",
            "[core]\n\thooksPath = /tmp/hooks\n",
            "[core]\n\tpager = evil\n",
            "[CORE]\n\tSSHCommand = evil\n",
            "[include]\n\tpath = ../x\n",
            "[includeIf \"gitdir:/\"]\n\tpath = ../x\n",
            "[remote \"o\"]\n\tuploadpack = evil\n",
            "[filter \"lfs\"]\n\tclean = evil\n",
            "[core]\n\tbare = false \\\n\tfsmonitor = x\n",
            "[core.fsmonitor]\n",
            "\tfilemode = true\n",
            "[core] fsmonitor = evil\n",
            "[remote \"a\\\"b\"]\n\turl = x\n",
            "[user]\n\t= x\n",
        ] {
            assert!(config(bad).is_err(), "{bad:?}");
        }
    }
}
