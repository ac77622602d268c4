//! Tests of the headless area.

mod cron_file;
mod print;
mod rpc;
