//! Tests of the sessions area.

mod cli;
mod copy_prompt;
mod crash;
mod damage;
mod damage_cli;
pub mod export_html;
mod export_html_turns;
mod export_subagents;
mod full_disk;
mod images;
mod service;
mod side_logs;
mod store;
mod subagent_side_file;
mod thinking_replay;
