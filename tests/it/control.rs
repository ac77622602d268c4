//! Tests of the user's controls: hooks, diffs of file changes, checkpoints with undo
//! and rewind, and plan mode.

mod client;
mod diffs;
mod hooks;
mod hooks_e2e;
mod hostile;
mod hostile_config;
mod hostile_git;
mod rpc;
mod undo;
mod undo_e2e;
mod undo_unkept;
