//! Tests of the provider area.

mod anthropic;
mod anthropic_turns;
mod cache_key_refused;
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
