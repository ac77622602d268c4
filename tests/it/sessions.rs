//! Tests of the sessions area.

mod cli;
mod images;
mod store;
