//! The full-screen terminal client, Elm-style.
//!
//! `App` is the root of the model: it owns one part per piece of the screen (the
//! [`composer`], the [`chat`], the [`tool_tree`], the [`dashboard`], the [`status`],
//! the [`overlay`] stack and the approval prompt), each with its own keys and a pure
//! `draw`. `App::update(Msg) -> Vec<Effect>` changes it without I/O; the pure [`view`]
//! draws it. Everything that does I/O or talks to the runtime is the [`host`]: its loop
//! runs over the terminal, the agent's events and the [`Inbox`], executes effects, and
//! draws at most 60 frames a second, only when a part changed. The host imports the
//! model; the model never imports the host.
//!
//! Entry point: [`launch`] (the client with the whole background runtime, in the session
//! the launcher opened). Other parts of the program talk to the client through an
//! [`Inbox`]: the exec approval asker, and [`Msg`]s such as `Subagents`, `CronJobs`,
//! `Subagent` events and the `message` tool's cards from the background runtime.

mod app;
pub mod approval;
pub mod attach;
pub mod background;
pub mod chat;
pub mod checkpoints;
pub mod composer;
pub mod dashboard;
pub mod diff;
pub mod highlight;
pub mod host;
pub mod inspector;
pub mod layout;
pub mod markdown;
pub mod msg;
pub mod overlay;
mod part;
pub mod recorded;
pub mod sessions;
pub mod shell;
pub mod slash;
pub mod status;
pub mod subagents;
pub mod tool_tree;
mod widgets;
pub mod wrap;

pub use app::{App, AppConfig, UserFiles, view};
pub use background::{BackgroundAction, BackgroundError, BackgroundFailure};
pub use checkpoints::Rewound;
pub use msg::{CronRow, CronRunStatus, Effect, Msg};
pub use overlay::{InspectTab, Inspector, Overlay};
pub use subagents::SubagentRow;

// The host's names as the rest of the program knows them (the launcher, the replay
// screen, the tools that ask for approval).
pub use host::background::Background;
pub(crate) use host::launch::app_config;
pub use host::launch::launch;
pub use host::{Approvals, Inbox, MsgSender, adapt, terminal};
