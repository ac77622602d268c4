//! Settings (the client issue's item 12): `/status` names the config file; `/settings`
//! shows each setting with where it came from, marks what changed in the client, and
//! `s` saves that into the config file — the runtime writes it, keeping its comments.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::config::save::SettingValue;
use claw_tui::tui::settings::{Choices, ConfigInfo, Origin, Origins};
use claw_tui::tui::{App, AppConfig, Effect, Msg, Overlay};
use crossterm::event::KeyCode;
use std::path::PathBuf;

fn with_config_file() -> App {
    let started = Choices {
        theme: "dark".into(),
        model: "demo (offline)".into(),
        mouse: true,
        panes: claw_tui::tui::layout::PaneMode::Shown,
        ..Choices::default()
    };
    let mut app = App::new(AppConfig {
        config_info: ConfigInfo {
            path: Some(PathBuf::from("/home/u/.config/claw-tui/config.toml")),
            found: true,
            provider: "demo".into(),
            started,
            origins: Origins {
                theme: Origin::Terminal,
                ..Origins::default()
            },
        },
        ..config()
    });
    app.update(Msg::Term(crossterm::event::Event::Resize(120, 40)));
    app
}

#[test]
fn status_names_the_config_file_and_settings_say_where_each_came_from() {
    let mut app = with_config_file();
    typed(&mut app, "/status");
    app.update(key(KeyCode::Enter));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("config file     /home/u/.config/claw-tui/config.toml"),
        "{shown}"
    );
    app.update(key(KeyCode::Esc));

    typed(&mut app, "/settings");
    app.update(key(KeyCode::Enter));
    assert!(matches!(app.overlay(), Some(Overlay::Settings { .. })));
    let shown = screen(&mut app).join("\n");
    assert!(shown.contains("(the terminal's background)"), "{shown}");
    assert!(shown.contains("Nothing changed here"), "{shown}");
    // `s` with nothing changed writes nothing.
    let effects = app.update(key(KeyCode::Char('s')));
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::SaveSettings { .. }))
    );
}

#[test]
fn what_changed_in_the_client_is_saved_with_s_and_confirmed() {
    let mut app = with_config_file();
    app.update(key(KeyCode::F(12)));
    app.update(key(KeyCode::F(4)));
    typed(&mut app, "/settings");
    app.update(key(KeyCode::Enter));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("mouse           false   (changed here, not saved)"),
        "{shown}"
    );
    insta::assert_snapshot!("settings_changed_120x40", draw(&mut app).backend());
    let effects = app.update(key(KeyCode::Char('s')));
    let Some(Effect::SaveSettings { path, settings }) = effects
        .iter()
        .find(|e| matches!(e, Effect::SaveSettings { .. }))
    else {
        panic!("{effects:?}");
    };
    assert_eq!(path, &PathBuf::from("/home/u/.config/claw-tui/config.toml"));
    let saved: Vec<(String, SettingValue)> = settings
        .iter()
        .map(|s| (format!("{}.{}", s.table.join("."), s.key), s.value.clone()))
        .collect();
    assert_eq!(
        saved,
        [
            ("ui.panes".into(), SettingValue::Text("hide".into())),
            ("ui.mouse".into(), SettingValue::Flag(false)),
        ]
    );
    app.update(Msg::SettingsSaved(Ok(vec!["panes".into(), "mouse".into()])));
    app.update(key(KeyCode::Esc));
    let shown = screen(&mut app).join("\n");
    assert!(
        shown.contains("Saved panes, mouse to /home/u/.config/claw-tui/config.toml."),
        "{shown}"
    );
}
