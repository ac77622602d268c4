//! Markdown to HTML for the export, safe for text from the model: raw HTML in the
//! Markdown is shown as text, links keep only harmless schemes, images become links
//! (nothing is fetched), and fenced code is highlighted by syntect with inline styles.

use crate::syntax::Syntaxes;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd, html};
use syntect::html::highlighted_html_for_string;

/// syntect's syntaxes and themes, loaded once per export.
pub struct Highlighter {
    sets: Syntaxes,
    theme: String,
}

impl Highlighter {
    /// Loads syntect's bundled sets; code is coloured with `theme` (a syntect theme
    /// name, as the client's colour themes give it), or left plain when it is unknown.
    pub fn new(theme: &str) -> Self {
        Self {
            sets: Syntaxes::load(),
            theme: theme.to_owned(),
        }
    }

    /// `code` as a highlighted `<pre>`, or an escaped plain one.
    pub fn code(&self, lang: &str, code: &str) -> String {
        let sets = &self.sets;
        if let (Some(syntax), Some(theme)) = (sets.grammar(lang), sets.theme(&self.theme))
            && let Ok(html) = highlighted_html_for_string(code, &sets.syntaxes, syntax, theme)
        {
            return html;
        }
        format!("<pre class=\"plain\"><code>{}</code></pre>\n", escape(code))
    }
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, for element content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether a link target is safe to keep: web and mail links and in-page anchors.
fn safe_link(dest: &str) -> bool {
    let lower = dest.trim().to_ascii_lowercase();
    ["http://", "https://", "mailto:", "#"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
}

fn link_target(dest: CowStr<'_>) -> CowStr<'_> {
    if safe_link(&dest) {
        dest
    } else {
        CowStr::Borrowed("#")
    }
}

/// `markdown` as HTML (tables, strikethrough and task lists on).
pub fn render(markdown: &str, highlighter: &Highlighter) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut code: Option<(String, String)> = None;
    for event in Parser::new_ext(markdown, options) {
        if let Some((lang, body)) = code.as_mut() {
            match event {
                Event::Text(text) => body.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    let html = highlighter.code(lang, body);
                    events.push(Event::Html(html.into()));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            // Raw HTML from the text is shown, never interpreted.
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => events.push(Event::Start(Tag::Link {
                link_type,
                dest_url: link_target(dest_url),
                title,
                id,
            })),
            // An image would be fetched when the page opens: a link to it instead.
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => events.push(Event::Start(Tag::Link {
                link_type,
                dest_url: link_target(dest_url),
                title,
                id,
            })),
            Event::End(TagEnd::Image) => events.push(Event::End(TagEnd::Link)),
            other => events.push(other),
        }
    }
    let mut out = String::new();
    html::push_html(&mut out, events.into_iter());
    out
}
