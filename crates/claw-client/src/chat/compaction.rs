//! The chat's side of compaction: the live line while it runs, the divider it leaves
//! (its summary folded until asked for), and the dividers of a loaded session.

use super::{Chat, EntryKind};
use crate::part::Handled;
use claw_agent::{CompactionEnd, CompactionResult, NoticeLevel};

impl Chat {
    /// A compaction began: the live line.
    pub(crate) fn compaction_started(&mut self, tokens_before: u64) -> Handled {
        let index = self
            .transcript
            .push(EntryKind::Compacting { tokens_before });
        self.compacting = Some(index);
        Handled::changed()
    }

    /// A compaction ended: the live line becomes the divider, or says why nothing
    /// changed.
    pub(crate) fn compaction_ended(&mut self, end: &CompactionEnd) -> Handled {
        let why = end.error.as_deref().unwrap_or("no reason was given");
        let kind = match end.outcome {
            CompactionResult::Aborted => EntryKind::Notice(
                NoticeLevel::Info,
                "Compaction cancelled: nothing changed, the model still gets the whole history."
                    .into(),
            ),
            CompactionResult::NothingToCompact => {
                EntryKind::Notice(NoticeLevel::Info, format!("Nothing to compact: {why}."))
            }
            CompactionResult::Failed => EntryKind::Notice(
                NoticeLevel::Warning,
                format!("Compaction failed, nothing changed: {why}"),
            ),
            CompactionResult::Compacted => {
                self.has_summaries = true;
                EntryKind::Compacted {
                    tokens_before: end.tokens_before,
                    tokens_after: end.tokens_after,
                    summary: end.summary.clone(),
                }
            }
        };
        match self.compacting.take() {
            Some(index) => self.transcript.replace(index, kind),
            None => {
                self.transcript.push(kind);
            }
        }
        Handled::changed()
    }

    /// A compaction recorded in a loaded session: its divider.
    pub(crate) fn compacted(&mut self, tokens_before: u64, tokens_after: u64, summary: String) {
        self.has_summaries = true;
        self.transcript.push(EntryKind::Compacted {
            tokens_before,
            tokens_after,
            summary,
        });
    }

    /// Expands or collapses every compaction summary.
    pub(crate) fn toggle_summaries(&mut self) -> Handled {
        self.expand_summaries = !self.expand_summaries;
        self.transcript.invalidate_all();
        Handled::changed()
    }

    /// Whether a compaction divider is shown (Enter expands its summary).
    pub fn has_summaries(&self) -> bool {
        self.has_summaries
    }

    /// Whether compaction summaries are expanded.
    pub fn summaries_expanded(&self) -> bool {
        self.expand_summaries
    }
}
