//! `web_search` and `web_fetch` against local servers on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod web_fixture;

#[path = "web_cases/fetch_content.rs"]
mod fetch_content;
#[path = "web_cases/fetch_guard.rs"]
mod fetch_guard;
#[path = "web_cases/search.rs"]
mod search;
