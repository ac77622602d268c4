//! Tests of the headless area.

mod print;
pub(crate) mod rpc;
mod subagent_approval;
