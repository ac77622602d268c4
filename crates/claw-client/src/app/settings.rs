//! `/settings` on the app's side: the settings as the parts hold them now, the rows the
//! overlay shows, and saving what changed (the runtime writes the file).

use super::App;
use crate::msg::Effect;
use crate::overlay::{Overlay, StatusRow};
use crate::part::{HINT, Handled};
use crate::settings::Choices;
use claw_agent::NoticeLevel;

impl App {
    /// The settings the client runs with now.
    fn choices(&self) -> Choices {
        Choices {
            theme: self.theme.name.clone(),
            panes: self.panes,
            mouse: self.mouse_capture,
            model: self.status.model().to_owned(),
            thinking: self.status.thinking(),
            tool_execution: self.status.tool_execution(),
            steering_mode: self.status.queue_modes().0,
            follow_up_mode: self.status.queue_modes().1,
        }
    }

    /// `/settings`: the overlay.
    pub(super) fn open_settings(&mut self) -> Handled {
        self.overlays.push(Overlay::Settings { scroll: 0 })
    }

    /// The rows `/settings` shows.
    pub(crate) fn settings_rows(&self) -> Vec<StatusRow> {
        self.config_info.view_rows(&self.choices())
    }

    /// `s` in `/settings`: what changed here goes into the config file.
    pub(super) fn save_settings(&mut self) -> Handled {
        let settings = self.config_info.changed(&self.choices());
        if settings.is_empty() {
            return self.hint("nothing changed here to save", HINT);
        }
        let Some(path) = self.config_info.path.clone() else {
            return self.chat.notice(
                NoticeLevel::Warning,
                "There is no config file to save to in this run.",
            );
        };
        Handled::changed().with(Effect::SaveSettings { path, settings })
    }

    /// The runtime saved the settings (`Ok`: the keys written) or could not.
    pub(super) fn settings_saved(&mut self, outcome: Result<Vec<String>, String>) -> Handled {
        match outcome {
            Ok(keys) => {
                let now = self.choices();
                self.config_info.saved(&now);
                let path = self
                    .config_info
                    .path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                self.chat.notice(
                    NoticeLevel::Info,
                    format!("Saved {} to {path}.", keys.join(", ")),
                )
            }
            Err(why) => self.chat.notice(NoticeLevel::Error, why),
        }
    }

    /// The config file as `/status` names it.
    pub(super) fn config_file_row(&self) -> StatusRow {
        let info = &self.config_info;
        let value = match (&info.path, info.found) {
            (Some(path), true) => path.display().to_string(),
            (Some(path), false) => format!("{} (not there: defaults)", path.display()),
            (None, _) => "none".to_owned(),
        };
        StatusRow::new("config file", value)
    }
}
