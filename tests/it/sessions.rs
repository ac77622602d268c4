//! Tests of the sessions area.

mod cli;
mod crash;
mod damage;
mod damage_cli;
mod export_html;
mod export_subagents;
mod full_disk;
mod images;
mod store;
