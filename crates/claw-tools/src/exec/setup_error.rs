//! Why a command could not be set up to run; the text is what the model reads.

use std::io;
use std::path::PathBuf;

/// A command refused or impossible before it starts (its working directory, the
/// launcher, the private temp dir).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The workspace itself cannot be resolved.
    #[error(
        "The workspace {} cannot be opened ({source}), so no command can run. Tell the user.",
        workspace.display()
    )]
    Workspace {
        /// The configured workspace.
        workspace: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// `cwd` does not resolve.
    #[error(
        "cwd \"{cwd}\" cannot be used ({source}). Give an existing directory inside the \
         workspace {}.",
        root.display()
    )]
    CwdUnusable {
        /// The `cwd` argument.
        cwd: String,
        /// The canonical workspace.
        root: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// `cwd` resolves outside the workspace.
    #[error(
        "cwd \"{cwd}\" resolves to {}, which is outside the workspace {}. Commands run only \
         inside the workspace; give a directory in it (relative paths start at its root).",
        resolved.display(),
        root.display()
    )]
    CwdOutside {
        /// The `cwd` argument.
        cwd: String,
        /// Where it leads.
        resolved: PathBuf,
        /// The canonical workspace.
        root: PathBuf,
    },
    /// `cwd` is a file or something else that is not a directory.
    #[error("cwd \"{cwd}\" is not a directory. Give a directory inside the workspace.")]
    CwdNotADirectory {
        /// The `cwd` argument.
        cwd: String,
    },
    /// The running executable, the default launcher, cannot be found.
    #[error(
        "Cannot find the claw-tui executable to start the sandbox launcher ({source}). Tell \
         the user to set [exec] launcher."
    )]
    NoLauncher {
        /// Why.
        source: io::Error,
    },
    /// The private temp dir cannot be made.
    #[error(
        "Cannot make the private temp dir for commands in {} ({source}). Tell the user.",
        parent.display()
    )]
    NoTempDir {
        /// Where it was to be made.
        parent: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A protected file has another name a command could write it through.
    #[error("{why}")]
    ProtectedLinked {
        /// Which file, and what the user can do.
        why: String,
    },
}
