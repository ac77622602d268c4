//! Markdown rendering tests.

use super::*;

use crate::wrap::wrap;

/// `src` rendered with the fallback theme at 80 columns: its logical lines, and the
/// code blocks whose highlight it asked for.
fn rendered(src: &str) -> (Vec<StyledLine>, Vec<HighlightRequest>) {
    let theme = Theme::fallback();
    let cache = HighlightCache::default();
    let ctx = MdContext {
        theme: &theme,
        highlights: &cache,
        base: Style::default(),
        request_highlights: true,
        width: 80,
    };
    let (mut out, mut missing) = (Vec::new(), Vec::new());
    render(src, &ctx, &mut out, &mut missing);
    (out, missing)
}

fn lines(src: &str) -> Vec<String> {
    let (out, _) = rendered(src);
    wrap(&out, 60)
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect()
}

#[test]
fn blocks_render_with_gaps_markers_and_no_syntax() {
    let out =
        lines("# Title\n\nSome *em* and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n\n---\n");
    assert_eq!(
        out,
        [
            "Title",
            "",
            "Some em and code.",
            "",
            "• one",
            "• two",
            "  1. nested",
            "",
            "│ quoted",
            "",
            "────────────────────────────────────────────────────────────",
        ]
    );
}

#[test]
fn code_blocks_and_tables() {
    let out = lines("```rust\nfn main() {}\n```\n\n| a | bb |\n|---|---:|\n| ccc | d |\n");
    assert_eq!(
        out,
        [
            "▏ rust",
            "▏ fn main() {}",
            "",
            "a   │ bb",
            "────┼───",
            "ccc │  d"
        ]
    );
}

#[test]
fn links_show_their_target() {
    assert_eq!(lines("[docs](https://x.y/z)"), ["docs <https://x.y/z>"]);
    assert_eq!(lines("<https://x.y>"), ["https://x.y"]);
}

#[test]
fn missing_highlights_are_requested_once_per_block() {
    let (_, missing) = rendered("```py\nx = 1\n```\n");
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].lang, "py");
    assert_eq!(missing[0].code, "x = 1");
}

#[test]
fn prose_wrapped_by_hand_is_joined_and_other_line_breaks_are_kept() {
    let out = lines(
        "I run without any network, so nothing you\ntype here leaves your machine.\nA new sentence.\nsrc/a.rs\nsrc/b.rs\n",
    );
    assert_eq!(
        out,
        [
            "I run without any network, so nothing you type here leaves",
            "your machine.",
            "A new sentence.",
            "src/a.rs",
            "src/b.rs",
        ]
    );
}

#[test]
fn single_line_breaks_are_kept_in_paragraphs_lists_and_quotes() {
    let out = lines(
        "Build log:\n[12:00:01] compiling\n[12:00:09] linking\n\n- first item\n  its second line\n\n> quoted\n> again\n",
    );
    assert_eq!(
        out,
        [
            "Build log:",
            "[12:00:01] compiling",
            "[12:00:09] linking",
            "",
            "• first item",
            "  its second line",
            "",
            "│ quoted",
            "│ again",
        ]
    );
}

#[test]
fn headings_one_to_three_stand_out_from_body_text_each_its_own_way() {
    let (out, _) = rendered("# One\n\n## Two\n\n### Three\n\nbody\n");
    let style_of = |text: &str| {
        out.iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content.as_ref() == text)
            .map(|s| s.style)
            .unwrap_or_else(|| panic!("{text} not rendered"))
    };
    let accent = Theme::fallback().fg(Token::Accent).fg;
    let (one, two, three, body) = (
        style_of("One"),
        style_of("Two"),
        style_of("Three"),
        style_of("body"),
    );
    for heading in [one, two, three] {
        assert_eq!(heading.fg, accent, "{heading:?}");
        assert!(heading.add_modifier.contains(Modifier::BOLD), "{heading:?}");
    }
    assert!(one.add_modifier.contains(Modifier::UNDERLINED));
    assert!(three.add_modifier.contains(Modifier::ITALIC));
    assert!(one != two && two != three, "three levels told apart");
    assert!(!body.add_modifier.contains(Modifier::BOLD) && body.fg != accent);
}
