//! The runtime side of plan mode in the client (the checkpoints' `/undo`, `/rewind` and
//! `/diff` are their own slice: [`crate::tui::checkpoints`]).

use crate::setup::Controls;
use crate::tui::msg::Effect;

/// Carries out a control effect.
pub(super) fn execute(controls: &Controls, effect: Effect) {
    if let Effect::SetMode(mode) = effect {
        controls.modes.set(mode);
    }
}
