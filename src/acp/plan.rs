//! The `plan` update: in plan mode the model answers with a numbered plan (the mode's
//! note asks for one), and the editor is sent its steps as plan entries, so it can show
//! them as a list of its own. The steps are the answer's top-level numbered items; a run
//! that ends without any sends no plan, and the entries stay `pending` (claw-tui keeps
//! no task list the model ticks off, so it reports none as started or done).

use crate::agent::Message;
use agent_client_protocol::v1::schema::{Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus};

/// Most entries sent; a longer list is cut (an answer's list of findings, not a plan).
const MAX_ENTRIES: usize = 50;
/// Most characters of one entry.
const MAX_ENTRY_CHARS: usize = 500;

/// The plan in the last assistant message of `messages` (a run's new messages), if its
/// text has a numbered list.
pub fn from_run(messages: &[Message]) -> Option<Plan> {
    let text = messages.iter().rev().find_map(|message| match message {
        Message::Assistant(assistant) => Some(assistant.text()),
        _ => None,
    })?;
    let entries: Vec<PlanEntry> = steps(&text)
        .into_iter()
        .take(MAX_ENTRIES)
        .map(|step| PlanEntry::new(step, PlanEntryPriority::Medium, PlanEntryStatus::Pending))
        .collect();
    (!entries.is_empty()).then(|| Plan::new(entries))
}

/// The top-level numbered items of a Markdown text (`1. …`, `2) …`, indented by at most
/// three spaces, outside code blocks), each as plain text.
fn steps(text: &str) -> Vec<String> {
    let mut steps = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        let indent = line.len() - trimmed.len();
        if in_code || indent > 3 {
            continue;
        }
        if let Some(item) = numbered(trimmed) {
            steps.push(plain(item));
        }
    }
    steps.retain(|step| !step.is_empty());
    steps
}

/// The text after a list number (`12. ` or `12) `), if the line starts with one.
fn numbered(line: &str) -> Option<&str> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = line[digits..].strip_prefix(['.', ')'])?;
    rest.starts_with([' ', '\t']).then(|| rest.trim())
}

/// An item without its emphasis marks and trailing colon, cut to the entry limit.
fn plain(item: &str) -> String {
    let text = item.replace("**", "").replace("__", "");
    let text = text.trim().trim_end_matches(':').trim_end();
    if text.chars().count() <= MAX_ENTRY_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_ENTRY_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AssistantMessage, Block};

    fn answer(text: &str) -> Vec<Message> {
        let mut message = AssistantMessage::empty("m");
        message.content.push(Block::Text {
            text: text.to_owned(),
        });
        vec![Message::Assistant(message)]
    }

    #[test]
    fn a_numbered_plan_becomes_pending_entries() {
        let plan = from_run(&answer(
            "Here is the plan.\n\n1. **Add** `parse()` to src/lib.rs:\n   - nested detail\n   \
             1. a nested step\n2) Call it from main\n\n```\n3. not a step\n```\n10. Run `cargo test`\n\
             Questions: none.",
        ))
        .expect("a plan");
        let contents: Vec<_> = plan.entries.iter().map(|e| e.content.as_str()).collect();
        assert_eq!(
            contents,
            [
                "Add `parse()` to src/lib.rs",
                "a nested step",
                "Call it from main",
                "Run `cargo test`"
            ]
        );
        assert!(
            plan.entries
                .iter()
                .all(|e| e.status == PlanEntryStatus::Pending)
        );
    }

    #[test]
    fn no_numbered_list_no_plan() {
        assert_eq!(
            from_run(&answer("Nothing to do.\n- a bullet\n2024 was a year")),
            None
        );
        assert_eq!(from_run(&[]), None);
        assert_eq!(from_run(&answer("1.5 is a number\n")), None);
    }

    #[test]
    fn long_plans_and_entries_are_cut() {
        let many: String = (1..=80).map(|i| format!("{i}. step {i}\n")).collect();
        assert_eq!(from_run(&answer(&many)).unwrap().entries.len(), MAX_ENTRIES);
        let long = format!("1. {}", "x".repeat(2000));
        let entry = &from_run(&answer(&long)).unwrap().entries[0];
        assert_eq!(entry.content.chars().count(), MAX_ENTRY_CHARS);
    }
}
