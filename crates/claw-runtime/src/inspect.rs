//! The request inspector: every LLM request a session sent, recorded beside it
//! (`<session>.requests.jsonl`, written by `writer.rs` off the client's thread), read
//! back byte for byte (`log.rs`), and explained: what the input is made of
//! (`breakdown.rs`) and what changed since the agent's previous request (`diff.rs`).

pub mod breakdown;
pub mod cli;
pub mod diff;
mod encode;
pub mod format;
pub mod log;
pub mod rows;
pub mod rpc;
mod split;
pub mod writer;
mod written;

pub use breakdown::{Breakdown, Part, breakdown};
pub use diff::{Change, diff};
pub use log::{LogError, RequestLog, requests_path};
pub use rows::{RequestRow, rows, select};
pub use writer::{RequestRecorder, main_turn, write_calls};
