//! Tests of the headless area.

mod print;
mod rpc;
mod rpc_input;
mod signals;
