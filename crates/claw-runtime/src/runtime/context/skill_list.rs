//! The skills section of the system prompt: each skill's name, description and path,
//! within a budget so a large collection cannot crowd out the conversation.
//!
//! Descriptions are shortened first; only when even bare names and paths do not fit are
//! skills left out (global ones before project ones), and a warning names them.

use super::skills::Skill;
use crate::text::one_line;

/// The budget when the context window is unknown, in characters.
pub const DEFAULT_SKILL_BUDGET_CHARS: usize = 8_000;
/// Share of the context window the list may take, in percent.
const BUDGET_PERCENT: u64 = 2;
/// A rough characters-per-token ratio for English text and paths.
const CHARS_PER_TOKEN: u64 = 4;
/// Description lengths tried in turn until the list fits.
const DESCRIPTION_STEPS: [usize; 5] = [1024, 200, 100, 50, 0];

/// How many characters the skill list may take for a context window of `tokens`
/// (about 2% of it), or [`DEFAULT_SKILL_BUDGET_CHARS`] when it is not known.
pub fn skill_budget(context_window: Option<u64>) -> usize {
    match context_window.filter(|w| *w > 0) {
        Some(tokens) => {
            usize::try_from(tokens * BUDGET_PERCENT / 100 * CHARS_PER_TOKEN).unwrap_or(usize::MAX)
        }
        None => DEFAULT_SKILL_BUDGET_CHARS,
    }
}

/// The list as it goes in the prompt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillListing {
    /// One line per listed skill, by name.
    pub lines: Vec<String>,
    /// The budget it was fitted to, in characters.
    pub budget: usize,
    /// Whether descriptions had to be shortened.
    pub shortened: bool,
    /// Skills that did not fit at all, by name.
    pub left_out: Vec<String>,
}

impl SkillListing {
    /// The warning for the user when skills were left out.
    pub fn warning(&self) -> Option<String> {
        (!self.left_out.is_empty()).then(|| {
            format!(
                "{} skill(s) left out of the system prompt, over its {}-character skill \
                 budget: {} (mention one with $name to use it)",
                self.left_out.len(),
                self.budget,
                self.left_out.join(", ")
            )
        })
    }
}

fn line(skill: &Skill, description_chars: usize) -> String {
    if description_chars == 0 {
        return format!("- {} ({})", skill.name, skill.path.display());
    }
    format!(
        "- {}: {} ({})",
        skill.name,
        one_line(&skill.description, description_chars),
        skill.path.display()
    )
}

fn total(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count() + 1).sum()
}

/// `skills` (sorted by name) listed within `budget` characters.
pub fn list_skills(skills: &[Skill], budget: usize) -> SkillListing {
    let mut listing = SkillListing {
        budget,
        ..SkillListing::default()
    };
    for (step, &chars) in DESCRIPTION_STEPS.iter().enumerate() {
        let lines: Vec<String> = skills.iter().map(|s| line(s, chars)).collect();
        if total(&lines) <= budget {
            listing.lines = lines;
            listing.shortened = step > 0 && lines_differ(skills, chars);
            return listing;
        }
    }
    // Bare lines still do not fit: keep project skills first, then global, by name.
    let mut order: Vec<&Skill> = skills.iter().collect();
    order.sort_by(|a, b| (a.scope, &a.name).cmp(&(b.scope, &b.name)));
    let mut used = 0;
    let mut kept = Vec::new();
    for skill in order {
        let bare = line(skill, 0);
        let cost = bare.chars().count() + 1;
        if used + cost <= budget {
            used += cost;
            kept.push(skill.name.clone());
        } else {
            listing.left_out.push(skill.name.clone());
        }
    }
    listing.shortened = true;
    listing.lines = skills
        .iter()
        .filter(|s| kept.contains(&s.name))
        .map(|s| line(s, 0))
        .collect();
    listing.left_out.sort();
    listing
}

fn lines_differ(skills: &[Skill], chars: usize) -> bool {
    skills.iter().any(|s| s.description.chars().count() > chars)
}
