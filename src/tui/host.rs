//! The client's host: everything that does I/O or talks to the runtime, around the pure
//! model (`App`, its parts, the feature slices and the rendering kit). It starts the
//! client ([`launch`]), runs the one loop over the terminal, the agent and the
//! [`Inbox`] ([`runtime`]), carries out each `Effect` (the slices' runners among them)
//! and turns the runtime's reports into `Msg`s ([`adapt`]). Arrows run from here to the
//! model, never back: the model knows the host only as the `Msg`s it receives and the
//! `Effect`s it returns.

pub mod adapt;
pub mod app_config;
mod attach;
pub mod background;
mod checkpoints;
mod clipboard;
pub mod colors;
mod control;
mod export_file;
pub mod history;
mod hosting;
mod inbox;
pub mod input;
mod inspector;
pub mod launch;
pub mod model_list;
mod origins;
pub mod palette;
mod probe;
pub mod remote;
mod runtime;
mod session_host;
mod shell;
mod subagent_log;
pub mod terminal;

pub use inbox::{AnswerElsewhere, Approvals, Inbox, MsgSender};
