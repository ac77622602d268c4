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
    fs::write(&command, "Review $1 for $2.").unwrap();
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
        result: Err("cannot attach skill deploy: gone".into()),
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
