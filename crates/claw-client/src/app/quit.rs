//! The quit key (Ctrl+C): it interrupts a run or stops the user's shell commands, or
//! clears the composer; pressed again within a second, it quits. Its hint promises the
//! quit only while a second press quits: anything typed or pasted takes it back.

use super::{App, DOUBLE_PRESS};
use crate::msg::Effect;
use crate::part::Handled;
use claw_runtime::keymap::Action;

/// How the quit key's first-press hint ends.
const QUIT_AGAIN: &str = " again to quit";

impl App {
    /// The quit key's first press no longer counts, and its hint goes (something else
    /// was typed or pasted since).
    pub(super) fn end_quit_window(&mut self) -> Handled {
        self.last_cancel = None;
        if self.status.drop_hint_ending(QUIT_AGAIN) {
            Handled::changed()
        } else {
            Handled::unchanged()
        }
    }

    /// Ctrl+C: interrupt when running, else clear; twice within a second quits.
    pub(super) fn cancel(&mut self) -> Handled {
        if self
            .last_cancel
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_PRESS)
        {
            return Handled::changed().with(Effect::Quit);
        }
        self.last_cancel = Some(self.now);
        let quit_key = self.keymap.label(Action::Cancel);
        // Each hint promises a quit for as long as a second press quits, no longer.
        if self.status.running() {
            self.status.interrupt_requested();
            return self
                .hint(
                    format!("interrupted · {quit_key}{QUIT_AGAIN}"),
                    DOUBLE_PRESS,
                )
                .with(Effect::RestoreQueued)
                .with(Effect::Abort);
        }
        if self.tools.shell_running() {
            return self
                .hint(
                    format!("shell command stopped · {quit_key}{QUIT_AGAIN}"),
                    DOUBLE_PRESS,
                )
                .with(Effect::Shell(crate::shell::Effect::CancelAll));
        }
        self.composer.clear();
        self.hint(format!("{quit_key}{QUIT_AGAIN}"), DOUBLE_PRESS)
    }
}
