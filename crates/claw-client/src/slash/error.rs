//! Why a line starting with `/` is no command the client can run.

use super::{COMMANDS, THINKING};

/// A slash command that cannot be run as typed; each says how to write it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SlashError {
    /// `/model` without a name.
    #[error("/model needs a model name, e.g. /model gpt-4.1")]
    ModelNeedsName,
    /// `/thinking` with a level that does not exist.
    #[error("/thinking takes one of {}", THINKING.join(", "))]
    UnknownThinking,
    /// `/steering` or `/followup` without `all` or `one`.
    #[error("{command} takes all or one, e.g. {command} all")]
    QueueMode {
        /// The command typed.
        command: &'static str,
    },
    /// `/tools` without `sequential` or `parallel`.
    #[error("/tools takes sequential or parallel")]
    ToolsMode,
    /// `/copy` with an argument other than `code`.
    #[error("/copy copies the last answer; /copy code its last code block")]
    CopyArgument,
    /// `/theme` without a name.
    #[error("/theme needs a theme name, e.g. /theme light (Tab lists them)")]
    ThemeNeedsName,
    /// No command of that name.
    #[error(
        "unknown command {name}; the commands are {}. To send a message that starts \
         with /, put a space before it.",
        command_names()
    )]
    Unknown {
        /// The word typed.
        name: String,
    },
}

/// The built-in commands' names, comma separated.
fn command_names() -> String {
    let names: Vec<&str> = COMMANDS.iter().map(|(n, _, _)| *n).collect();
    names.join(", ")
}
