//! Tests of the headless area.

mod cli;
mod credentials;
mod cron_file;
mod cron_two_processes;
mod escapes;
mod image_budget;
mod own_files;
mod print;
mod provider_names;
mod readme_start;
mod request_timeout;
mod responses;
mod rpc;
mod rpc_doc;
mod rpc_input;
mod rpc_usage;
mod signals;
mod stdin_context;
mod subagent_approval;
mod user_commands;
