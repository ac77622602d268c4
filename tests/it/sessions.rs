//! Tests of the sessions area.

mod cli;
mod damage;
mod store;
