//! The user's controls over the main agent, and how they follow the active session.

use crate::checkpoint::Checkpoints;
use crate::hooks::Hooks;
use crate::runtime::ModeSwitch;
use crate::session::{SessionFollower, SessionWriter};
use std::path::Path;
use std::sync::Arc;

/// What puts the user in control of the main agent: the hooks (prompt hooks run by the
/// front-ends; tool hooks are in the policy already), the checkpoints behind undo,
/// rewind and diff, and the plan-mode switch. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Controls {
    /// The configured hooks.
    pub hooks: Hooks,
    /// The active session's checkpoints.
    pub checkpoints: Checkpoints,
    /// Plan mode on and off.
    pub modes: ModeSwitch,
}

impl Controls {
    /// What follows the session that becomes the active one: the hooks name it, and its
    /// checkpoints are kept beside it.
    pub fn session_follower(&self) -> SessionFollower {
        let controls = self.clone();
        Arc::new(move |writer: &SessionWriter, data_dir: &Path| {
            controls.hooks.set_session(writer.id());
            controls
                .checkpoints
                .enter(writer.path(), data_dir, writer.appender())
        })
    }
}
