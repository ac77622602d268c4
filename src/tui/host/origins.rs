//! Where each setting the client can change came from — the config file, a flag or the
//! environment, the terminal, or nothing — for `/settings`, worked out from the settings
//! resolved and the file they read.

use crate::config::Settings;
use crate::tui::layout::PaneMode;
use crate::tui::settings::{Choices, ConfigInfo, Origin, Origins};

/// The client's view of its configuration: the file, the settings it starts with
/// (`theme` being the theme in use) and their origins.
pub fn config_info(settings: &Settings, theme: &str, model: &str) -> ConfigInfo {
    let file = &settings.file;
    let from_file = |set: bool| {
        if set {
            Origin::ConfigFile
        } else {
            Origin::Default
        }
    };
    let theme_origin = if file.ui.theme.is_some() || file.theme.is_some() {
        Origin::ConfigFile
    } else if settings.theme_chosen {
        Origin::CommandLine
    } else {
        Origin::Terminal
    };
    let entry = file.providers.get(&settings.provider.name);
    let model_origin = if entry.and_then(|e| e.model.as_deref()) == Some(model) {
        Origin::ConfigFile
    } else {
        // The provider's own default, or `--model`/the environment: the settings do not
        // keep which; a flag is the likelier when it is not the built-in default.
        Origin::CommandLine
    };
    let chosen = |in_file: bool, differs: bool| match (in_file, differs) {
        (true, _) => Origin::ConfigFile,
        (false, true) => Origin::CommandLine,
        (false, false) => Origin::Default,
    };
    let panes: PaneMode = file.ui.panes.unwrap_or_default().into();
    ConfigInfo {
        path: Some(settings.config_path.clone()),
        found: settings.config_path.is_file(),
        provider: settings.provider.name.clone(),
        started: Choices {
            theme: theme.to_owned(),
            panes,
            mouse: file.ui.mouse.unwrap_or(true),
            model: model.to_owned(),
            thinking: settings.thinking,
            tool_execution: settings.tool_execution,
            steering_mode: settings.steering_mode,
            follow_up_mode: settings.follow_up_mode,
        },
        origins: Origins {
            theme: theme_origin,
            panes: from_file(file.ui.panes.is_some()),
            mouse: from_file(file.ui.mouse.is_some()),
            model: model_origin,
            thinking: chosen(
                file.agent.thinking.is_some(),
                settings.thinking != Default::default(),
            ),
            tool_execution: chosen(
                file.agent.tool_execution.is_some(),
                settings.tool_execution != Default::default(),
            ),
            steering_mode: from_file(file.agent.steering_mode.is_some()),
            follow_up_mode: from_file(file.agent.follow_up_mode.is_some()),
        },
    }
}
