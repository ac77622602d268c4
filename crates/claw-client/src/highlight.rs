//! Syntax highlighting of code blocks with syntect, off the UI thread.
//!
//! The syntax and theme sets load in a worker thread on the first request, never at
//! start-up; results come back as `Msg::Highlighted` and are cached by a key of
//! (theme, language, code), so each block is highlighted once.
//!
//! syntect runs on Oniguruma (`default-onig` in Cargo.toml), not fancy-regex: every
//! grammar pattern is compiled on first use and kept, and the pure-Rust engine's
//! compiled regexes (Unicode classes as byte automata, forward and reverse, plus lazy-DFA
//! caches) cost 0.3–15 MB per language — about 70 MB for a reply with a dozen languages,
//! against about 6 MB with Oniguruma, which also compiles ten times faster.

use super::msg::{Effect, HighlightRequest, HighlightedCode, Msg};
use crate::syntax::Syntaxes;
use ratatui::style::{Color, Modifier, Style};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use syntect::easy::HighlightLines;
use syntect::highlighting::FontStyle;
use syntect::util::LinesWithEndings;
use tokio::sync::mpsc::UnboundedSender;

/// Code blocks larger than this are shown plain: highlighting them would take seconds.
pub const MAX_HIGHLIGHT_BYTES: usize = 512 * 1024;

/// Highlighted blocks by key.
pub type HighlightCache = HashMap<u64, HighlightedCode>;

/// The cache key of a block: the same code in the same language and theme is
/// highlighted once.
pub fn highlight_key(theme: &str, lang: &str, code: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    theme.hash(&mut hasher);
    lang.hash(&mut hasher);
    code.hash(&mut hasher);
    hasher.finish()
}

/// The syntaxes and themes, loaded once.
pub struct Sets(Syntaxes);

impl Sets {
    /// Loads syntect's bundled syntaxes and themes (tens of milliseconds: never call
    /// this on the UI thread).
    pub fn load() -> Self {
        Self(Syntaxes::load())
    }

    /// Highlights one block; unknown languages and themes give plain pieces.
    pub fn highlight(&self, lang: &str, code: &str, theme: &str) -> HighlightedCode {
        let sets = &self.0;
        let syntax = sets
            .grammar(lang)
            .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
        let Some(theme) = sets.theme(theme) else {
            return plain(code);
        };
        let mut lines = HighlightLines::new(syntax, theme);
        let mut out = Vec::new();
        for line in LinesWithEndings::from(code) {
            let pieces = match lines.highlight_line(line, &sets.syntaxes) {
                Ok(pieces) => pieces,
                // A grammar that fails on a line leaves the rest of the block plain.
                Err(_) => return plain(code),
            };
            // Scopes split a line far more finely than its colours do (`fn`, ` `, `main`
            // are three scopes, often two colours): merging equal neighbours keeps fewer
            // strings in the cache and fewer spans in every frame.
            let mut merged: Vec<(Style, String)> = Vec::with_capacity(pieces.len());
            for (style, text) in pieces {
                let text = text.trim_end_matches(['\n', '\r']);
                if text.is_empty() {
                    continue;
                }
                let style = convert(style);
                match merged.last_mut() {
                    Some((last, joined)) if *last == style => joined.push_str(text),
                    _ => merged.push((style, text.to_owned())),
                }
            }
            out.push(merged);
        }
        Arc::new(out)
    }
}

fn plain(code: &str) -> HighlightedCode {
    Arc::new(
        code.split('\n')
            .map(|l| vec![(Style::default(), l.to_owned())])
            .collect(),
    )
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

/// Highlighted blocks, and the requests on their way with the chat entries waiting for
/// each: the chat and the detail overlay share them.
#[derive(Clone, Debug, Default)]
pub(crate) struct HighlightStore {
    done: HighlightCache,
    waiting: HashMap<u64, Vec<usize>>,
}

impl HighlightStore {
    /// The blocks highlighted so far.
    pub(crate) fn cache(&self) -> &HighlightCache {
        &self.done
    }

    /// Whether the block `key` was asked for and has not come back yet.
    pub(crate) fn is_waiting(&self, key: u64) -> bool {
        self.waiting.contains_key(&key)
    }

    /// Asks for `request` on behalf of chat entry `entry`; the effect is there only for
    /// the first ask of a block.
    pub(crate) fn request_for(
        &mut self,
        entry: usize,
        request: HighlightRequest,
    ) -> Option<Effect> {
        let waiting = self.waiting.entry(request.key).or_default();
        let first = waiting.is_empty();
        if !waiting.contains(&entry) {
            waiting.push(entry);
        }
        first.then_some(Effect::Highlight(request))
    }

    /// Asks for a block no chat entry shows (the detail overlay's arguments), unless it
    /// is highlighted or on its way already.
    pub(crate) fn request(&mut self, request: HighlightRequest) -> Option<Effect> {
        if self.done.contains_key(&request.key) || self.waiting.contains_key(&request.key) {
            return None;
        }
        self.waiting.insert(request.key, Vec::new());
        Some(Effect::Highlight(request))
    }

    /// A block came back; returns the chat entries that show it.
    pub(crate) fn arrived(&mut self, key: u64, lines: HighlightedCode) -> Vec<usize> {
        self.done.insert(key, lines);
        self.waiting.remove(&key).unwrap_or_default()
    }

    /// Forgets which entries wait (their chat is gone); the cache stays.
    pub(crate) fn forget_waiting(&mut self) {
        self.waiting.clear();
    }
}

/// A handle on the highlighting thread; the thread starts with the first request.
#[derive(Default)]
pub struct Highlighter {
    requests: Option<std::sync::mpsc::Sender<HighlightRequest>>,
}

impl Highlighter {
    /// Queues a block; the answer is sent to `reply` as `Msg::Highlighted`.
    pub fn request(&mut self, request: HighlightRequest, reply: &UnboundedSender<Msg>) {
        if self.requests.is_none() {
            let (tx, rx) = std::sync::mpsc::channel::<HighlightRequest>();
            let reply = reply.clone();
            let spawned = std::thread::Builder::new()
                .name("claw-highlight".into())
                .spawn(move || {
                    let sets = Sets::load();
                    while let Ok(req) = rx.recv() {
                        let lines = sets.highlight(&req.lang, &req.code, &req.theme);
                        if reply
                            .send(Msg::Highlighted {
                                key: req.key,
                                lines,
                            })
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            match spawned {
                Ok(_) => self.requests = Some(tx),
                Err(e) => {
                    tracing::warn!("cannot start the highlighting thread: {e}; code stays plain");
                    return;
                }
            }
        }
        if let Some(tx) = &self.requests {
            // The thread only ends when the app does; a failed send just leaves code plain.
            let _ = tx.send(request);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_gets_colours_and_unknown_languages_stay_readable() {
        let sets = Sets::load();
        let lines = sets.highlight(
            "rust",
            "fn main() {\n    let x = 1;\n}",
            "base16-ocean.dark",
        );
        assert_eq!(lines.len(), 3);
        let text: String = lines[1].iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, "    let x = 1;");
        let colours: std::collections::HashSet<_> = lines[0].iter().map(|(s, _)| s.fg).collect();
        assert!(
            colours.len() > 1,
            "keywords and names should differ: {colours:?}"
        );
        let other = sets.highlight("no-such-language", "a\nb", "base16-ocean.dark");
        assert_eq!(other.len(), 2);
        assert_eq!(sets.highlight("rust", "x", "no-such-theme")[0][0].1, "x");
    }

    #[test]
    fn common_languages_and_their_aliases_get_colours() {
        let sets = Sets::load();
        let samples = [
            ("rust", "fn main() { let x = \"s\"; }"),
            ("python", "def f(x):\n    return \"s\""),
            ("js", "const x = function () { return 'a'; };"),
            ("ts", "const x = function () { return 'a'; };"),
            ("go", "func main() { x := \"s\" }"),
            ("c", "int main(void) { return 0; }"),
            ("cpp", "int main() { return 0; }"),
            ("bash", "if [ -f x ]; then echo \"s\"; fi"),
            ("shell", "if [ -f x ]; then echo \"s\"; fi"),
            ("json", "{\"a\": 1, \"b\": true}"),
            ("yaml", "a: 1\nb: [x, y]"),
            ("markdown", "# Title\n\n*x*"),
            ("diff", "--- a\n+++ b\n-x\n+y"),
        ];
        for (lang, code) in samples {
            let lines = sets.highlight(lang, code, "base16-ocean.dark");
            let colours: std::collections::HashSet<_> =
                lines.iter().flatten().map(|(s, _)| s.fg).collect();
            assert!(colours.len() > 1, "{lang} stayed one colour: {lines:?}");
            let text: Vec<String> = lines
                .iter()
                .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
                .collect();
            assert_eq!(text.join("\n"), code, "{lang} lost text");
            for line in lines.iter() {
                for pair in line.windows(2) {
                    assert_ne!(pair[0].0, pair[1].0, "{lang}: equal neighbours unmerged");
                }
            }
        }
    }

    #[test]
    fn keys_differ_by_theme_language_and_code() {
        let k = highlight_key("t", "rust", "x");
        assert_eq!(k, highlight_key("t", "rust", "x"));
        assert_ne!(k, highlight_key("u", "rust", "x"));
        assert_ne!(k, highlight_key("t", "py", "x"));
        assert_ne!(k, highlight_key("t", "rust", "y"));
    }
}
