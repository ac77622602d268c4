//! The full-screen terminal client: the model and rendering kit of the `claw-client`
//! crate, and the [`host`] here, which does the I/O around it.
//!
//! Entry point: [`launch`] (the client with the whole background runtime, in the session
//! the launcher opened). Other parts of the program talk to the client through an
//! [`Inbox`]: the exec approval asker, and [`Msg`]s such as `Subagents`, `CronJobs`,
//! `Subagent` events and the `message` tool's cards from the background runtime.

pub use claw_client::*;

pub mod host;

// The host's names as the rest of the program knows them (the launcher, the replay
// screen, the tools that ask for approval).
pub(crate) use host::app_config::{app_config, builtin_command_names};
pub use host::background::Background;
pub use host::launch::launch;
pub use host::{Approvals, Inbox, MsgSender, adapt, colors, terminal};
