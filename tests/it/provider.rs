//! Tests of the provider area.

mod anthropic;
mod anthropic_turns;
mod caching;
mod explained;
mod failures;
mod images;
mod models;
mod openai;
mod responses;
mod retry;
mod streamed;
mod whole_answers;
