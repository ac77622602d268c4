#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Skill files that cannot be read as skills: a front matter never closed, one that runs
//! past the 32 KiB read of a `SKILL.md`, and bytes that are not UTF-8. Each is named with
//! its file and line, kept out of the prompt, and said on stderr by the real binary.

use crate::support::bin::{Sandbox, run};
use claw_tui::runtime::context::{ProjectContext, build_system_prompt_on, discover_skills};
use std::fs;
use std::path::{Path, PathBuf};

fn write_skill(skills: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = skills.join(name).join("SKILL.md");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, bytes).unwrap();
    path
}

/// A good skill and the three broken ones in `skills`; their paths, broken ones first.
fn broken_and_good(skills: &Path) -> [PathBuf; 4] {
    let open = write_skill(
        skills,
        "open",
        b"---\nname: open\ndescription: never closed\n# Open\nSteps.\n",
    );
    let mut long = b"---\nname: long\ndescription: closed too late\nnotes: |\n".to_vec();
    while long.len() < 40 * 1024 {
        long.extend_from_slice(b"  a line of notes that makes the front matter long\n");
    }
    long.extend_from_slice(b"---\n# Long\n");
    let long = write_skill(skills, "long", &long);
    let bytes = write_skill(
        skills,
        "bytes",
        b"---\nname: bytes\ndescription: fine here\n---\n# Bytes\nbad \xff\xfe here\n",
    );
    let good = write_skill(
        skills,
        "good",
        b"---\nname: good\ndescription: a good skill\n---\n# Good\n",
    );
    [open, long, bytes, good]
}

#[test]
fn broken_skill_files_are_named_with_file_and_line_and_kept_out_of_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let skills = ws.join(".claude/skills");
    let [open, long, bytes, _] = broken_and_good(&skills);
    let config = dir.path().join("config");

    let catalog = discover_skills(&ws, &config, None);
    let names: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"], "{catalog:?}");
    let broken: Vec<(String, &Path, usize)> = catalog
        .broken
        .iter()
        .map(|b| (b.name.clone(), b.path.as_path(), b.line))
        .collect();
    assert_eq!(
        broken,
        [
            ("bytes".to_owned(), bytes.as_path(), 6),
            ("long".to_owned(), long.as_path(), 1),
            ("open".to_owned(), open.as_path(), 1),
        ]
    );
    let reasons: Vec<&str> = catalog.broken.iter().map(|b| b.reason.as_str()).collect();
    assert!(reasons[0].contains("not valid UTF-8"), "{reasons:?}");
    assert!(
        reasons[1].contains("within the first 32 KiB"),
        "{reasons:?}"
    );
    assert!(reasons[2].contains("never closed"), "{reasons:?}");

    let context = ProjectContext::discover(&ws, &config, None, None);
    let warnings = context.warnings();
    for path in [&open, &long, &bytes] {
        let said = format!("{} line ", path.display());
        assert!(
            warnings.iter().any(|w| w.contains(&said)),
            "{path:?}: {warnings:?}"
        );
    }
    let today = chrono::NaiveDate::from_ymd_opt(2026, 3, 9).unwrap();
    let prompt = build_system_prompt_on(today, &context, &[], None);
    assert!(prompt.contains("good"), "{prompt}");
    for name in ["open", "long", "bytes"] {
        assert!(
            !prompt.contains(&format!("skills/{name}/SKILL.md")),
            "{name} offered: {prompt}"
        );
    }
}

#[test]
fn print_mode_warns_of_each_broken_skill_on_stderr() {
    let sb = Sandbox::new();
    let [open, long, bytes, _] = broken_and_good(&sb.workspace().join(".claude/skills"));
    let mut cmd = sb.command();
    cmd.args(["-p", "hello"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    for (path, line) in [(&open, 1), (&long, 1), (&bytes, 6)] {
        let name = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let said = format!(
            "claw-tui: warning: skill {name} is broken and not offered to the model: {} line \
             {line}: ",
            path.display()
        );
        assert!(stderr.contains(&said), "{said}\nnot in:\n{stderr}");
    }
    assert!(!stderr.contains("skill good"), "{stderr}");
}
