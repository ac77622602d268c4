//! Attaching to a live session from another process. A session started with
//! `claw-tui serve` listens on a Unix socket in a private directory (no TCP listener
//! exists); each connection is checked to come from this user, then speaks the JSON
//! lines of `--mode rpc` plus the attach handshake (docs/rpc.md). Every attached client
//! gets the same lines in the same order from one pump; a slow one is resynchronised,
//! never waited for.

pub mod client;
mod conn;
pub mod hub;
pub mod listing;
pub mod peer;
pub mod pump;
pub mod serve;
pub mod server;
pub mod socket_dir;

pub use hub::{ClientInfo, Hub, HubRuntime, SessionInfo};
pub use pump::PumpHandle;
pub use server::{AttachServer, ServeError};
pub use socket_dir::socket_dir;
