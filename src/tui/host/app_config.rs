//! The client's configuration from the settings: theme (with `NO_COLOR` and the
//! terminal's background), keys, models, the sandbox as `/status` words it, the themes
//! `/theme` offers, and where each setting came from. Errors here are for the user to
//! fix before the screen is taken.

use super::adapt::display_path;
use crate::config::Settings;
use crate::keymap::KeyMap;
use crate::theme::{Theme, no_color_requested, user_theme_dir};
use crate::tui::AppConfig;
use crate::typed::PromptFiles;
use color_eyre::eyre::eyre;
use std::path::Path;
use std::sync::Arc;

/// Theme (with `NO_COLOR`), keys and the rest of the app's configuration; an error is
/// for the user to fix before the client starts.
pub(crate) fn app_config(settings: &Settings, model: String) -> color_eyre::Result<AppConfig> {
    // Before anything is asked of the terminal (its background, its keyboard).
    refuse_dumb_terminal(std::env::var("TERM").ok().as_deref())?;
    let name = if settings.theme_chosen {
        settings.theme.as_str()
    } else {
        super::palette::fitting_theme()
    };
    let theme = Theme::load(name, user_theme_dir(&settings.config_path).as_deref())
        .map_err(|e| eyre!(e))?;
    let theme = if no_color_requested(std::env::var("NO_COLOR").ok().as_deref()) {
        theme.without_color()
    } else {
        theme
    };
    let keymap = KeyMap::from_table(&settings.file.keys).map_err(|e| eyre!(e))?;
    let mut models: Vec<String> = vec![model.clone()];
    for entry in settings.file.providers.values() {
        if let Some(m) = &entry.model
            && !models.contains(m)
        {
            models.push(m.clone());
        }
    }
    let mut config = AppConfig::new(settings.provider.name.clone(), model);
    config.shift_enter = super::terminal::tells_shift_enter_apart();
    config.theme = theme;
    config.keymap = keymap;
    config.models = models;
    config.context_window = settings.provider.context_window;
    if settings.provider.prices.is_some() {
        config.priced_models = vec![settings.provider.model.clone()];
    }
    config.offline = settings.provider.api == crate::config::Api::Demo;
    // Shown in /status: without the credentials a base URL may carry.
    config.base_url = settings
        .provider
        .base_url
        .as_deref()
        .map(crate::llm::tap::redact_url);
    config.sandbox = sandbox_words(&settings.file.exec);
    config.themes = theme_names(user_theme_dir(&settings.config_path).as_deref());
    config.compaction = settings.compaction.clone();
    config.workspace = display_path(&settings.workspace);
    config.thinking = settings.thinking;
    config.tool_execution = settings.tool_execution;
    config.queue_modes = (settings.steering_mode, settings.follow_up_mode);
    config.mouse_capture = settings.file.ui.mouse.unwrap_or(true);
    config.panes = settings.file.ui.panes.unwrap_or_default().into();
    config.config_info = super::origins::config_info(settings, name, &config.model);
    Ok(config)
}

/// `TERM=dumb` (Emacs' shell buffers, some CI consoles) has no cursor movement, no
/// alternate screen and no colours: the full-screen client cannot be shown there.
fn refuse_dumb_terminal(term: Option<&str>) -> color_eyre::Result<()> {
    if term == Some("dumb") {
        return Err(eyre!(
            "TERM=dumb: this terminal cannot show the full-screen client (no cursor \
             movement, no colours). Use claw-tui -p \"PROMPT\" (or --mode json) for answers \
             as plain text, or set TERM to your terminal's type (e.g. xterm-256color)."
        ));
    }
    Ok(())
}

/// The custom commands of the settings' workspace beside the skills and instructions
/// files the runtime found; a command file named like a built-in is not used.
pub(super) fn user_files(
    settings: &Settings,
    context: Arc<crate::runtime::context::ProjectContext>,
) -> crate::tui::UserFiles {
    let found = PromptFiles::find(settings, context, &builtin_command_names());
    crate::tui::UserFiles {
        context: found.context,
        commands: found.commands,
    }
}

/// The client's own command names (without the slash): a custom command of one of
/// these names is not used, by the client or by any other front-end.
pub(crate) fn builtin_command_names() -> Vec<&'static str> {
    crate::tui::slash::COMMANDS
        .iter()
        .map(|(name, _, _)| name.trim_start_matches('/'))
        .chain(["exit"])
        .collect()
}

/// How commands are sandboxed, as `/status` says it.
fn sandbox_words(exec: &crate::tools::exec::ExecConfig) -> String {
    use crate::tools::exec::{NetworkMode, SandboxMode};
    let mut words = vec![
        match exec.sandbox {
            SandboxMode::WorkspaceWrite => "workspace-write (Landlock)",
            SandboxMode::Off => "off (no Landlock, no namespaces)",
        }
        .to_owned(),
    ];
    if exec.sandbox == SandboxMode::WorkspaceWrite {
        words.push(match exec.network {
            NetworkMode::Allow => "network allowed".to_owned(),
            NetworkMode::Deny => "network denied".to_owned(),
        });
        if exec.pid_namespace {
            words.push("own pid namespace".to_owned());
        }
    }
    let approval = serde_json::to_value(exec.approval)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    words.push(format!("approval {approval}"));
    words.join(" · ")
}

/// The built-in themes and the user's theme files (`themes/NAME.toml`), for `/theme`.
fn theme_names(user_dir: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = crate::theme::BUILTIN_THEMES
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let files = user_dir.and_then(|dir| std::fs::read_dir(dir).ok());
    for entry in files.into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            && !names.iter().any(|n| n == stem)
        {
            names.push(stem.to_owned());
        }
    }
    names
}
