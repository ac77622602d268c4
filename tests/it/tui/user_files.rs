//! `App::update` with the user's files: custom commands become their prompts, `$name`
//! asks for the skill to be attached (and a failure gives the text back), `/skills`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::*;
use claw_tui::commands::discover_commands;
use claw_tui::runtime::context::ProjectContext;
use claw_tui::tui::{App, Effect, Msg, UserFiles};
use crossterm::event::KeyCode;
use std::fs;
use std::sync::Arc;

fn app_with_files(dir: &std::path::Path) -> App {
    let ws = dir.join("ws");
    let skill = ws.join(".claude/skills/deploy/SKILL.md");
    fs::create_dir_all(skill.parent().unwrap()).unwrap();
    fs::write(
        &skill,
        "---\nname: deploy\ndescription: Ship the build\n---\nSteps\n",
    )
    .unwrap();
    let command = ws.join(".claude/commands/review.md");
    fs::create_dir_all(command.parent().unwrap()).unwrap();
    fs::write(
        &command,
        "---\ndescription: Review a file\nargument-hint: FILE FOCUS\n---\nReview $1 for $2.",
    )
    .unwrap();
    fs::write(ws.join("CLAUDE.md"), "Be brief.").unwrap();
    let config_dir = dir.join("config");
    let mut config = config();
    config.user_files = UserFiles {
        context: Arc::new(ProjectContext::discover(&ws, &config_dir, None, None)),
        commands: Arc::new(discover_commands(&ws, &config_dir, None, &["help"])),
    };
    let mut app = App::new(config);
    app.update(Msg::Term(crossterm::event::Event::Resize(120, 40)));
    app
}

fn enter(app: &mut App, text: &str) -> Vec<Effect> {
    typed(app, text);
    app.update(key(KeyCode::Esc));
    app.update(key(KeyCode::Enter))
}

#[test]
fn a_custom_command_is_sent_as_its_prompt_and_mentions_ask_for_the_skill() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with_files(dir.path());
    let effects = enter(&mut app, "/review main.rs safety");
    assert_eq!(
        effects.last(),
        Some(&Effect::Prompt("Review main.rs for safety.".into()))
    );

    let effects = enter(&mut app, "please $deploy");
    let Some(Effect::AttachSkills { text, skills }) = effects.last() else {
        panic!("{effects:?}");
    };
    assert_eq!(text, "please $deploy");
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].0, "deploy");
    assert!(skills[0].1.ends_with(".claude/skills/deploy/SKILL.md"));

    // Attached: sent as one message; an `@file` inside the skill is no image mention.
    let effects = app.update(Msg::SkillsAttached {
        text: "please $deploy".into(),
        result: Ok("please $deploy\n\n<skill …>see @shot.png</skill>".into()),
    });
    assert_eq!(
        effects.last(),
        Some(&Effect::Prompt(
            "please $deploy\n\n<skill …>see @shot.png</skill>".into()
        ))
    );
    // Not attached: nothing is sent and the text is back in the composer.
    let effects = app.update(Msg::SkillsAttached {
        text: "please $deploy".into(),
        result: Err(claw_tui::runtime::context::SkillAttachError::Read {
            name: "deploy".into(),
            path: "/gone/SKILL.md".into(),
            source: std::sync::Arc::new(claw_tui::tools::fs::own::OwnFileError::Io {
                path: "/gone/SKILL.md".into(),
                source: std::io::ErrorKind::NotFound.into(),
            }),
        }),
    });
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Prompt(_) | Effect::FollowUp(_))),
        "{effects:?}"
    );
    assert_eq!(app.composer().text(), "please $deploy");
}

#[test]
fn skills_lists_each_skill_with_source_path_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with_files(dir.path());
    enter(&mut app, "/skills");
    let mut terminal = crate::support::tui::scene::draw(&mut app);
    let screen: String = terminal
        .backend_mut()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        screen.contains("$deploy — Ship the build (project, .claude/skills)"),
        "{screen}"
    );
    let size = fs::metadata(dir.path().join("ws/.claude/skills/deploy/SKILL.md"))
        .unwrap()
        .len();
    assert!(screen.contains(&format!("{size} B")), "{screen}");
    assert!(screen.contains("SKILL.md"), "{screen}");
}

#[test]
fn the_slash_popup_offers_custom_commands_after_the_builtins_with_description_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with_files(dir.path());
    typed(&mut app, "/revi");
    let completion = app.composer().completion().unwrap();
    assert_eq!(completion.items, ["/review"]);
    assert_eq!(
        completion.details,
        ["FILE FOCUS · Review a file (.claude/commands)"]
    );
    app.update(key(KeyCode::Esc));
    app.update(ctrl('c'));
    // Built-ins come first; /s lists /steering, /status, /skills, /sessions, ...
    typed(&mut app, "/s");
    let items = &app.composer().completion().unwrap().items;
    assert!(items.contains(&"/skills".to_owned()), "{items:?}");
}

#[test]
fn status_lists_the_instructions_files_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with_files(dir.path());
    enter(&mut app, "/status");
    let mut shown = String::new();
    // The overlay scrolls: read it page by page.
    for _ in 0..4 {
        shown.push_str(&crate::support::tui::scene::screen(&mut app).join("\n"));
        app.update(key(KeyCode::PageDown));
    }
    let claude = dir.path().join("ws/CLAUDE.md");
    assert!(shown.contains("Your files"), "{shown}");
    assert!(shown.contains(&claude.display().to_string()), "{shown}");
    assert!(shown.contains("1 (1 in the prompt)"), "{shown}");
    assert!(shown.contains("1 of your own"), "{shown}");
}

#[test]
fn skills_shows_a_broken_skill_as_broken_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("ws/.claude/skills/open/SKILL.md");
    fs::create_dir_all(open.parent().unwrap()).unwrap();
    fs::write(&open, "---\nname: open\ndescription: never closed\n").unwrap();
    let mut app = app_with_files(dir.path());
    enter(&mut app, "/skills");
    let screen = crate::support::tui::scene::screen(&mut app).join("\n");
    assert!(
        screen.contains("Broken, not offered to the model (1):"),
        "{screen}"
    );
    assert!(screen.contains("✗ open — "), "{screen}");
    assert!(screen.contains("open/SKILL.md line 1:"), "{screen}");
    assert!(
        screen.contains("its front matter (opened on line 1) is never closed"),
        "{screen}"
    );
    // The good one is listed as before; the broken one is not among the skills.
    assert!(screen.contains("Skills (1):"), "{screen}");
    assert!(!screen.contains("$open"), "{screen}");
}
