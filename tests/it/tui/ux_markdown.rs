//! Markdown that fits the screen (issue 18, items 4-5): tables always fit the pane
//! (columns shrink, cells wrap at words, rows stay aligned, no blank lines; too many
//! columns become one record per block), and long code lines wrap with a continuation
//! marker while copying gives the original lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::StopReason;
use claw_tui::tui::wrap::str_width;
use claw_tui::tui::{App, Effect};
use crossterm::event::KeyCode;

const TABLE: &str = "Here is the comparison:\n\n\
| tool | what it does well | where it falls short | verdict |\n\
|---|---|---|---|\n\
| claw-tui | fast startup, small memory, a live tool tree | young, fewer integrations | keep |\n\
| pi | extensions and a large community of users | heavier at runtime | watch |\n\
| codex | polished approvals and sandboxing on macOS | large binary and memory | learn from |\n";

fn with_answer(width: u16, height: u16, markdown: &str) -> App {
    let mut app = sized(width, height);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "compare them in a table");
    answer(&clock, &mut app, 10, vec![text(markdown)], StopReason::Stop);
    run_end(&clock, &mut app, 20);
    app
}

/// The chat pane's rows (between its borders).
fn chat_rows(app: &mut App) -> Vec<String> {
    let left = app.areas().chat.unwrap();
    screen(app)
        .into_iter()
        .skip(usize::from(left.y) + 1)
        .take(usize::from(left.height) - 2)
        .map(|row| {
            row.chars()
                .skip(usize::from(left.x) + 1)
                .take(usize::from(left.width) - 2)
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// The rows of the grid (those with a column separator or the header rule).
fn grid(rows: &[String]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.contains(" │ ") || r.contains("─┼─"))
        .cloned()
        .collect()
}

#[test]
fn a_wide_table_fits_the_pane_with_aligned_rows_and_words_kept_whole() {
    for (width, height, name) in [(120, 40, "table_120x40"), (80, 24, "table_80x24")] {
        let mut app = with_answer(width, height, TABLE);
        let rows = chat_rows(&mut app);
        let grid = grid(&rows);
        assert!(grid.len() > 5, "{rows:#?}");
        let pane = usize::from(app.areas().chat.unwrap().width) - 2;
        let separators: Vec<Vec<usize>> = grid
            .iter()
            .filter(|r| !r.contains('┼'))
            .map(|r| {
                assert!(str_width(r) <= pane, "a row wider than the pane: {r:?}");
                r.char_indices()
                    .filter(|(_, c)| *c == '│')
                    .map(|(i, _)| str_width(&r[..i]))
                    .collect()
            })
            .collect();
        assert!(
            separators.windows(2).all(|w| w[0] == w[1]),
            "every row's separators line up: {grid:#?}"
        );
        // From the first grid row to the last there is no blank line.
        let first = rows.iter().position(|r| r.contains(" │ ")).unwrap();
        let last = rows.iter().rposition(|r| r.contains(" │ ")).unwrap();
        assert!(
            rows[first..=last].iter().all(|r| !r.trim().is_empty()),
            "{rows:#?}"
        );
        // Words are not cut: every word of the table is on one row.
        for word in ["integrations", "sandboxing", "community", "polished"] {
            assert!(
                rows.iter().any(|r| r.contains(word)),
                "{word} cut: {rows:#?}"
            );
        }
        insta::assert_snapshot!(name, draw(&mut app).backend());
    }
}

#[test]
fn a_table_that_cannot_fit_becomes_one_record_per_block() {
    let mut app = with_answer(40, 12, TABLE);
    let rows = chat_rows(&mut app);
    assert!(grid(&rows).is_empty(), "no grid at 40 columns: {rows:#?}");
    let all = rows.join("\n");
    assert!(
        all.contains("tool: codex"),
        "the last record, at the bottom: {all}"
    );
    insta::assert_snapshot!("table_records_40x12", draw(&mut app).backend());
    // Taller, the whole first record shows, fields wrapped under their name.
    let mut tall = with_answer(40, 40, TABLE);
    let rows = chat_rows(&mut tall);
    let from = rows
        .iter()
        .position(|r| r.contains("tool: claw-tui"))
        .unwrap();
    assert!(
        rows[from + 1].starts_with("what it does well: "),
        "{rows:#?}"
    );
}

const CODE: &str = "The helper:\n\n```rust\nfn pick(items: &[Item]) -> Option<&Item> {\n    items.iter().filter(|item| item.enabled && item.weight > 0).max_by_key(|item| item.weight)\n}\n```\n";

#[test]
fn long_code_lines_wrap_with_a_marker_and_copy_as_written() {
    let mut app = with_answer(80, 24, CODE);
    let rows = chat_rows(&mut app);
    let at = rows
        .iter()
        .position(|r| r.contains("items.iter()"))
        .unwrap();
    assert!(rows[at].starts_with("▏ "), "{rows:#?}");
    assert!(
        rows[at + 1].starts_with("▏↪"),
        "the continuation row is marked: {rows:#?}"
    );
    assert!(
        !rows[at].ends_with("ite") && !rows[at + 1].contains("▏↪m."),
        "cut at a space, not inside a word: {rows:#?}"
    );
    insta::assert_snapshot!("code_wrapped_80x24", draw(&mut app).backend());

    // In the chat, ] selects the code block and c copies its original lines.
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Char(']')));
    let effects = app.update(key(KeyCode::Char('c')));
    let code = "fn pick(items: &[Item]) -> Option<&Item> {\n    items.iter().filter(|item| item.enabled && item.weight > 0).max_by_key(|item| item.weight)\n}";
    assert_eq!(effects, [Effect::Copy(code.into())]);
    insta::assert_snapshot!("code_selected_80x24", draw(&mut app).backend());
    // /copy code gives the same original lines.
    app.update(key(KeyCode::Esc));
    app.update(key(KeyCode::Esc));
    typed(&mut app, "/copy code");
    let effects = app.update(key(KeyCode::Enter));
    assert!(effects.contains(&Effect::Copy(code.into())), "{effects:?}");
}

#[test]
fn highlighting_carries_over_to_the_continuation_row() {
    let mut app = with_answer(80, 24, CODE);
    let terminal = draw(&mut app);
    let buffer = terminal.backend().buffer();
    let row = |needle: &str| {
        (0..buffer.area.height)
            .find(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, *y)].symbol())
                    .collect::<String>()
                    .contains(needle)
            })
            .unwrap()
    };
    let next = row("items.iter()") + 1;
    let colours: std::collections::HashSet<_> = (3..70).map(|x| buffer[(x, next)].fg).collect();
    assert!(
        colours.len() >= 2,
        "the wrapped part is highlighted too: {colours:?}"
    );
}
