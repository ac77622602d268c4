//! Exports of a session other than the Markdown and JSON ones: one self-contained HTML
//! page ([`html::to_html`]) that reads offline and never runs script from the content.

pub mod html;
pub mod markdown;

pub use html::{HtmlOptions, to_html};
