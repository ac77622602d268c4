//! Tests of the provider area.

mod anthropic;
mod explained;
mod failures;
mod models;
mod openai;
mod retry;
