//! The trust boundary's inventory of processes (docs/architecture.md, "Every process
//! claw-tui starts") stays true: every file of `src/` and of each crate's `src/` under
//! `crates/` that starts a process is listed there, and every file listed still starts
//! one. A new `Command::new` anywhere else
//! fails here until its boundary is written down.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const HEADING: &str = "### Every process claw-tui starts";

/// The `src/…` and `crates/…` files the inventory table names in its "started in"
/// column.
fn listed(doc: &str) -> BTreeSet<String> {
    let section = doc
        .split_once(HEADING)
        .unwrap_or_else(|| panic!("docs/architecture.md has no \"{HEADING}\" section"))
        .1;
    let mut files = BTreeSet::new();
    for row in section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
    {
        let Some(column) = row.split('|').nth(2) else {
            continue;
        };
        for part in column.split('`').skip(1).step_by(2) {
            if (part.starts_with("src/") || part.starts_with("crates/")) && part.ends_with(".rs") {
                files.insert(part.to_owned());
            }
        }
    }
    files
}

/// The files under `dir` whose code (comments aside) calls `Command::new`.
fn spawning(root: &Path, dir: &Path, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        if path.is_dir() {
            spawning(root, &path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let spawns = text
                .lines()
                .map(str::trim_start)
                .filter(|l| !l.starts_with("//"))
                .any(calls_command_new);
            if spawns {
                let relative = path.strip_prefix(root).unwrap();
                found.insert(relative.to_string_lossy().into_owned());
            }
        }
    }
}

/// Whether `line` calls `Command::new` itself, not a type whose name ends so (ACP's
/// `AvailableCommand::new`).
fn calls_command_new(line: &str) -> bool {
    line.match_indices("Command::new(").any(|(at, _)| {
        !line[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn every_process_claw_tui_starts_is_in_the_trust_boundary_inventory() {
    assert!(calls_command_new("let mut c = Command::new(program);"));
    assert!(calls_command_new("std::process::Command::new(\"git\")"));
    assert!(!calls_command_new("AvailableCommand::new(name, what)"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let listed = listed(&doc);
    let mut actual = BTreeSet::new();
    spawning(root, &root.join("src"), &mut actual);
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        spawning(root, &krate.unwrap().path().join("src"), &mut actual);
    }
    assert!(
        actual.len() >= 4,
        "the scan found too few spawning files to be looking in the right place: {actual:?}"
    );
    let unlisted: Vec<_> = actual.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "these files start processes but docs/architecture.md's \"{HEADING}\" table does \
         not list them; add each with its boundary: {unlisted:?}"
    );
    let stale: Vec<_> = listed.difference(&actual).collect();
    assert!(
        stale.is_empty(),
        "the inventory lists files that no longer start a process: {stale:?}"
    );
}
