//! Tests of the headless area.

mod cron_file;
mod cron_two_processes;
mod print;
mod request_timeout;
pub(crate) mod rpc;
mod subagent_approval;
