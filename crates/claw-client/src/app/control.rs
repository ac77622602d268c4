//! The user's controls (model side): plan mode on and off (`/plan`, Shift+Tab in the
//! composer) and "Implement this plan?", `/undo` and `/rewind` with their
//! confirmations, `/diff`, and a prompt a hook refused.

use super::App;
use crate::msg::Effect;
use crate::overlay::Overlay;
use crate::part::Handled;
use claw_agent::NoticeLevel;
use claw_runtime::runtime::AgentMode;

impl App {
    /// Switches default → plan → default.
    pub(super) fn cycle_mode(&mut self) -> Handled {
        let mode = self.status.mode().next();
        self.status.set_mode(mode);
        self.plan_ready = false;
        let running = self.status.running();
        let text = match mode {
            AgentMode::Plan => format!(
                "Plan mode{}: the agent reads and plans, and changes nothing (no edits, \
                 commands, jobs or subagents). Shift+Tab or /plan switches back.",
                if running {
                    " (this run's calls that would change anything are refused from now on)"
                } else {
                    ""
                }
            ),
            AgentMode::Default => format!(
                "Plan mode off{}: every tool is back.",
                if running {
                    " from the next prompt on"
                } else {
                    ""
                }
            ),
        };
        self.chat
            .notice(NoticeLevel::Info, text)
            .with(Effect::SetMode(mode))
    }

    /// Enter on an empty composer: after a plan in plan mode, offers to implement it.
    pub(super) fn offer_plan(&mut self) -> Handled {
        if !self.plan_ready || self.status.running() || self.status.mode() != AgentMode::Plan {
            return Handled::unchanged();
        }
        match self.chat.last_answer().filter(|a| !a.trim().is_empty()) {
            Some(plan) => self.overlays.push(Overlay::ImplementPlan { plan }),
            None => Handled::unchanged(),
        }
    }

    /// A run ended: in plan mode its answer is a plan to offer.
    pub(super) fn run_ended_in_mode(&mut self) {
        self.plan_ready = self.status.mode() == AgentMode::Plan;
    }

    /// A prompt hook refused `text`: said in the chat, the text back in the composer.
    pub(super) fn prompt_blocked(&mut self, text: String, reason: String) -> Handled {
        let said = self.chat.notice(
            NoticeLevel::Warning,
            format!("⛔ A prompt hook blocked your message: {reason}"),
        );
        said.and(self.restore_to_composer(vec![crate::msg::QueuedText::follow_up(text)]))
    }
}
