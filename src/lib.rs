//! claw-tui: an LLM agent runtime with a full-screen terminal client.
//!
//! This package holds the front-ends: the terminal client (`tui`), the scriptable modes
//! (`headless`), the editor protocol (`acp`), `replay`, `export`, `doctor`, the flags
//! (`cli`) and the `launcher` that picks one. Everything below them lives in the
//! workspace's crates and is re-exported here under its old names: `agent` (the loop
//! and the `Agent` facade), `llm` (the providers), `tools` (the built-in tools), and the
//! runtime's modules (`config`, `session`, `mcp`, `hooks`, `runtime`, ...).

pub use claw_agent as agent;
pub mod acp;
pub mod attach;
pub mod cli;
pub mod doctor;
pub mod export;
pub mod headless;
pub mod launcher;
pub use claw_llm as llm;
pub mod logging;
pub mod replay;
pub use claw_runtime::{
    checkpoint, commands, config, exit, front_matter, hooks, inspect, keymap, mcp, providers,
    runtime, session, setup, trust, typed,
};
pub mod signals;
pub use claw_client::{syntax, theme};
pub use claw_text as text;
pub use claw_tools as tools;
pub use claw_tools::{images, private_fs, visible};
pub mod tui;
