//! claw-tui's integration tests: one crate, a module per area, the support code compiled once.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod acp;
mod agent;
mod attach;
mod compaction;
mod config;
mod control;
mod headless;
mod inspect;
mod interop;
mod mcp;
mod private_files;
mod provider;
mod replay;
mod runtime;
mod sessions;
mod support;
mod tools;
mod trust_inventory;
mod tui;
