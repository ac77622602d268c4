//! The runtime of claw-tui, below every front-end: the bus, subagents, cron and the
//! supervisor ([`runtime`]), sessions and their recording ([`session`], [`inspect`]'s
//! request log), MCP ([`mcp`]), hooks, checkpoints, trust, custom commands, the
//! configuration ([`config`], with the `[keys]` table's [`keymap`]) and [`setup`],
//! which builds the main agent every front-end starts from. It never names a
//! front-end: those pass in what their arguments say (`config::Flags`,
//! `session::SessionChoice`).

// The crates below under the names the modules have always used (`crate::agent`, ...),
// as the root package re-exports them, so a path reads the same on either side.
use claw_agent as agent;
use claw_llm as llm;
use claw_text as text;
use claw_tools as tools;
use claw_tools::{images, private_fs, visible};

pub mod checkpoint;
pub mod commands;
pub mod config;
pub mod exit;
pub mod front_matter;
pub mod hooks;
pub mod inspect;
pub mod keymap;
pub mod mcp;
pub mod providers;
pub mod runtime;
pub mod session;
pub mod setup;
pub mod trust;
pub mod typed;
