#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Skills from all six locations: the walk from the workspace up to the git root, the
//! global directories, nearest-wins shadowing, same-level duplicates, the prompt budget
//! and its warning, and read-only file access to skills outside the workspace.

use crate::support::call;
use crate::support::runtime::settings;
use claw_tui::runtime::context::skills::skill_levels;
use claw_tui::runtime::context::{
    ProjectContext, SkillScope, build_system_prompt_on, discover_skills, list_skills, skill_budget,
};
use claw_tui::tools::fs::{ListDirTool, ReadFileTool, WriteFileTool};
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

fn skill(dir: &Path, name: &str, description: &str) -> PathBuf {
    let path = dir.join(name).join("SKILL.md");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(
        &path,
        format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\nSteps.\n"),
    )
    .unwrap();
    path
}

/// above/ (.claude/skills, above the git root) > repo/ (.git) > repo/pkg/ > repo/pkg/ws
/// = workspace; home/ and config/ beside them.
struct Tree {
    _dir: TempDir,
    above: PathBuf,
    repo: PathBuf,
    pkg: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    config: PathBuf,
}

fn tree() -> Tree {
    let dir = TempDir::new().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let above = base.join("above");
    let repo = above.join("repo");
    let pkg = repo.join("pkg");
    let ws = pkg.join("ws");
    let home = base.join("home");
    let config = base.join("config");
    for d in [&ws, &home, &config, &repo.join(".git")] {
        fs::create_dir_all(d).unwrap();
    }
    Tree {
        _dir: dir,
        above,
        repo,
        pkg,
        ws,
        home,
        config,
    }
}

#[test]
fn the_six_locations_are_searched_nearest_first_and_the_nearest_definition_wins() {
    let t = tree();
    let ws_claw = skill(&t.ws.join(".claw-tui/skills"), "alpha", "workspace alpha");
    skill(&t.repo.join(".claw-tui/skills"), "alpha", "root alpha");
    skill(&t.home.join(".claude/skills"), "alpha", "home alpha");
    let pkg_agents = skill(&t.pkg.join(".agents/skills"), "beta", "pkg beta");
    skill(&t.repo.join(".claude/skills"), "beta", "root beta");
    let root_claude = skill(&t.repo.join(".claude/skills"), "gamma", "root gamma");
    skill(&t.config.join("skills"), "gamma", "config gamma");
    let config_delta = skill(&t.config.join("skills"), "delta", "config delta");
    skill(&t.home.join(".agents/skills"), "delta", "home agents delta");
    let home_agents = skill(
        &t.home.join(".agents/skills"),
        "epsilon",
        "home agents epsilon",
    );
    skill(
        &t.home.join(".claude/skills"),
        "epsilon",
        "home claude epsilon",
    );
    let home_claude = skill(&t.home.join(".claude/skills"), "zeta", "home claude zeta");
    // Above the git root: not part of the project.
    skill(
        &t.above.join(".claude/skills"),
        "outside",
        "above the repository",
    );

    let levels = skill_levels(&t.ws, &t.config, Some(&t.home));
    let sources: Vec<Vec<&str>> = levels
        .iter()
        .map(|l| l.iter().map(|r| r.source.as_str()).collect())
        .collect();
    let project = vec![".claw-tui/skills", ".agents/skills", ".claude/skills"];
    let config_source = format!("{}/skills", t.config.display());
    assert_eq!(
        sources,
        [
            project.clone(),
            project.clone(),
            project,
            vec![
                config_source.as_str(),
                "~/.agents/skills",
                "~/.claude/skills"
            ],
        ]
    );
    assert_eq!(levels[0][0].dir, t.ws.join(".claw-tui/skills"));
    assert_eq!(levels[2][2].dir, t.repo.join(".claude/skills"));

    let catalog = discover_skills(&t.ws, &t.config, Some(&t.home));
    let found: Vec<(&str, &str, &Path, SkillScope)> = catalog
        .skills
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.description.as_str(),
                s.path.as_path(),
                s.scope,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "alpha",
                "workspace alpha",
                ws_claw.as_path(),
                SkillScope::Project
            ),
            (
                "beta",
                "pkg beta",
                pkg_agents.as_path(),
                SkillScope::Project
            ),
            (
                "delta",
                "config delta",
                config_delta.as_path(),
                SkillScope::Global
            ),
            (
                "epsilon",
                "home agents epsilon",
                home_agents.as_path(),
                SkillScope::Global
            ),
            (
                "gamma",
                "root gamma",
                root_claude.as_path(),
                SkillScope::Project
            ),
            (
                "zeta",
                "home claude zeta",
                home_claude.as_path(),
                SkillScope::Global
            ),
        ]
    );
    let zeta = catalog.get("zeta").unwrap();
    assert_eq!(zeta.source, "~/.claude/skills");
    assert_eq!(zeta.size, fs::metadata(&home_claude).unwrap().len());
    // Shadowing across levels is not a conflict; two at the global level are.
    let duplicates: Vec<&str> = catalog.duplicates.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(duplicates, ["delta", "epsilon"]);
}

#[test]
fn a_name_defined_twice_at_one_level_is_reported_once_with_both_paths() {
    let t = tree();
    let first = skill(&t.ws.join(".claw-tui/skills"), "lint", "the claw-tui one");
    let second = skill(&t.ws.join(".claude/skills"), "lint", "the claude one");
    // Same front matter name in two directories of one skill dir.
    let a = skill(&t.ws.join(".agents/skills"), "fmt-a", "a");
    let b = t.ws.join(".agents/skills/fmt-b/SKILL.md");
    fs::create_dir_all(b.parent().unwrap()).unwrap();
    fs::write(&b, fs::read_to_string(&a).unwrap().replace("fmt-a", "fmt")).unwrap();
    fs::write(&a, fs::read_to_string(&a).unwrap().replace("fmt-a", "fmt")).unwrap();

    let context = ProjectContext::discover(&t.ws, &t.config, Some(&t.home), None);
    let catalog = &context.skills;
    assert_eq!(catalog.get("lint").unwrap().path, first);
    assert_eq!(catalog.duplicates.len(), 2);
    let lint = catalog
        .duplicates
        .iter()
        .find(|d| d.name == "lint")
        .unwrap();
    assert_eq!((&lint.used, &lint.ignored), (&first, &vec![second.clone()]));
    let warnings = context.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let lint_warning = warnings.iter().find(|w| w.contains("skill lint")).unwrap();
    assert!(lint_warning.contains(&first.display().to_string()));
    assert!(lint_warning.contains(&second.display().to_string()));
}

#[test]
fn front_matter_fields_beyond_the_spec_are_ignored_and_bad_yaml_is_reported() {
    let t = tree();
    let dir = t.ws.join(".claude/skills");
    let full = dir.join("pdf/SKILL.md");
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(
        &full,
        "---\nname: pdf\ndescription: |\n  Fill PDF forms\n  and merge files.\nlicense: Apache-2.0\n\
         compatibility: needs python3\nmetadata:\n  author: someone\n  version: \"1.0\"\n\
         allowed-tools: Bash\nsomething-new: [1, 2]\n---\nBody\n",
    )
    .unwrap();
    let broken = dir.join("broken/SKILL.md");
    fs::create_dir_all(broken.parent().unwrap()).unwrap();
    fs::write(&broken, "---\nname: [oops\n---\n# Broken skill heading\n").unwrap();

    let catalog = discover_skills(&t.ws, &t.config, None);
    let pdf = catalog.get("pdf").unwrap();
    assert_eq!(pdf.description, "Fill PDF forms and merge files.");
    assert_eq!(pdf.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(pdf.compatibility.as_deref(), Some("needs python3"));
    // Listed by its directory's name, and the problem said.
    let fallback = catalog.get("broken").unwrap();
    assert_eq!(fallback.description, "Broken skill heading");
    assert_eq!(catalog.problems.len(), 1);
    assert!(
        catalog.problems[0].contains("not valid YAML"),
        "{:?}",
        catalog.problems
    );
    assert!(catalog.problems[0].contains(&broken.display().to_string()));
}

#[test]
fn the_prompt_lists_name_description_and_path_and_shortens_descriptions_to_fit() {
    let t = tree();
    let long = "word ".repeat(150);
    let paths: Vec<PathBuf> = (0..10)
        .map(|i| skill(&t.ws.join(".claude/skills"), &format!("skill-{i}"), &long))
        .collect();
    assert_eq!(skill_budget(None), 8_000);
    assert_eq!(
        skill_budget(Some(200_000)),
        16_000,
        "2% of the window, 4 chars a token"
    );

    // 10 × ~760 characters does not fit 8,000: descriptions are cut, nobody left out.
    let context = ProjectContext::discover(&t.ws, &t.config, None, None);
    let listing = &context.listing;
    assert!(listing.shortened);
    assert!(listing.left_out.is_empty());
    assert_eq!(listing.lines.len(), 10);
    let total: usize = listing.lines.iter().map(|l| l.chars().count() + 1).sum();
    assert!(total <= 8_000, "{total}");
    assert!(listing.lines[0].ends_with(&format!("… ({})", paths[0].display())));
    assert!(
        context.warnings().is_empty(),
        "shortening alone is no warning"
    );
    let prompt = build_system_prompt_on(chrono::NaiveDate::MIN, &context, &[], None);
    assert!(prompt.contains("# Skills"));
    assert!(prompt.contains(&listing.lines[9]));

    // A big window fits them whole.
    let roomy = ProjectContext::discover(&t.ws, &t.config, None, Some(1_000_000));
    assert!(!roomy.listing.shortened);
    assert!(roomy.listing.lines[0].contains(long.trim()));
}

#[test]
fn skills_that_do_not_fit_even_bare_are_left_out_with_a_warning_project_ones_kept_first() {
    let t = tree();
    for i in 0..4 {
        skill(&t.home.join(".claude/skills"), &format!("global-{i}"), "g");
        skill(&t.ws.join(".claw-tui/skills"), &format!("project-{i}"), "p");
    }
    let catalog = discover_skills(&t.ws, &t.config, Some(&t.home));
    let bare = format!(
        "- project-0 ({})",
        catalog.get("project-0").unwrap().path.display()
    );
    // Room for five bare lines: the four project skills and one global one.
    let budget = (bare.chars().count() + 1) * 5 + 4;
    let listing = list_skills(&catalog.skills, budget);
    assert_eq!(listing.left_out, ["global-1", "global-2", "global-3"]);
    let listed: Vec<&str> = listing
        .lines
        .iter()
        .map(|l| l.trim_start_matches("- ").split(' ').next().unwrap())
        .collect();
    assert_eq!(
        listed,
        [
            "global-0",
            "project-0",
            "project-1",
            "project-2",
            "project-3"
        ]
    );
    let warning = listing.warning().unwrap();
    assert!(
        warning.starts_with(&format!(
            "3 skill(s) left out of the system prompt, over its {budget}-character skill budget: \
             global-1, global-2, global-3"
        )),
        "{warning}"
    );
}

#[tokio::test]
async fn skill_files_outside_the_workspace_are_readable_and_never_writable() {
    let (dir, settings) = settings("");
    let home = dir.path().join("home");
    let skill_md = skill(&home.join(".claude/skills"), "deploy", "ship it");
    fs::write(skill_md.parent().unwrap().join("checklist.md"), "1. tag\n").unwrap();
    fs::write(home.join(".claude/settings.json"), "{\"secret\": 1}").unwrap();
    let context = ProjectContext::discover(
        &settings.workspace,
        &dir.path().join("config"),
        Some(&home),
        None,
    );
    let workspace = Arc::new(claw_tui::setup::workspace_for(&settings, &context));
    let read = ReadFileTool::new(workspace.clone());
    let ok = call(&read, json!({"path": skill_md})).await;
    assert!(!ok.is_error, "{}", ok.content);
    assert!(ok.content.contains("ship it"));
    let beside = call(
        &read,
        json!({"path": skill_md.with_file_name("checklist.md")}),
    )
    .await;
    assert!(beside.content.contains("1. tag"), "{}", beside.content);
    let listed = call(
        &ListDirTool::new(workspace.clone()),
        json!({"path": skill_md.parent().unwrap()}),
    )
    .await;
    assert!(
        listed.content.contains("checklist.md"),
        "{}",
        listed.content
    );

    // The rest of the home directory stays out of reach.
    let secret = call(&read, json!({"path": home.join(".claude/settings.json")})).await;
    assert!(secret.is_error, "{}", secret.content);
    assert!(!secret.content.contains("secret\": 1"));
    let escape = call(
        &read,
        json!({"path": skill_md.parent().unwrap().join("../../settings.json")}),
    )
    .await;
    assert!(escape.is_error, "{}", escape.content);

    // Writing into a skill is refused, and the file on disk is untouched.
    let write = WriteFileTool::new(workspace);
    let before = fs::read(&skill_md).unwrap();
    let refused = call(&write, json!({"path": skill_md, "content": "pwned"})).await;
    assert!(refused.is_error, "{}", refused.content);
    assert_eq!(fs::read(&skill_md).unwrap(), before);
    let new_file = skill_md.with_file_name("new.sh");
    let refused = call(&write, json!({"path": new_file, "content": "pwned"})).await;
    assert!(refused.is_error);
    assert!(!new_file.exists());
}

#[test]
fn the_real_binary_reads_a_home_skill_and_nothing_else_there() {
    use crate::support::bin::{Sandbox, run};
    let sb = Sandbox::new();
    let home = sb.dir.path().join("home");
    let skill_md = skill(&home.join(".agents/skills"), "review", "review a change");
    fs::write(home.join("private.txt"), "not for the model\n").unwrap();
    let mut cmd = sb.command();
    cmd.env("HOME", &home)
        .args(["-p", &format!("read {}", skill_md.display())]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("description: review a change"), "{stdout}");
    assert!(stderr.starts_with("✓ read_file"), "{stderr}");

    let mut cmd = sb.command();
    cmd.env("HOME", &home).args([
        "-p",
        &format!("read {}", home.join("private.txt").display()),
    ]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.starts_with("✗ read_file"), "{stderr}");
    assert!(!stdout.contains("not for the model"), "{stdout}");
}

#[test]
fn dollar_name_mentions_attach_the_skill_file_once() {
    use claw_tui::runtime::context::mention::{attach_skills, mentioned};
    let t = tree();
    let deploy = skill(&t.ws.join(".claude/skills"), "deploy", "ship it");
    skill(&t.ws.join(".claude/skills"), "db-migrate", "migrate");
    let catalog = discover_skills(&t.ws, &t.config, None);
    let text = "Use $deploy, then $db-migrate. Not $HOME, a$deploy or $unknown; $deploy again.";
    let names: Vec<&str> = mentioned(text, &catalog)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["deploy", "db-migrate"]);
    assert!(mentioned("price: $5 and $ alone", &catalog).is_empty());

    let attached =
        attach_skills(&t.ws, "Use $deploy.", &[("deploy".into(), deploy.clone())]).unwrap();
    assert_eq!(
        attached,
        format!(
            "Use $deploy.\n\n<skill name=\"deploy\" path=\"{}\">\n{}\n</skill>",
            deploy.display(),
            fs::read_to_string(&deploy).unwrap().trim_end()
        )
    );
    // A skill file that went away or grew too big stops the message with the reason.
    fs::write(&deploy, "x".repeat(70 * 1024)).unwrap();
    let err = attach_skills(&t.ws, "Use $deploy.", &[("deploy".into(), deploy.clone())])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("cannot attach skill deploy: "), "{err}");
    fs::remove_file(&deploy).unwrap();
    assert!(attach_skills(&t.ws, "x", &[("deploy".into(), deploy)]).is_err());
}

#[test]
fn the_budget_follows_the_configured_window_then_the_model_table_then_the_default() {
    use claw_tui::config::Api;
    use claw_tui::setup::project_context;
    let (_dir, mut settings) = settings("");
    // The demo model has no known window.
    assert_eq!(project_context(&settings).listing.budget, 8_000);
    settings.provider.api = Api::Anthropic;
    settings.provider.model = "claude-sonnet-4-5".into();
    assert_eq!(project_context(&settings).listing.budget, 16_000);
    settings.provider.context_window = Some(50_000);
    assert_eq!(project_context(&settings).listing.budget, 4_000);
}
