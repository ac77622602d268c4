//! Turning a fetched body into text the model can read: HTML, JSON or plain text.

use super::strip_tags;
use html2text::Handle;
use reqwest::Url;

/// Column width HTML is wrapped to.
const WRAP_WIDTH: usize = 100;

/// Elements that never carry readable page content.
const NOISE: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "iframe", "svg", "canvas", "object", "embed",
    "dialog",
];

/// Elements after which a `header` or `footer` belongs to content rather than the page frame.
const SECTIONS: &[&str] = &["main", "article", "section", "aside"];

/// What the Content-Type header says the body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Declared {
    /// HTML or XHTML.
    Html,
    /// JSON, including `+json` types.
    Json,
    /// Any other text.
    Text,
    /// Images, audio, archives and other non-text types.
    Binary,
    /// No Content-Type: the body itself decides.
    Unknown,
}

/// The lower-case media type of a Content-Type value, without parameters.
pub(crate) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Classifies a Content-Type header value.
pub(crate) fn declared(content_type: Option<&str>) -> Declared {
    let Some(ct) = content_type.map(essence).filter(|ct| !ct.is_empty()) else {
        return Declared::Unknown;
    };
    match ct.as_str() {
        "text/html" | "application/xhtml+xml" => Declared::Html,
        "application/json" | "text/json" => Declared::Json,
        _ if ct.ends_with("+json") => Declared::Json,
        _ if ct.starts_with("text/") || ct.ends_with("+xml") => Declared::Text,
        "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql" => Declared::Text,
        _ => Declared::Binary,
    }
}

/// A body made readable.
pub(crate) struct Rendered {
    /// `html`, `json` or `text`.
    pub kind: &'static str,
    /// The HTML `<title>`, when there is one.
    pub title: Option<String>,
    /// The readable text.
    pub text: String,
    /// Something the reader should know about how the text was produced.
    pub note: Option<String>,
}

/// Why a body is not returned as text; the text completes "Refused to return URL: ".
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotText {
    /// NUL bytes: binary data whatever it was declared as.
    #[error("the body contains NUL bytes, so it is binary data")]
    NulBytes,
    /// Declared as a binary type.
    #[error("it is binary content")]
    Binary,
    /// No Content-Type and not UTF-8.
    #[error("it has no Content-Type and is not UTF-8 text")]
    UndeclaredBinary,
    /// html2text could not parse it.
    #[error("the HTML could not be converted to text: {0}")]
    Html(#[from] html2text::Error),
}

/// Converts `body`; `Err` says why the body is not text.
pub(crate) fn render(declared: Declared, body: &[u8], base: &Url) -> Result<Rendered, NotText> {
    if body.contains(&0) {
        return Err(NotText::NulBytes);
    }
    let kind = match declared {
        Declared::Binary => return Err(NotText::Binary),
        Declared::Unknown => sniff(body)?,
        known => known,
    };
    Ok(match kind {
        Declared::Html => {
            let (title, text) = html_to_text(body, base)?;
            Rendered {
                kind: "html",
                title,
                text,
                note: None,
            }
        }
        Declared::Json => match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(_) => Rendered {
                kind: "json",
                title: None,
                text: reindent_json(&String::from_utf8_lossy(body)),
                note: None,
            },
            Err(e) => Rendered {
                kind: "json",
                title: None,
                text: String::from_utf8_lossy(body).into_owned(),
                note: Some(format!(
                    "The body is not valid JSON ({e}); shown as received."
                )),
            },
        },
        _ => Rendered {
            kind: "text",
            title: None,
            text: String::from_utf8_lossy(body).into_owned(),
            note: None,
        },
    })
}

/// Guesses the kind of a body served without a Content-Type.
fn sniff(body: &[u8]) -> Result<Declared, NotText> {
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        // A character cut by the size cap is not evidence of binary data.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&body[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Err(NotText::UndeclaredBinary),
    };
    let start = text.trim_start_matches('\u{feff}').trim_start();
    let head: String = start
        .chars()
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    Ok(
        if head.starts_with("<!doctype html") || head.starts_with("<html") {
            Declared::Html
        } else if (start.starts_with('{') || start.starts_with('['))
            && serde_json::from_str::<serde_json::Value>(text).is_ok()
        {
            Declared::Json
        } else {
            Declared::Text
        },
    )
}

/// Pretty-prints valid JSON text, keeping key order and number spelling as received.
fn reindent_json(src: &str) -> String {
    let mut out = String::with_capacity(src.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = src.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// Readable text of an HTML page, main content first; also returns the title.
fn html_to_text(body: &[u8], base: &Url) -> Result<(Option<String>, String), NotText> {
    let text = convert(body, base, true)?;
    if !text.1.trim().is_empty() {
        return Ok(text);
    }
    // An empty main element (a page filled in by scripts, say) hides whatever else there is.
    convert(body, base, false)
}

fn convert(body: &[u8], base: &Url, main_only: bool) -> Result<(Option<String>, String), NotText> {
    let config = html2text::config::plain();
    let dom = config.parse_html(body)?;
    // Dropping a detached node empties its whole subtree (see markup5ever_rcdom's Drop), which
    // may still be part of the document, so detached nodes live until rendering is done.
    let mut detached: Vec<Handle> = Vec::new();
    let title = find(&dom.document, &|n| tag(n).as_deref() == Some("title")).map(|t| {
        let mut html = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = t.serialize(&mut html);
        strip_tags(&String::from_utf8_lossy(&html))
    });
    absolutise_links(&dom.document, base);
    if main_only
        && let Some(body_el) = find(&dom.document, &|n| tag(n).as_deref() == Some("body"))
        && let Some(content) = main_content(&body_el)
    {
        detached.extend(body_el.children.replace(content));
    }
    drop_noise(&dom.document, false, &mut detached);
    let tree = config.dom_to_render_tree(&dom)?;
    let raw = config.render_to_string(tree, WRAP_WIDTH)?;
    drop(detached);
    Ok((title.filter(|t| !t.is_empty()), tidy(&raw)))
}

/// Trailing spaces removed and runs of blank lines collapsed to one.
fn tidy(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut blank_run = 0;
    for line in raw.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// The local name of an element node.
fn tag(node: &Handle) -> Option<String> {
    node.element_name().map(|n| n.to_ascii_lowercase())
}

/// The value of attribute `name` of an element node.
fn attr(node: &Handle, name: &str) -> Option<String> {
    match &node.data {
        html2text::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| (*a.name.local).eq_ignore_ascii_case(name))
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

/// The first node, depth first, for which `pred` holds.
fn find(node: &Handle, pred: &dyn Fn(&Handle) -> bool) -> Option<Handle> {
    if pred(node) {
        return Some(node.clone());
    }
    node.children.borrow().iter().find_map(|c| find(c, pred))
}

/// Every node for which `pred` holds, not descending into matches.
fn find_all(node: &Handle, pred: &dyn Fn(&Handle) -> bool, found: &mut Vec<Handle>) {
    for child in node.children.borrow().iter() {
        if pred(child) {
            found.push(child.clone());
        } else {
            find_all(child, pred, found);
        }
    }
}

/// The page's main content: `<main>`, else `role="main"`, else its `<article>`s.
fn main_content(body: &Handle) -> Option<Vec<Handle>> {
    if let Some(main) = find(body, &|n| tag(n).as_deref() == Some("main")) {
        return Some(vec![main]);
    }
    let role_main = |n: &Handle| attr(n, "role").is_some_and(|r| r.eq_ignore_ascii_case("main"));
    if let Some(main) = find(body, &role_main) {
        return Some(vec![main]);
    }
    let mut articles = Vec::new();
    find_all(
        body,
        &|n| tag(n).as_deref() == Some("article"),
        &mut articles,
    );
    (!articles.is_empty()).then_some(articles)
}

/// Removes scripts, navigation, hidden parts and the page's own header and footer.
fn drop_noise(node: &Handle, in_section: bool, detached: &mut Vec<Handle>) {
    let children: Vec<Handle> = node.children.borrow().clone();
    let mut kept = Vec::with_capacity(children.len());
    for child in children {
        let Some(name) = tag(&child) else {
            kept.push(child);
            continue;
        };
        let role = attr(&child, "role").map(|r| r.to_ascii_lowercase());
        let hidden = attr(&child, "hidden").is_some()
            || attr(&child, "aria-hidden").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let frame = matches!(name.as_str(), "header" | "footer")
            || matches!(role.as_deref(), Some("banner" | "contentinfo"));
        if hidden
            || NOISE.contains(&name.as_str())
            || role.as_deref() == Some("navigation")
            || (frame && !in_section)
        {
            detached.push(child);
            continue;
        }
        let section =
            in_section || SECTIONS.contains(&name.as_str()) || role.as_deref() == Some("main");
        drop_noise(&child, section, detached);
        kept.push(child);
    }
    *node.children.borrow_mut() = kept;
}

/// Makes link targets absolute, so the footnotes can be fetched as they are.
fn absolutise_links(node: &Handle, base: &Url) {
    if let html2text::Element { name, attrs, .. } = &node.data
        && matches!(&*name.local, "a" | "area")
    {
        let mut attrs = attrs.borrow_mut();
        let Some(pos) = attrs.iter().position(|a| &*a.name.local == "href") else {
            return;
        };
        let href = attrs[pos].value.trim().to_owned();
        if href.to_ascii_lowercase().starts_with("javascript:") {
            attrs.remove(pos);
        } else if let Ok(absolute) = base.join(&href) {
            attrs[pos].value = absolute.to_string().into();
        }
    }
    for child in node.children.borrow().iter() {
        absolutise_links(child, base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reindents_json_in_order() {
        let src = r#"{"z":1,"a":[1, 2.50,{}],"s":"x, {y}: \"q\"","e":[]}"#;
        let want = r#"{
  "z": 1,
  "a": [
    1,
    2.50,
    {}
  ],
  "s": "x, {y}: \"q\"",
  "e": []
}"#;
        assert_eq!(reindent_json(src), want);
    }

    #[test]
    fn classifies_content_types() {
        assert_eq!(declared(Some("text/html; charset=utf-8")), Declared::Html);
        assert_eq!(declared(Some("application/problem+json")), Declared::Json);
        assert_eq!(declared(Some("text/markdown")), Declared::Text);
        assert_eq!(declared(Some("application/rss+xml")), Declared::Text);
        assert_eq!(declared(Some("image/png")), Declared::Binary);
        assert_eq!(declared(Some("application/octet-stream")), Declared::Binary);
        assert_eq!(declared(None), Declared::Unknown);
    }

    #[test]
    fn sniffs_untyped_bodies() {
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x").ok(), Some(Declared::Html));
        assert_eq!(sniff(b"[1,2]").ok(), Some(Declared::Json));
        assert_eq!(sniff(b"hello").ok(), Some(Declared::Text));
        assert!(sniff(&[0xff, 0xfe, 0x41, 0x80, 0x41]).is_err());
    }
}
