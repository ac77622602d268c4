//! Tests of the tools area.

mod exec;
mod exec_agent;
mod exec_approval;
mod exec_background;
mod exec_contain;
mod exec_doctor;
mod exec_env;
mod exec_hostile;
mod exec_links;
mod exec_pinned;
mod exec_protected;
mod exec_routes;
mod exec_sandbox;
mod exec_setid;
mod fs;
mod message_spawn_cron;
mod policy;
mod registry;
mod schemas;
mod web;
