//! Tests of the headless area.

mod print;
mod rpc;
mod subagent_approval;
