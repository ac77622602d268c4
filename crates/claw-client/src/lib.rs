//! The full-screen terminal client's model and rendering kit, Elm-style, with no I/O.
//!
//! `App` is the root of the model: it owns one part per piece of the screen (the
//! [`composer`], the [`chat`], the [`tool_tree`], the [`dashboard`], the [`status`],
//! the [`overlay`] stack and the approval prompt), each with its own keys and a pure
//! `draw`. `App::update(Msg) -> Vec<Effect>` changes it without I/O; the pure [`view`]
//! draws it; [`theme`] and [`syntax`] colour it. Everything that does I/O or talks to
//! the runtime is the host, in the `claw-tui` package (`src/tui/host/`): its loop runs
//! over the terminal, the agent's events and its inbox, executes effects, and draws at
//! most 60 frames a second, only when a part changed. The host imports this crate; this
//! crate knows the host only as the `Msg`s it receives and the `Effect`s it returns.

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
pub mod inspector;
pub mod layout;
pub mod markdown;
pub mod msg;
pub mod overlay;
mod part;
pub mod recorded;
pub mod reports;
pub mod sessions;
pub mod settings;
pub mod shell;
pub mod slash;
pub mod status;
pub mod subagents;
pub mod syntax;
pub mod theme;
pub mod tool_tree;
mod widgets;
pub mod wrap;

pub use app::{App, AppConfig, Farewell, UserFiles, farewell, view};
pub use background::{BackgroundAction, BackgroundError, BackgroundFailure};
pub use checkpoints::Rewound;
pub use msg::{CronRow, CronRunStatus, Effect, Msg};
pub use overlay::{InspectTab, Inspector, Overlay};
pub use subagents::SubagentRow;
