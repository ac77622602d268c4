//! Slash commands: parsing and completion.

use crate::agent::{QueueMode, ThinkingLevel, ToolExecution};

/// Every command: name, argument synopsis, what it does.
pub const COMMANDS: [(&str, &str, &str); 13] = [
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
        "/compact",
        "[FOCUS]",
        "summarise the older history now (FOCUS: what the summary must keep)",
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
        "/sessions",
        "",
        "pick an earlier session of this workspace to continue",
    ),
    ("/quit", "", "quit"),
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
    /// Compact the history now; the text says what the summary should keep.
    Compact(Option<String>),
    /// List the skills.
    Skills,
    /// Export the session as HTML.
    Export,
    /// A fresh session.
    New,
    /// The session picker.
    Sessions,
    /// Quit.
    Quit,
}

fn queue_mode(arg: &str, command: &str) -> Result<QueueMode, String> {
    match arg {
        "all" => Ok(QueueMode::All),
        "one" | "one-at-a-time" => Ok(QueueMode::OneAtATime),
        _ => Err(format!("{command} takes all or one, e.g. {command} all")),
    }
}

/// Parses a composer text starting with `/`; `None` when it is not a command.
pub fn parse(text: &str) -> Option<Result<Command, String>> {
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
        "/model" if arg.is_empty() => Err("/model needs a model name, e.g. /model gpt-4.1".into()),
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
            None => Err(format!("/thinking takes one of {}", THINKING.join(", "))),
        },
        "/steering" => queue_mode(arg, "/steering").map(Command::Steering),
        "/followup" => queue_mode(arg, "/followup").map(Command::FollowUp),
        "/tools" => match arg {
            "sequential" => Ok(Command::Tools(ToolExecution::Sequential)),
            "parallel" => Ok(Command::Tools(ToolExecution::Parallel)),
            _ => Err("/tools takes sequential or parallel".into()),
        },
        "/copy" => match arg {
            "" => Ok(Command::Copy { code: false }),
            "code" => Ok(Command::Copy { code: true }),
            _ => Err("/copy copies the last answer; /copy code its last code block".into()),
        },
        "/compact" => Ok(Command::Compact((!arg.is_empty()).then(|| arg.to_owned()))),
        "/skills" => Ok(Command::Skills),
        "/export" => Ok(Command::Export),
        "/new" => Ok(Command::New),
        "/sessions" => Ok(Command::Sessions),
        "/quit" | "/exit" => Ok(Command::Quit),
        other => {
            let names: Vec<&str> = COMMANDS.iter().map(|(n, _, _)| *n).collect();
            Err(format!(
                "unknown command {other}; the commands are {}. To send a message that starts \
                 with /, put a space before it.",
                names.join(", ")
            ))
        }
    };
    Some(command)
}

/// Candidates for the text before the cursor and how many characters they replace.
pub fn complete(before_cursor: &str, models: &[String]) -> (Vec<String>, usize) {
    fn filter<'a>(options: impl Iterator<Item = &'a str>, partial: &str) -> (Vec<String>, usize) {
        let items: Vec<String> = options
            .filter(|o| o.starts_with(partial))
            .map(str::to_owned)
            .collect();
        // A finished word needs no popup.
        if items.len() == 1 && items[0] == partial {
            return (Vec::new(), 0);
        }
        (items, partial.chars().count())
    }
    match before_cursor.split_once(' ') {
        None => filter(COMMANDS.iter().map(|(n, _, _)| *n), before_cursor),
        Some((command, arg)) => {
            if arg.contains(' ') {
                return (Vec::new(), 0);
            }
            let fixed: &[&str] = match command {
                "/model" => return filter(models.iter().map(String::as_str), arg),
                "/thinking" => &THINKING,
                "/steering" | "/followup" => &["all", "one"],
                "/tools" => &["sequential", "parallel"],
                "/copy" => &["code"],
                _ => &[],
            };
            filter(fixed.iter().copied(), arg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_arguments_and_explain_mistakes() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/new"), Some(Ok(Command::New)));
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
        assert!(
            parse("/tools fast")
                .unwrap()
                .unwrap_err()
                .contains("sequential or parallel")
        );
        assert!(parse("/nope").unwrap().unwrap_err().contains("/help"));
    }

    #[test]
    fn completion_covers_names_and_arguments() {
        assert_eq!(complete("/t", &[]).0, ["/thinking", "/tools"]);
        assert_eq!(complete("/new", &[]).0, Vec::<String>::new());
        let models = vec!["gpt-4.1".to_owned(), "gpt-4o".to_owned(), "o3".to_owned()];
        assert_eq!(
            complete("/model gpt", &models),
            (vec!["gpt-4.1".to_owned(), "gpt-4o".to_owned()], 3)
        );
        assert_eq!(complete("/steering a", &[]).0, ["all"]);
    }
}
