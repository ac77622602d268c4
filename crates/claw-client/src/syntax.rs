//! syntect's bundled grammars and themes, and how a code fence's language finds its
//! grammar: one place for the client's highlighter and the HTML export, so that both
//! colour the same code alike.

use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// The grammars and themes, loaded once by whoever colours code.
pub struct Syntaxes {
    /// The grammars.
    pub syntaxes: SyntaxSet,
    themes: ThemeSet,
}

impl Syntaxes {
    /// Loads syntect's bundled grammars and themes (tens of milliseconds: never on the
    /// client's UI thread).
    pub fn load() -> Self {
        Self {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            themes: ThemeSet::load_defaults(),
        }
    }

    /// The grammar of a fence's language (`rust`, `ts`, `Python`...), if there is one.
    pub fn grammar(&self, lang: &str) -> Option<&SyntaxReference> {
        let lang = alias(lang);
        self.syntaxes
            .find_syntax_by_token(lang)
            .or_else(|| self.syntaxes.find_syntax_by_name(lang))
    }

    /// The theme named `name`, if syntect has it.
    pub fn theme(&self, name: &str) -> Option<&Theme> {
        self.themes.themes.get(name)
    }
}

/// Fence names that syntect's bundled set does not know, mapped to the grammar that
/// serves them best: TypeScript and JSX have no grammar of their own there, and the
/// JavaScript one colours their keywords, strings and comments.
fn alias(lang: &str) -> &str {
    match lang.to_ascii_lowercase().as_str() {
        "shell" | "shellscript" | "console" => "bash",
        "ts" | "typescript" | "tsx" | "mts" | "cts" | "jsx" | "mjs" | "cjs" => "js",
        "golang" => "go",
        "jsonc" | "json5" => "json",
        _ => lang,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_find_their_grammar_also_by_an_alias() {
        let sets = Syntaxes::load();
        assert_eq!(sets.grammar("rust").unwrap().name, "Rust");
        assert_eq!(sets.grammar("tsx").unwrap().name, "JavaScript");
        assert_eq!(
            sets.grammar("Shell").unwrap().name,
            "Bourne Again Shell (bash)"
        );
        assert!(sets.grammar("no-such-language").is_none());
        assert!(sets.theme("base16-ocean.dark").is_some());
    }
}
