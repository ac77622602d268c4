//! claw-tui: an LLM agent runtime with a full-screen terminal client.
//!
//! `agent` holds the loop and the `Agent` facade; `llm` the providers; `tools` the
//! built-in tools; `config` and `cli` the settings; `headless` the scriptable modes.

pub use claw_agent as agent;
pub mod acp;
pub mod attach;
pub mod checkpoint;
pub mod cli;
pub mod commands;
pub mod config;
pub mod doctor;
pub mod exit;
pub mod export;
pub mod front_matter;
pub mod headless;
pub mod hooks;
pub mod inspect;
pub mod keymap;
pub mod launcher;
pub use claw_llm as llm;
pub mod logging;
pub mod mcp;
pub mod providers;
pub mod replay;
pub mod runtime;
pub mod session;
pub mod setup;
pub mod signals;
pub mod syntax;
pub use claw_text as text;
pub use claw_tools as tools;
pub use claw_tools::{images, private_fs, visible};
pub mod theme;
pub mod trust;
pub mod tui;
