//! The runtime side of plan mode in the client (the checkpoints' `/undo`, `/rewind` and
//! `/diff` are their own slice: [`super::checkpoints`]).

use super::msg::Effect;
use crate::setup::Controls;

/// Carries out a control effect.
pub(super) fn execute(controls: &Controls, effect: Effect) {
    if let Effect::SetMode(mode) = effect {
        controls.modes.set(mode);
    }
}
