//! Slash commands: parsing and completion.

mod error;

pub use error::SlashError;

use claw_agent::{QueueMode, ThinkingLevel, ToolExecution};

/// Every command: name, argument synopsis, what it does.
pub const COMMANDS: [(&str, &str, &str); 24] = [
    ("/help", "", "keys and commands"),
    ("/model", "NAME", "use another model from the next run on"),
    (
        "/thinking",
        "off|minimal|low|medium|high|xhigh",
        "thinking effort from the next run on",
    ),
    (
        "/steering",
        "all|one",
        "deliver queued steering messages together or one by one",
    ),
    (
        "/followup",
        "all|one",
        "deliver queued follow-ups together or one by one",
    ),
    (
        "/tools",
        "sequential|parallel",
        "run a message's tool calls one by one or together",
    ),
    (
        "/copy",
        "[code]",
        "copy the last answer (or its last code block) via OSC 52",
    ),
    (
        "/mcp",
        "",
        "MCP servers, their tools and what their definitions cost",
    ),
    (
        "/retry",
        "",
        "send the request that failed again (after an error)",
    ),
    (
        "/compact",
        "[FOCUS]",
        "summarise the older history now (FOCUS: what to keep)",
    ),
    (
        "/theme",
        "NAME",
        "switch colours (dark, light, high-contrast or your own)",
    ),
    (
        "/status",
        "",
        "provider, model, context, usage, queues, sandbox, session",
    ),
    (
        "/settings",
        "",
        "the settings, where each came from; s saves changes",
    ),
    (
        "/plan",
        "",
        "plan mode: the agent reads and plans, changes nothing",
    ),
    (
        "/undo",
        "",
        "put back the files the last turn changed (says which)",
    ),
    (
        "/rewind",
        "",
        "take files, the conversation or both back to a prompt",
    ),
    (
        "/diff",
        "",
        "files changed this session, each against its old content",
    ),
    (
        "/skills",
        "",
        "list the skills found (mention one with $name)",
    ),
    (
        "/export",
        "",
        "write this session as a self-contained HTML file",
    ),
    ("/new", "", "start a fresh session"),
    (
        "/name",
        "[NAME]",
        "name this session (the picker shows and finds it)",
    ),
    (
        "/sessions",
        "[ID]",
        "continue an earlier session of this workspace (or ID)",
    ),
    (
        "/inspect",
        "",
        "each LLM request: its parts, body and changes",
    ),
    ("/quit", "", "quit"),
];

/// What each thinking level means, for the completion popup.
const THINKING_DETAILS: [&str; 6] = [
    "no thinking",
    "the least thinking the model allows",
    "a little",
    "a medium budget",
    "a large budget",
    "the largest budget",
];

const THINKING: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// A parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Show the help overlay.
    Help,
    /// Switch model.
    Model(String),
    /// Set the thinking level.
    Thinking(ThinkingLevel),
    /// Set the steering queue's mode.
    Steering(QueueMode),
    /// Set the follow-up queue's mode.
    FollowUp(QueueMode),
    /// Set the tool execution mode.
    Tools(ToolExecution),
    /// Copy the last answer, or its last code block.
    Copy {
        /// Only the last code block.
        code: bool,
    },
    /// The MCP servers overlay.
    Mcp,
    /// The request inspector.
    Inspect,
    /// Switch colours.
    Theme(String),
    /// Show the status overlay.
    Status,
    /// Compact the history now; the text says what the summary should keep.
    Compact(Option<String>),
    /// Send the request that failed again.
    Retry,
    /// Name the session (empty: remove its name).
    Name(String),
    /// Show the settings and where each came from.
    Settings,
    /// Plan mode on or off.
    Plan,
    /// Undo the last turn's file changes.
    Undo,
    /// The rewind picker.
    Rewind,
    /// The session's diff.
    Diff,
    /// List the skills.
    Skills,
    /// Export the session as HTML.
    Export,
    /// A fresh session.
    New,
    /// The session picker, or the session whose id starts with this.
    Sessions(Option<String>),
    /// Quit.
    Quit,
}

fn queue_mode(arg: &str, command: &'static str) -> Result<QueueMode, SlashError> {
    match arg {
        "all" => Ok(QueueMode::All),
        "one" | "one-at-a-time" => Ok(QueueMode::OneAtATime),
        _ => Err(SlashError::QueueMode { command }),
    }
}

/// Parses a composer text starting with `/`; `None` when it is not a command.
pub fn parse(text: &str) -> Option<Result<Command, SlashError>> {
    let text = text.trim();
    if !text.starts_with('/') {
        return None;
    }
    let (name, arg) = match text.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (text, ""),
    };
    let command = match name {
        "/help" => Ok(Command::Help),
        "/model" if arg.is_empty() => Err(SlashError::ModelNeedsName),
        "/model" => Ok(Command::Model(arg.to_owned())),
        "/thinking" => match THINKING.iter().position(|l| *l == arg) {
            Some(i) => Ok(Command::Thinking(
                [
                    ThinkingLevel::Off,
                    ThinkingLevel::Minimal,
                    ThinkingLevel::Low,
                    ThinkingLevel::Medium,
                    ThinkingLevel::High,
                    ThinkingLevel::Xhigh,
                ][i],
            )),
            None => Err(SlashError::UnknownThinking),
        },
        "/steering" => queue_mode(arg, "/steering").map(Command::Steering),
        "/followup" => queue_mode(arg, "/followup").map(Command::FollowUp),
        "/tools" => match arg {
            "sequential" => Ok(Command::Tools(ToolExecution::Sequential)),
            "parallel" => Ok(Command::Tools(ToolExecution::Parallel)),
            _ => Err(SlashError::ToolsMode),
        },
        "/copy" => match arg {
            "" => Ok(Command::Copy { code: false }),
            "code" => Ok(Command::Copy { code: true }),
            _ => Err(SlashError::CopyArgument),
        },
        "/mcp" => Ok(Command::Mcp),
        "/inspect" => Ok(Command::Inspect),
        "/theme" if arg.is_empty() => Err(SlashError::ThemeNeedsName),
        "/theme" => Ok(Command::Theme(arg.to_owned())),
        "/status" => Ok(Command::Status),
        "/compact" => Ok(Command::Compact((!arg.is_empty()).then(|| arg.to_owned()))),
        "/retry" => Ok(Command::Retry),
        "/name" => Ok(Command::Name(arg.to_owned())),
        "/settings" => Ok(Command::Settings),
        "/plan" => Ok(Command::Plan),
        "/undo" => Ok(Command::Undo),
        "/rewind" => Ok(Command::Rewind),
        "/diff" => Ok(Command::Diff),
        "/skills" => Ok(Command::Skills),
        "/export" => Ok(Command::Export),
        "/new" => Ok(Command::New),
        "/sessions" if arg.is_empty() => Ok(Command::Sessions(None)),
        "/sessions" => Ok(Command::Sessions(Some(arg.to_owned()))),
        "/quit" | "/exit" => Ok(Command::Quit),
        other => Err(SlashError::Unknown {
            name: other.to_owned(),
        }),
    };
    Some(command)
}

/// One completion candidate and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// What is inserted.
    pub value: String,
    /// A short description shown beside it (may be empty).
    pub detail: String,
}

/// What arguments complete from besides the fixed ones.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sources<'a> {
    /// Model names for `/model`.
    pub models: &'a [String],
    /// The model in use (marked `current`).
    pub current_model: &'a str,
    /// Theme names for `/theme`.
    pub themes: &'a [String],
    /// Sessions for `/sessions`: id and description.
    pub sessions: &'a [(String, String)],
    /// The user's own commands: `/name` and what the popup says of it (after the
    /// built-ins, which win over a file of the same name).
    pub custom: &'a [(String, String)],
}

/// Candidates for the text before the cursor, with their descriptions, and how many
/// characters they replace.
pub fn complete(before_cursor: &str, sources: &Sources<'_>) -> (Vec<Choice>, usize) {
    fn filter<'a>(
        options: impl Iterator<Item = (&'a str, &'a str)>,
        partial: &str,
    ) -> (Vec<Choice>, usize) {
        let items: Vec<Choice> = options
            .filter(|(o, _)| o.starts_with(partial))
            .map(|(value, detail)| Choice {
                value: value.to_owned(),
                detail: detail.to_owned(),
            })
            .collect();
        // A finished word needs no popup.
        if items.len() == 1 && items[0].value == partial {
            return (Vec::new(), 0);
        }
        (items, partial.chars().count())
    }
    let Some((command, arg)) = before_cursor.split_once(' ') else {
        let builtin = COMMANDS.iter().map(|(n, _, d)| (*n, *d));
        let custom = sources.custom.iter().map(|(n, d)| (n.as_str(), d.as_str()));
        return filter(builtin.chain(custom), before_cursor);
    };
    if arg.contains(' ') {
        return (Vec::new(), 0);
    }
    let pairs: Vec<(&str, &str)> = match command {
        "/model" => sources
            .models
            .iter()
            .map(|m| {
                let detail = if m == sources.current_model {
                    "current"
                } else {
                    ""
                };
                (m.as_str(), detail)
            })
            .collect(),
        "/thinking" => THINKING.iter().copied().zip(THINKING_DETAILS).collect(),
        "/theme" => sources
            .themes
            .iter()
            .map(|t| {
                let builtin = crate::theme::BUILTIN_THEMES
                    .iter()
                    .any(|(name, _)| name == t);
                (t.as_str(), if builtin { "built-in" } else { "your theme" })
            })
            .collect(),
        "/sessions" => sources
            .sessions
            .iter()
            .map(|(id, about)| (id.as_str(), about.as_str()))
            .collect(),
        "/steering" | "/followup" => vec![
            ("all", "deliver every queued message together"),
            ("one", "deliver them one by one"),
        ],
        "/tools" => vec![
            ("sequential", "one call after another"),
            ("parallel", "a message's calls together"),
        ],
        "/copy" => vec![("code", "the last code block only")],
        _ => Vec::new(),
    };
    filter(pairs.into_iter(), arg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_arguments_and_explain_mistakes() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/new"), Some(Ok(Command::New)));
        assert_eq!(parse("/sessions"), Some(Ok(Command::Sessions(None))));
        assert_eq!(
            parse("/sessions 3c3b"),
            Some(Ok(Command::Sessions(Some("3c3b".into()))))
        );
        assert_eq!(
            parse("/theme light"),
            Some(Ok(Command::Theme("light".into())))
        );
        assert_eq!(parse("/theme"), Some(Err(SlashError::ThemeNeedsName)));
        assert_eq!(
            parse("/model  gpt-x "),
            Some(Ok(Command::Model("gpt-x".into())))
        );
        assert_eq!(
            parse("/steering all"),
            Some(Ok(Command::Steering(QueueMode::All)))
        );
        assert_eq!(
            parse("/followup one"),
            Some(Ok(Command::FollowUp(QueueMode::OneAtATime)))
        );
        assert_eq!(
            parse("/thinking high"),
            Some(Ok(Command::Thinking(ThinkingLevel::High)))
        );
        assert_eq!(parse("/copy code"), Some(Ok(Command::Copy { code: true })));
        assert_eq!(parse("/compact"), Some(Ok(Command::Compact(None))));
        assert_eq!(
            parse("/compact  keep the parser design "),
            Some(Ok(Command::Compact(Some("keep the parser design".into()))))
        );
        assert_eq!(parse("/tools fast"), Some(Err(SlashError::ToolsMode)));
        assert!(
            parse("/tools fast")
                .unwrap()
                .unwrap_err()
                .to_string()
                .contains("sequential or parallel")
        );
        let unknown = parse("/nope").unwrap().unwrap_err();
        assert_eq!(
            unknown,
            SlashError::Unknown {
                name: "/nope".into()
            }
        );
        assert!(
            unknown
                .to_string()
                .starts_with("unknown command /nope; the commands are /help, ")
        );
        assert!(
            unknown
                .to_string()
                .ends_with("To send a message that starts with /, put a space before it.")
        );
        assert_eq!(
            parse("/steering some").unwrap().unwrap_err().to_string(),
            "/steering takes all or one, e.g. /steering all"
        );
        assert_eq!(
            parse("/thinking lots").unwrap().unwrap_err().to_string(),
            "/thinking takes one of off, minimal, low, medium, high, xhigh"
        );
        assert_eq!(
            parse("/model").unwrap().unwrap_err().to_string(),
            "/model needs a model name, e.g. /model gpt-4.1"
        );
    }

    fn values(choices: &[Choice]) -> Vec<&str> {
        choices.iter().map(|c| c.value.as_str()).collect()
    }

    #[test]
    fn completion_covers_names_and_arguments_with_descriptions() {
        let none = Sources::default();
        let (names, _) = complete("/t", &none);
        assert_eq!(values(&names), ["/thinking", "/tools", "/theme"]);
        assert_eq!(names[0].detail, "thinking effort from the next run on");
        assert!(complete("/new", &none).0.is_empty());
        let models = vec!["gpt-4.1".to_owned(), "gpt-4o".to_owned(), "o3".to_owned()];
        let sources = Sources {
            models: &models,
            current_model: "gpt-4o",
            ..Sources::default()
        };
        let (found, replaced) = complete("/model gpt", &sources);
        assert_eq!((values(&found), replaced), (vec!["gpt-4.1", "gpt-4o"], 3));
        assert_eq!(found[1].detail, "current");
        assert_eq!(values(&complete("/steering a", &none).0), ["all"]);
        let (levels, _) = complete("/thinking h", &none);
        assert_eq!(levels[0].detail, "a large budget");
        let themes = vec!["dark".to_owned(), "solarized".to_owned()];
        let sources = Sources {
            themes: &themes,
            ..Sources::default()
        };
        let (found, _) = complete("/theme ", &sources);
        assert_eq!(found[1].detail, "your theme");
        let sessions = vec![(
            "3c3b1f2a".to_owned(),
            "5 min ago · fix the build".to_owned(),
        )];
        let sources = Sources {
            sessions: &sessions,
            ..Sources::default()
        };
        assert_eq!(
            complete("/sessions 3c", &sources).0[0].detail,
            "5 min ago · fix the build"
        );
    }
}
