//! Tests of the provider area.

mod anthropic;
mod failures;
mod models;
mod openai;
mod retry;
