//! Model selection: the protocol's `model` session config option (`session/set_config_option`),
//! the same switch as the terminal client's `/model`: the next run uses the model chosen.
//! Offered are the model in use and those the config file names, as `/model` completes
//! them before it asks the server (asking it here would cost a request per session).

use crate::config::Settings;
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
};

/// The option's id.
pub const MODEL_OPTION: &str = "model";

/// The models to offer: `current` first, then each model a provider entry of the config
/// names, once.
pub fn offered(settings: &Settings, current: &str) -> Vec<String> {
    let mut models = vec![current.to_owned()];
    for entry in settings.file.providers.values() {
        if let Some(model) = &entry.model
            && !models.contains(model)
        {
            models.push(model.clone());
        }
    }
    models
}

/// The config options of a session whose model is `current`, among `models`.
pub fn options(current: &str, models: &[String]) -> Vec<SessionConfigOption> {
    let choices: Vec<SessionConfigSelectOption> = models
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.clone(), m.clone()))
        .collect();
    vec![
        SessionConfigOption::select(MODEL_OPTION, "Model", current.to_owned(), choices)
            .description("The model the next run uses".to_owned())
            .category(SessionConfigOptionCategory::Model),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{SessionConfigKind, SessionConfigSelectOptions};

    #[test]
    fn the_model_in_use_comes_first_and_is_the_current_value() {
        let models = vec!["b".to_owned(), "a".to_owned()];
        let [option] = options("b", &models).try_into().unwrap();
        assert_eq!(option.id.0.as_ref(), MODEL_OPTION);
        assert_eq!(option.category, Some(SessionConfigOptionCategory::Model));
        let SessionConfigKind::Select(select) = option.kind else {
            unreachable!()
        };
        assert_eq!(select.current_value.0.as_ref(), "b");
        let SessionConfigSelectOptions::Ungrouped(choices) = select.options else {
            unreachable!()
        };
        let values: Vec<&str> = choices.iter().map(|c| c.value.0.as_ref()).collect();
        assert_eq!(values, ["b", "a"]);
    }
}
