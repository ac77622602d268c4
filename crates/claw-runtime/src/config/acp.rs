//! `[acp]`: what `claw-tui acp` takes from the editor that drives it.

use serde::Deserialize;

/// `[acp]` settings. Both are off by default: each hands the editor something the
/// sandbox otherwise keeps to itself (see `docs/architecture.md`, the ACP agent).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcpSection {
    /// The file tools read and write text through the editor (`fs/read_text_file`,
    /// `fs/write_text_file`), so they see unsaved changes and their writes land in the
    /// editor's buffers. Paths are still checked beneath the workspace handle and every
    /// change is checkpointed, but the editor opens the checked path itself, following
    /// symlinks: a link swapped in between the check and its open leads it out.
    #[serde(default)]
    pub editor_files: bool,
    /// `exec` runs its commands in the editor's terminal (`terminal/*`), where the
    /// editor shows their output live. The deny rules, approval, plan mode and hooks
    /// still apply, but the command runs outside claw-tui's sandbox, as the editor runs
    /// it.
    #[serde(default)]
    pub editor_terminal: bool,
}
