//! Compaction in the client: `/compact [focus]`, the status word `compacting` and the
//! live line, the divider with its summary collapsed (Enter or Ctrl+T expands it), the
//! full history above it, cancelled and failed compactions, `ctx N%` and its warning,
//! and a resumed session's compaction points. Snapshots at 120×40 and 80×24.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::tui::scene::*;
use crate::support::tui::*;
use claw_tui::agent::compaction::{ContextBudget, ContextUsage};
use claw_tui::agent::{
    AgentEvent, Compaction, CompactionEnd, CompactionReason, CompactionResult, CompactionSettings,
    Message, StopReason, Usage,
};
use claw_tui::theme::{Theme, Token};
use claw_tui::tui::chat::EntryKind;
use claw_tui::tui::layout::Focus;
use claw_tui::tui::sessions::{self, LoadedSession};
use claw_tui::tui::{App, Effect, Msg};
use crossterm::event::KeyCode;
use serde_json::json;

const SUMMARY: &str = "## Goal\nFix the flaky parser test.\n\n## Progress\n### Done\n- found the race in `parse_all`\n\n## Next steps\n1. add a lock\n2. run `cargo test parser`";

fn compaction() -> Compaction {
    Compaction {
        summary: SUMMARY.into(),
        first_kept_message: 4,
        history_len: 6,
        tokens_before: 182_000,
        tokens_after: 24_000,
        reason: CompactionReason::Threshold,
        usage: Usage::default(),
        timestamp: 0,
    }
}

/// A run that read two files, then started compacting.
fn compacting(width: u16, height: u16) -> App {
    let mut app = sized(width, height);
    let clock = Clock::new(&mut app);
    run_start(&clock, &mut app, "why is the parser test flaky?");
    answer(
        &clock,
        &mut app,
        10,
        vec![
            text("Let me read the parser."),
            call("c1", "read_file", json!({"path": "src/parser.rs"})),
        ],
        StopReason::ToolUse,
    );
    start(
        &clock,
        &mut app,
        20,
        "c1",
        "read_file",
        json!({"path": "src/parser.rs"}),
    );
    end(
        &clock,
        &mut app,
        900,
        "c1",
        "read_file",
        "fn parse_all() {}",
        false,
    );
    clock.at(&mut app, 950, agent(AgentEvent::TurnStart { turn: 2 }));
    clock.at(
        &mut app,
        960,
        agent(AgentEvent::CompactionStart {
            reason: CompactionReason::Threshold,
            tokens_before: 182_000,
        }),
    );
    app
}

fn compacted(app: &mut App) {
    app.update(agent(AgentEvent::CompactionEnd(CompactionEnd::done(
        &compaction(),
    ))));
}

fn screen(app: &mut App) -> String {
    let terminal = draw(app);
    screen_text(&terminal)
}

#[test]
fn the_live_line_while_compacting() {
    let mut wide = compacting(120, 40);
    assert_eq!(wide.state_word(), "compacting");
    let text = screen(&mut wide);
    assert!(
        text.contains("Compacting 182k tokens… Esc cancels"),
        "{text}"
    );
    insta::assert_snapshot!("compacting_120x40", draw(&mut wide).backend());
    let mut narrow = compacting(80, 24);
    insta::assert_snapshot!("compacting_80x24", draw(&mut narrow).backend());
    // Esc (with nothing typed) interrupts: the compaction is cancelled with the run.
    let effects = narrow.update(key(KeyCode::Esc));
    assert!(effects.contains(&Effect::Abort), "{effects:?}");
}

#[test]
fn the_divider_with_the_summary_collapsed_then_expanded() {
    let mut wide = compacting(120, 40);
    compacted(&mut wide);
    assert_eq!(wide.state_word(), "streaming");
    let text = screen(&mut wide);
    assert!(
        text.contains("── compacted: 182k → 24k tokens ──"),
        "{text}"
    );
    assert!(
        text.contains("▸ summary (29 words) · Enter or Ctrl+T expands"),
        "{text}"
    );
    assert!(!text.contains("add a lock"));
    // The history above the divider is still there.
    assert!(
        text.contains("why is the parser test flaky?") && text.contains("Let me read the parser.")
    );
    insta::assert_snapshot!("compacted_120x40", draw(&mut wide).backend());
    let mut narrow = compacting(80, 24);
    compacted(&mut narrow);
    insta::assert_snapshot!("compacted_80x24", draw(&mut narrow).backend());

    // Enter in the chat expands the summary, and collapses it again.
    wide.update(key(KeyCode::Tab));
    assert_eq!(wide.focus(), Focus::Chat);
    wide.update(key(KeyCode::Enter));
    assert!(wide.chat().summaries_expanded());
    let expanded = screen(&mut wide);
    assert!(expanded.contains("▾ summary (29 words)"), "{expanded}");
    assert!(expanded.contains("add a lock") && expanded.contains("Fix the flaky parser test."));
    insta::assert_snapshot!("compacted_expanded_120x40", draw(&mut wide).backend());
    wide.update(key(KeyCode::Enter));
    assert!(!screen(&mut wide).contains("add a lock"));
    // Ctrl+T expands it too (with the thinking blocks).
    narrow.update(ctrl('t'));
    assert!(screen(&mut narrow).contains("▾ summary"));
}

#[test]
fn a_cancelled_or_failed_compaction_says_that_nothing_changed() {
    let end = |outcome, error: Option<&str>| CompactionEnd {
        reason: CompactionReason::Manual,
        tokens_before: 9_000,
        tokens_after: 9_000,
        summary: String::new(),
        aborted: outcome == CompactionResult::Aborted,
        outcome,
        error: error.map(str::to_owned),
        first_kept_message: None,
        history_len: 4,
        usage: Usage::default(),
        timestamp: 0,
    };
    for (outcome, error, said) in [
        (
            CompactionResult::Aborted,
            None,
            "Compaction cancelled: nothing changed",
        ),
        (
            CompactionResult::Failed,
            Some("HTTP 500: boom"),
            "Compaction failed, nothing changed: HTTP 500: boom",
        ),
        (
            CompactionResult::NothingToCompact,
            Some("nothing older than the recent messages kept verbatim is left to summarise"),
            "Nothing to compact: nothing older",
        ),
    ] {
        let mut app = compacting(120, 40);
        app.update(agent(AgentEvent::CompactionEnd(end(outcome, error))));
        let text = screen(&mut app);
        assert!(text.contains(said), "{said:?} in {text}");
        assert!(
            !text.contains("Compacting 9.0k"),
            "the live line is replaced"
        );
        assert!(!text.contains("── compacted"));
    }
}

#[test]
fn slash_compact_asks_for_a_compaction_only_while_idle() {
    let mut app = app();
    typed(&mut app, "/compact keep the parser design");
    app.update(key(KeyCode::Esc));
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::Compact(Some("keep the parser design".into()))),
        "{effects:?}"
    );
    typed(&mut app, "/compact");
    app.update(key(KeyCode::Esc));
    assert!(
        app.update(key(KeyCode::Enter))
            .contains(&Effect::Compact(None))
    );
    app.update(agent(AgentEvent::AgentStart));
    // (No Esc here: while running it would send the text as steering.)
    typed(&mut app, "/compact");
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Compact(_))),
        "{effects:?}"
    );
    let said = app.chat().transcript().entries().iter().any(|e| {
        matches!(&e.kind, EntryKind::Notice(_, text) if text.contains("/compact works once it has finished (Esc interrupts it); a run compacts on its own"))
    });
    assert!(said);
}

#[test]
fn ctx_is_always_shown_and_warns_above_the_threshold() {
    // No configured window: the model's from the table (demo: the default, 128k).
    let mut app = App::new(claw_tui::tui::AppConfig::new("local", "llama3.1:8b"));
    app.update(Msg::Term(crossterm::event::Event::Resize(120, 40)));
    assert!(app.status_parts().contains(&"ctx 0%".to_owned()));
    let budget = ContextBudget::new(131_072, &CompactionSettings::default());
    let turn_end = |tokens| AgentEvent::TurnEnd {
        message: Message::Assistant(assistant(vec![text("ok")], StopReason::Stop)),
        tool_results: Vec::new(),
        context_usage: ContextUsage::new(tokens, &budget),
    };
    app.update(agent(turn_end(56_361)));
    assert!(
        app.status_parts().contains(&"ctx 43%".to_owned()),
        "{:?}",
        app.status_parts()
    );
    // The tests' apps use the built-in theme.
    let warning = Theme::fallback().fg(Token::Warning).fg;
    let ctx_colour = |app: &mut App| {
        let terminal = draw(app);
        let buffer = terminal.backend().buffer();
        let y = buffer.area.height - 1;
        let row: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        let x = row.find("ctx ").map(|i| row[..i].chars().count()).unwrap();
        buffer[(x as u16, y)].fg
    };
    assert_ne!(ctx_colour(&mut app), warning.unwrap());
    app.update(agent(turn_end(120_000)));
    assert!(app.status_parts().contains(&"ctx 91%".to_owned()));
    assert_eq!(Some(ctx_colour(&mut app)), warning);
    // After a compaction the figure is the compacted size.
    app.update(agent(AgentEvent::CompactionEnd(CompactionEnd::done(
        &compaction(),
    ))));
    assert!(
        app.status_parts().contains(&"ctx 18%".to_owned()),
        "{:?}",
        app.status_parts()
    );
}

#[test]
fn a_resumed_session_shows_everything_with_its_compaction_point() {
    let mut app = app();
    let messages: Vec<Message> = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question {i}"))
            } else {
                Message::Assistant(assistant(
                    vec![text(&format!("answer {i}"))],
                    StopReason::Stop,
                ))
            }
        })
        .collect();
    app.update(Msg::Sessions(sessions::Msg::Loaded(Box::new(
        LoadedSession {
            id: Some("0123456789abcdef".into()),
            messages: messages.into(),
            resumed: true,
            compactions: vec![compaction()],
            ..LoadedSession::default()
        },
    ))));
    let text = screen(&mut app);
    let divider = text
        .find("── compacted: 182k → 24k tokens ──")
        .expect(&text);
    for i in 0..6 {
        let at = text.find(&format!(" {i}")).unwrap();
        assert!(at < divider, "message {i} is above the divider");
    }
    assert!(text.find("question 6").unwrap() > divider);
    assert!(text.find("answer 7").unwrap() > divider);
}
