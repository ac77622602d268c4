//! Tests of the sessions area.

mod cli;
mod store;
