//! `web_search` and `web_fetch` against local servers on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fetch_content;
mod fetch_guard;
mod own_address;
mod search;
