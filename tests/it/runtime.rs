//! Tests of the runtime area.

mod background_delivery;
mod bus;
mod context;
mod cron_file_problems;
mod cron_lock;
mod cron_recovery;
mod cron_schedule;
mod cron_scheduler;
mod cron_store;
mod intake;
mod session_routing;
mod skills;
mod skills_broken;
mod subagent_policy;
mod subagents;
mod supervisor;
mod supervisor_order;
mod switch_hold;
mod user_commands;
