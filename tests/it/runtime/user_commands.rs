#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Custom slash command files from the four locations (the project ones from the
//! workspace up to the git root), front matter, arguments, shadowing, built-ins.

use claw_tui::commands::{command_dirs, discover_commands};
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn write(path: &Path, text: &str) -> PathBuf {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    path.to_path_buf()
}

struct Tree {
    _dir: TempDir,
    repo: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    config: PathBuf,
}

fn tree() -> Tree {
    let dir = TempDir::new().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = base.join("repo");
    let ws = repo.join("app");
    let (home, config) = (base.join("home"), base.join("config"));
    for d in [&ws, &home, &config, &repo.join(".git")] {
        fs::create_dir_all(d).unwrap();
    }
    Tree {
        _dir: dir,
        repo,
        ws,
        home,
        config,
    }
}

#[test]
fn a_command_from_each_location_expands_its_arguments() {
    let t = tree();
    let review = write(
        &t.ws.join(".claw-tui/commands/review.md"),
        "---\ndescription: Review a change\nargument-hint: FILE [FOCUS]\nmodel: ignored\n---\n\
         Review $1, focusing on $2.\n\nAll: $ARGUMENTS\n",
    );
    let fix = write(
        &t.repo.join(".claude/commands/fix.md"),
        "Fix issue #$1 in $2.\n",
    );
    let global = write(
        &t.config.join("commands/standup.md"),
        "Summarise $ARGUMENTS.\n",
    );
    let home = write(
        &t.home.join(".claude/commands/explain.md"),
        "# Explain code\nExplain $ARGUMENTS simply.\n",
    );
    // Above the git root: not the project's.
    write(
        &t.repo.parent().unwrap().join(".claude/commands/outside.md"),
        "x",
    );

    let dirs: Vec<String> = command_dirs(&t.ws, &t.config, Some(&t.home))
        .into_iter()
        .map(|(_, source)| source)
        .collect();
    assert_eq!(
        dirs,
        [
            ".claw-tui/commands".to_owned(),
            ".claude/commands".to_owned(),
            ".claw-tui/commands".to_owned(),
            ".claude/commands".to_owned(),
            format!("{}/commands", t.config.display()),
            "~/.claude/commands".to_owned(),
        ]
    );

    let set = discover_commands(&t.ws, &t.config, Some(&t.home), &["help"]);
    let names: Vec<&str> = set.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["explain", "fix", "review", "standup"]);
    // `model` is read and said to be not honoured, not dropped in silence.
    assert_eq!(set.warnings.len(), 1, "{:?}", set.warnings);
    assert!(
        set.warnings[0].ends_with("model is not supported: /review runs on the session's model"),
        "{:?}",
        set.warnings
    );

    let r = set.get("review").unwrap();
    assert_eq!(
        (r.description.as_str(), r.argument_hint.as_deref(), &r.path),
        ("Review a change", Some("FILE [FOCUS]"), &review)
    );
    assert_eq!(r.source, ".claw-tui/commands");
    assert_eq!(
        r.prompt("src/lib.rs 'error handling'"),
        "Review src/lib.rs, focusing on error handling.\n\nAll: src/lib.rs 'error handling'"
    );
    let f = set.get("fix").unwrap();
    assert_eq!((&f.path, f.source.as_str()), (&fix, ".claude/commands"));
    assert_eq!(f.prompt("42 parser"), "Fix issue #42 in parser.");
    assert_eq!(
        f.description, "Fix issue #$1 in $2.",
        "the first line stands in"
    );
    let s = set.get("standup").unwrap();
    assert_eq!(s.path, global);
    assert_eq!(
        s.prompt("  yesterday's work "),
        "Summarise yesterday's work."
    );
    let e = set.get("explain").unwrap();
    assert_eq!((&e.path, e.source.as_str()), (&home, "~/.claude/commands"));
    assert_eq!(e.description, "Explain code", "the heading without its #");
    assert_eq!(
        e.prompt("lifetimes"),
        "# Explain code\nExplain lifetimes simply."
    );
}

#[test]
fn the_nearest_file_wins_builtins_win_and_bad_files_are_reported() {
    let t = tree();
    let near = write(&t.ws.join(".claude/commands/deploy.md"), "near $1");
    write(&t.repo.join(".claw-tui/commands/deploy.md"), "root");
    write(&t.home.join(".claude/commands/deploy.md"), "home");
    write(&t.config.join("commands/help.md"), "not the help");
    write(
        &t.home.join(".claude/commands/help.md"),
        "not the help either",
    );
    write(
        &t.ws.join(".claw-tui/commands/broken.md"),
        "---\ndescription: [x\n---\nbody",
    );
    write(&t.ws.join(".claw-tui/commands/notes.txt"), "not markdown");

    let set = discover_commands(&t.ws, &t.config, Some(&t.home), &["help", "model"]);
    let names: Vec<&str> = set.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["deploy"]);
    assert_eq!(set.get("deploy").unwrap().path, near);
    assert_eq!(set.get("deploy").unwrap().prompt("prod"), "near prod");
    assert_eq!(set.warnings.len(), 2, "{:?}", set.warnings);
    assert!(
        set.warnings[0].contains("not valid YAML"),
        "{:?}",
        set.warnings
    );
    assert!(
        set.warnings[1].starts_with("/help is a built-in command; "),
        "said once for both files: {:?}",
        set.warnings
    );
}
