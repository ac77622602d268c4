//! claw-tui: an LLM agent runtime with a full-screen terminal client.
//!
//! `agent` holds the loop and the `Agent` facade; `llm` the provider boundary.

pub mod agent;
pub mod llm;
