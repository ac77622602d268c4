//! Planning and settling the protected paths, on real directories.
use super::*;

#[test]
fn existing_paths_are_guarded_parents_first_and_absent_ones_watched() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir(root.join(".claw-tui")).unwrap();
    std::fs::write(root.join(".claw-tui/MEMORY.md"), "m").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join(".mcp.json")).unwrap();
    let plan = plan(&Protected::for_workspace(&root), false);
    let guard = |rel: &str| plan.guards.iter().position(|g| g.path == root.join(rel));
    assert!(guard(".git") < guard(".git/config") && guard(".git/config").is_some());
    assert!(guard(".claw-tui") < guard(".claw-tui/MEMORY.md"));
    assert_eq!(plan.guards[guard(".git").unwrap()].kind, GuardKind::Pin);
    assert_eq!(
        plan.guards[guard(".git/hooks").unwrap()].kind,
        GuardKind::ReadOnly
    );
    assert!(
        guard(".mcp.json").is_none(),
        "a symlink cannot be mounted over"
    );
    let watched: Vec<PathBuf> = plan.watch.items.iter().map(|i| i.rel.clone()).collect();
    for rel in [".mcp.json", ".claude", ".git/info", ".git/commondir"] {
        assert!(watched.contains(&PathBuf::from(rel)), "{rel}: {watched:?}");
    }
}

#[test]
fn in_the_fallback_changes_are_put_back_and_creations_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir(root.join(".claw-tui")).unwrap();
    std::fs::write(root.join(".claw-tui/MEMORY.md"), "m").unwrap();
    let plan = plan(&Protected::for_workspace(&root), true);
    std::fs::write(root.join(".git/config"), "[core]\nfsmonitor = x\n").unwrap();
    std::fs::write(root.join(".git/hooks/pre-commit"), "x").unwrap();
    std::fs::write(root.join(".claw-tui/MEMORY.md"), "remembered").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    let settled = plan.watch.settle();
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(!root.join(".mcp.json").exists());
    assert_eq!(
        std::fs::read_to_string(root.join(".claw-tui/MEMORY.md")).unwrap(),
        "remembered"
    );
    assert_eq!(settled.len(), 3, "{settled:?}");
    assert!(
        settled
            .iter()
            .all(|s| !matches!(s.outcome, Outcome::Failed(_)))
    );
    assert!(plan.watch.settle().is_empty(), "settled once");
}

#[test]
fn memory_md_is_free_only_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".claw-tui")).unwrap();
    std::fs::write(root.join(".claw-tui/MEMORY.md"), "m").unwrap();
    let plan = plan(&Protected::for_workspace(&root), true);
    std::fs::remove_file(root.join(".claw-tui/MEMORY.md")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join(".claw-tui/MEMORY.md")).unwrap();
    let settled = plan.watch.settle();
    assert_eq!(settled.len(), 1, "{settled:?}");
    let memory = root.join(".claw-tui/MEMORY.md");
    assert!(memory.symlink_metadata().unwrap().is_file());
    assert_eq!(std::fs::read_to_string(memory).unwrap(), "m");
}

#[test]
fn the_directories_above_a_pinned_file_are_pinned_up_to_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("tools/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".claw-tui/hooks")).unwrap();
    std::fs::write(root.join("tools/hooks/check.sh"), "exit 0").unwrap();
    std::fs::write(root.join(".claw-tui/hooks/x.sh"), "exit 0").unwrap();
    let mut protected = Protected::for_workspace(&root);
    protected.pin(root.join("tools/hooks/check.sh"));
    protected.pin(root.join(".claw-tui/hooks/x.sh"));
    let plan = plan(&protected, false);
    let kinds: Vec<(PathBuf, GuardKind)> = plan
        .guards
        .iter()
        .map(|g| (g.path.strip_prefix(&root).unwrap().to_path_buf(), g.kind))
        .collect();
    let at = |rel: &str, kind| kinds.iter().position(|k| *k == (PathBuf::from(rel), kind));
    let (tools, hooks) = (
        at("tools", GuardKind::Pin),
        at("tools/hooks", GuardKind::Pin),
    );
    let file = at("tools/hooks/check.sh", GuardKind::ReadOnly);
    assert!(
        tools < hooks && hooks < file && tools.is_some(),
        "{kinds:?}"
    );
    // Inside the read-only .claw-tui nothing is pinned writable again.
    assert!(at(".claw-tui", GuardKind::ReadOnly).is_some(), "{kinds:?}");
    assert!(at(".claw-tui", GuardKind::Pin).is_none(), "{kinds:?}");
    assert!(at(".claw-tui/hooks", GuardKind::Pin).is_none(), "{kinds:?}");
}
