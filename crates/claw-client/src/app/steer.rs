//! Esc and the interrupt-tool key while the agent works: a steering message with the
//! composer's text, an interrupt when it is empty, and stopping the running tools so a
//! steer goes in at once. Each says honestly when what was sent will arrive.

use super::{App, DOUBLE_PRESS};
use crate::layout::Focus;
use crate::msg::Effect;
use crate::part::{HINT, Handled};
use claw_runtime::keymap::Action;

/// How long the hint about a steering message stays (it has more to say).
const STEER_HINT: std::time::Duration = std::time::Duration::from_secs(6);

impl App {
    /// Esc: close the popup; steer with text; interrupt when empty (not right after a steer).
    pub(super) fn escape(&mut self) -> Handled {
        if self.composer.completion_open() {
            self.composer.dismiss_completion();
            return Handled::changed();
        }
        if self.focus == Focus::Chat && self.subagents.chat_mut(&mut self.chat).unselect() {
            return Handled::changed();
        }
        if self.subagents.close() {
            return Handled::changed();
        }
        if !self.status.running() {
            // Idle, Esc only brings the focus back to the composer.
            self.focus = Focus::Composer;
            return Handled::changed();
        }
        if !self.composer.is_blank() {
            let text = self.composer.take();
            self.last_steer = Some(self.now);
            let hint = self.steer_hint();
            return self.hint(hint, STEER_HINT).with(Effect::Steer(text));
        }
        if self
            .last_steer
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS)
        {
            return self.hint("Esc again to interrupt", HINT);
        }
        self.last_steer = None;
        self.status.interrupt_requested();
        // What was queued comes back as `QueueRestored`, which says so when there was any.
        self.hint("interrupted", HINT)
            .with(Effect::RestoreQueued)
            .with(Effect::Abort)
    }

    /// What happens to a steering message sent now, said honestly: it waits for the
    /// running tool (and the key that stops it), or for the answer being written.
    fn steer_hint(&self) -> String {
        let stop = self.keymap.label(Action::InterruptTool);
        match self.tools.running_names().as_slice() {
            [] => "steer queued · delivered when this answer ends".to_owned(),
            [one] => format!(
                "steer queued · delivered when {one} finishes · {stop}: stop {one}, deliver now"
            ),
            _ => format!(
                "steer queued · delivered when the tools finish · {stop}: stop them, deliver now"
            ),
        }
    }

    /// The interrupt-tool key: steer with the composer's text (if any) and stop the tool
    /// calls running now, so the steer goes in at once and the turn goes on.
    pub(super) fn interrupt_tool(&mut self) -> Handled {
        if !self.status.running() {
            return self.hint("nothing is running", HINT);
        }
        let running = self.tools.running_names();
        let mut handled = Handled::changed();
        if !self.composer.is_blank() {
            let text = self.composer.take();
            handled = handled.with(Effect::Steer(text));
        }
        let steering = !handled.effects.is_empty() || !self.status.queued().0.is_empty();
        if running.is_empty() {
            let hint = if steering {
                "steer queued · no tool is running: delivered when this answer ends"
            } else {
                "no tool is running"
            };
            return handled.and(self.hint(hint, STEER_HINT));
        }
        let what = match running.as_slice() {
            [one] => one.clone(),
            _ => "the tools".to_owned(),
        };
        let hint = if steering {
            format!("stopping {what} · the steer goes in now")
        } else {
            format!("stopping {what} · the turn goes on")
        };
        handled
            .and(self.hint(hint, STEER_HINT))
            .with(Effect::InterruptTools)
    }
}
