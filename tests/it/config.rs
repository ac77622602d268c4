//! Resolution of flags, environment and config file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use clap::Parser;
use claw_tui::agent::{ThinkingLevel, ToolExecution};
use claw_tui::cli::{Cli, ThinkingFlag};
use claw_tui::config::{Api, ConfigError, DEMO_MODEL, resolve};
use claw_tui::keymap::{Action, KeyMap};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use tempfile::TempDir;

struct Case {
    dir: TempDir,
    env: HashMap<String, String>,
}

impl Case {
    fn new(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        Self {
            dir,
            env: HashMap::new(),
        }
    }

    fn env(mut self, k: &str, v: &str) -> Self {
        self.env.insert(k.into(), v.into());
        self
    }

    fn cli(&self, args: &[&str]) -> Cli {
        let config = self.dir.path().join("config.toml");
        let mut all = vec![
            "claw-tui".to_owned(),
            "--config".into(),
            config.display().to_string(),
        ];
        all.extend(["--workspace".into(), self.dir.path().display().to_string()]);
        all.extend(args.iter().map(|s| (*s).to_owned()));
        Cli::parse_from(all)
    }

    fn resolve(&self, args: &[&str]) -> Result<claw_tui::config::Settings, ConfigError> {
        let env = self.env.clone();
        resolve(&self.cli(args).config_flags(), &move |k| {
            env.get(k).cloned()
        })
    }
}

#[test]
fn no_keys_means_the_demo_provider() {
    let s = Case::new("").resolve(&[]).unwrap();
    assert_eq!(s.provider.api, Api::Demo);
    assert_eq!(s.provider.model, DEMO_MODEL);
    assert_eq!(s.max_turns, 50);
    assert_eq!(s.tool_execution, ToolExecution::Parallel);
}

#[test]
fn anthropic_key_wins_over_openai_key_and_names_its_source() {
    let s = Case::new("")
        .env("ANTHROPIC_API_KEY", "sk-ant-x")
        .env("OPENAI_API_KEY", "sk-o")
        .resolve(&[])
        .unwrap();
    assert_eq!(s.provider.api, Api::Anthropic);
    assert_eq!(s.provider.api_key.as_deref(), Some("sk-ant-x"));
    assert!(s.provider.api_key_source.contains("ANTHROPIC_API_KEY"));
    assert!(
        !format!("{:?}", s.provider).contains("sk-ant-x"),
        "Debug never shows the key"
    );
    let s = Case::new("")
        .env("OPENAI_API_KEY", "sk-o")
        .resolve(&[])
        .unwrap();
    assert_eq!(s.provider.api, Api::Openai);
}

#[test]
fn flags_beat_env_beat_file() {
    let case = Case::new(
        "provider = \"openai\"\n[agent]\nmax_turns = 7\nthinking = \"low\"\n[providers.openai]\nmodel = \"from-file\"\nbase_url = \"http://file\"\n",
    )
    .env("OPENAI_API_KEY", "k")
    .env("OPENAI_BASE_URL", "http://env");
    let s = case.resolve(&[]).unwrap();
    assert_eq!(s.provider.model, "from-file");
    assert_eq!(s.provider.base_url.as_deref(), Some("http://env"));
    assert_eq!(s.max_turns, 7);
    assert_eq!(s.thinking, ThinkingLevel::Low);
    let s = case
        .resolve(&[
            "--model",
            "flag-model",
            "--base-url",
            "http://flag",
            "--max-turns",
            "3",
            "--thinking",
            "high",
        ])
        .unwrap();
    assert_eq!(s.provider.model, "flag-model");
    assert_eq!(s.provider.base_url.as_deref(), Some("http://flag"));
    assert_eq!(s.max_turns, 3);
    assert_eq!(s.thinking, ThinkingLevel::from(ThinkingFlag::High));
}

#[test]
fn named_provider_entry_with_custom_key_env() {
    let case = Case::new(
        "provider = \"local\"\n[providers.local]\napi = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"llama3.2\"\napi_key_env = \"LOCAL_KEY\"\n[providers.local.compat]\nmax_completion_tokens = true\n",
    )
    .env("LOCAL_KEY", "lk");
    let s = case.resolve(&[]).unwrap();
    assert_eq!(s.provider.name, "local");
    assert_eq!(s.provider.api, Api::Openai);
    assert_eq!(s.provider.model, "llama3.2");
    assert_eq!(s.provider.api_key.as_deref(), Some("lk"));
    assert!(s.provider.api_key_source.contains("LOCAL_KEY"));
    assert_eq!(s.provider.compat.max_completion_tokens, Some(true));
}

/// A variable named for the key and not set: the server is still used without a key
/// (a local one needs none), and the start says so once.
#[test]
fn an_api_key_env_naming_an_unset_variable_warns() {
    let case = Case::new(
        "provider = \"gateway\"\n[providers.gateway]\napi = \"anthropic\"\nbase_url = \"http://127.0.0.1:4000\"\napi_key_env = \"GATEWAY_KEY\"\n",
    );
    let s = case.resolve(&[]).unwrap();
    assert_eq!(s.provider.api_key, None);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        s.warnings[0]
            .contains("[providers.gateway] api_key_env names GATEWAY_KEY, which is not set"),
        "{:?}",
        s.warnings
    );
    let set = case.env("GATEWAY_KEY", "gk").resolve(&[]).unwrap();
    assert!(set.warnings.is_empty(), "{:?}", set.warnings);
}

#[test]
fn custom_base_url_needs_no_key_but_the_default_url_does() {
    let case = Case::new("");
    let s = case
        .resolve(&[
            "--provider",
            "openai",
            "--base-url",
            "http://127.0.0.1:8080/v1",
        ])
        .unwrap();
    assert_eq!(s.provider.api_key, None);
    let err = case
        .resolve(&["--provider", "anthropic"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
}

#[test]
fn key_in_a_world_readable_file_warns() {
    let case = Case::new("[providers.anthropic]\napi_key = \"sk-ant-file\"\n");
    let path = case.dir.path().join("config.toml");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = case.resolve(&["--provider", "anthropic"]).unwrap();
    assert_eq!(s.provider.api_key.as_deref(), Some("sk-ant-file"));
    assert!(s.provider.api_key_source.contains("config.toml"));
    assert_eq!(s.warnings.len(), 1);
    assert!(s.warnings[0].contains("chmod 600"), "{:?}", s.warnings);
    assert!(!s.warnings[0].contains("sk-ant-file"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let s = case.resolve(&["--provider", "anthropic"]).unwrap();
    assert!(s.warnings.is_empty());
}

#[test]
fn broken_file_names_file_line_and_key() {
    let case = Case::new("[agent]\n\ntool_execution = \"sideways\"\n");
    let err = case.resolve(&[]).unwrap_err().to_string();
    assert!(err.contains("config.toml"), "{err}");
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("tool_execution"), "{err}");
}

#[test]
fn tools_and_web_sections_are_read() {
    let case = Case::new(
        "[tools]\ndisabled = [\"web_search\"]\nallow_outside_workspace = true\n[web]\nallow_hosts = [\"127.0.0.1\"]\n",
    );
    let s = case.resolve(&[]).unwrap();
    assert_eq!(s.file.tools.disabled, ["web_search"]);
    assert!(s.file.tools.allow_outside_workspace);
    assert_eq!(s.file.web.allow_hosts, ["127.0.0.1"]);
}

#[test]
fn theme_comes_from_the_flag_then_ui_then_the_top_level_key() {
    assert_eq!(Case::new("").resolve(&[]).unwrap().theme, "dark");
    let old = Case::new("theme = \"light\"\n");
    assert_eq!(old.resolve(&[]).unwrap().theme, "light");
    let both = Case::new("theme = \"light\"\n[ui]\ntheme = \"high-contrast\"\n");
    assert_eq!(both.resolve(&[]).unwrap().theme, "high-contrast");
    assert_eq!(
        both.resolve(&["--theme", "dark"]).unwrap().theme,
        "dark",
        "the flag wins over the file"
    );
}

#[test]
fn ui_panes_is_read_and_a_wrong_value_is_named() {
    use claw_tui::config::Panes;
    let s = Case::new("[ui]\npanes = \"hide\"\n").resolve(&[]).unwrap();
    assert_eq!(s.file.ui.panes, Some(Panes::Hide));
    assert_eq!(Case::new("").resolve(&[]).unwrap().file.ui.panes, None);
    let err = Case::new("[ui]\npanes = \"sometimes\"\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 2"), "{err}");
    assert!(
        err.contains("sometimes") && err.contains("auto") && err.contains("hide"),
        "names the value and the choices: {err}"
    );
}

#[test]
fn ui_mouse_is_read_and_unknown_ui_keys_are_named() {
    let s = Case::new("[ui]\nmouse = false\n").resolve(&[]).unwrap();
    assert_eq!(s.file.ui.mouse, Some(false));
    assert_eq!(Case::new("").resolve(&[]).unwrap().file.ui.mouse, None);
    let err = Case::new("[ui]\ntheme = \"dark\"\ncolour = \"blue\"\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("colour"), "{err}");
    assert!(err.contains("line 3"), "{err}");
    assert!(
        err.contains("theme") && err.contains("mouse"),
        "lists the keys: {err}"
    );
}

#[test]
fn keys_section_is_kept_and_feeds_the_key_map() {
    let s = Case::new("[keys]\nsubmit = \"ctrl+s\"\nnewline = [\"enter\", \"ctrl+j\"]\n")
        .resolve(&[])
        .unwrap();
    assert_eq!(s.file.keys.len(), 2);
    let map = KeyMap::from_table(&s.file.keys).unwrap();
    assert_eq!(
        map.action(&KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)),
        Some(Action::Submit)
    );
    assert_eq!(
        map.action(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        Some(Action::Newline)
    );
    assert!(Case::new("").resolve(&[]).unwrap().file.keys.is_empty());
}

#[test]
fn bad_keys_are_config_errors_naming_the_action_and_line() {
    let err = Case::new("provider = \"demo\"\n[keys]\nsubmit = \"ctrl+nope\"\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("`submit`") && err.contains("nope"), "{err}");
    assert!(
        err.contains("config.toml") && err.contains("line 3"),
        "{err}"
    );
    let err = Case::new("[keys]\nsumbit = \"ctrl+s\"\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`sumbit`") && err.contains("submit, newline"),
        "{err}"
    );
    let err = Case::new("[keys]\nhelp = \"f2\"\nnewline = \"enter\"\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 3") && err.contains("`submit`") && err.contains("`newline`"),
        "a key bound twice points at the entry: {err}"
    );
}

#[test]
fn the_wire_format_comes_from_the_flag_then_the_entry_and_caching_can_be_turned_off() {
    let case = Case::new(
        "provider = \"azure\"\n[providers.azure]\napi = \"openai-responses\"\n\
         base_url = \"https://example.openai.azure.com/openai/v1\"\nmodel = \"gpt-5\"\n\
         cache = false\n",
    );
    let s = case.resolve(&[]).unwrap();
    assert_eq!(s.provider.api, Api::OpenaiResponses);
    assert!(!s.provider.cache);
    let wire = claw_tui::providers::wire_config(&s.provider, 1, 1).unwrap();
    assert!(matches!(wire, claw_tui::llm::WireConfig::Responses(_)));
    assert!(!wire.remote().cache);

    let s = case.resolve(&["--api", "openai"]).unwrap();
    assert_eq!(s.provider.api, Api::Openai);
    let wire = claw_tui::providers::wire_config(&s.provider, 1, 1).unwrap();
    assert!(matches!(
        wire,
        claw_tui::llm::WireConfig::ChatCompletions(_)
    ));

    // The built-in openai provider talks to OpenAI itself over the Responses API, with
    // caching on by default.
    let s = Case::new("")
        .env("OPENAI_API_KEY", "sk")
        .resolve(&[])
        .unwrap();
    assert!(s.provider.cache);
    let wire = claw_tui::providers::wire_config(&s.provider, 1, 1).unwrap();
    assert!(matches!(wire, claw_tui::llm::WireConfig::Responses(_)));
    assert_eq!(wire.remote().base_url, "https://api.openai.com/v1");

    let err = Case::new("[providers.x]\napi = \"openai-chat\"\n")
        .resolve(&["--provider", "x"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("openai-responses"), "{err}");
}

#[test]
fn compaction_section_is_read_with_defaults_and_unknown_keys_are_named() {
    let defaults = Case::new("").resolve(&[]).unwrap().compaction;
    assert!(defaults.enabled);
    assert_eq!(
        (defaults.reserve_tokens, defaults.keep_recent_tokens),
        (16_384, 20_000)
    );
    assert_eq!(defaults.model, None);
    let s = Case::new(
        "[compaction]\nenabled = false\nreserve_tokens = 2000\nkeep_recent_tokens = 3000\nmodel = \"small-model\"\n",
    )
    .resolve(&[])
    .unwrap();
    assert!(!s.compaction.enabled);
    assert_eq!(
        (s.compaction.reserve_tokens, s.compaction.keep_recent_tokens),
        (2_000, 3_000)
    );
    assert_eq!(s.compaction.model.as_deref(), Some("small-model"));
    let err = Case::new("[compaction]\nenabled = true\nkeep_tokens = 5\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("keep_tokens") && err.contains("line 3"),
        "{err}"
    );
    let err = Case::new("[compaction]\nreserve_tokens = -1\n")
        .resolve(&[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("reserve_tokens"), "{err}");
}
