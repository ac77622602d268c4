//! Slash commands over ACP: the built-ins that make sense without the terminal client
//! (`/compact`, `/undo`, `/diff`, `/plan`) and the user's custom commands (the same
//! files the client reads), announced with `available_commands_update`. A prompt that
//! starts with one runs it; a custom command's prompt goes to the agent like any other.

use super::pump::Job;
use super::updates::fenced;
use crate::checkpoint::{Conflicts, UndoOutcome};
use crate::commands::{CommandSet, discover_commands};
use crate::config::Settings;
use crate::setup::Controls;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentChunk, PromptResponse,
    SessionUpdate, StopReason, UnstructuredCommandInput,
};

/// The built-ins offered: name, input hint, what it does.
pub const BUILTINS: [(&str, &str, &str); 4] = [
    (
        "compact",
        "what the summary must keep (optional)",
        "summarise the older history now",
    ),
    (
        "undo",
        "skip or overwrite (for files changed since)",
        "put back the files the last turn changed",
    ),
    (
        "diff",
        "",
        "every file the agent changed this session, against its content before",
    ),
    (
        "plan",
        "",
        "plan mode on or off: the agent reads and plans, changes nothing",
    ),
];

/// A built-in command with its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `/compact [FOCUS]`.
    Compact(Option<String>),
    /// `/undo [skip|overwrite]`.
    Undo(Conflicts),
    /// `/diff`.
    Diff,
    /// `/plan`.
    Plan,
}

/// What a prompt is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// Not a command: a prompt.
    Prompt,
    /// A custom command: this prompt goes to the agent.
    Custom(String),
    /// A built-in.
    Builtin(Builtin),
}

/// The user's custom commands for `settings`' workspace, as the terminal client finds
/// them (a file named like one of the client's built-ins is not used there, nor here).
pub fn custom(settings: &Settings) -> CommandSet {
    let builtin: Vec<&str> = crate::tui::slash::COMMANDS
        .iter()
        .map(|(name, _, _)| name.trim_start_matches('/'))
        .chain(["exit"])
        .collect();
    let set = discover_commands(
        &settings.workspace,
        &crate::setup::config_dir(settings),
        crate::runtime::context::home_dir().as_deref(),
        &builtin,
    );
    for warning in &set.warnings {
        tracing::warn!("{warning}");
    }
    set
}

/// The commands the client can offer.
pub fn available(custom: &CommandSet) -> SessionUpdate {
    let input = |hint: &str| {
        (!hint.is_empty()).then(|| {
            AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint.to_owned()))
        })
    };
    let commands = BUILTINS
        .iter()
        .map(|(name, hint, what)| AvailableCommand::new(*name, *what).input(input(hint)))
        .chain(custom.commands.iter().map(|c| {
            AvailableCommand::new(c.name.clone(), c.description.clone())
                .input(input(c.argument_hint.as_deref().unwrap_or("")))
        }))
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// What `text` asks for.
pub fn parse(text: &str, custom: &CommandSet) -> Invocation {
    let Some(rest) = text.trim_start().strip_prefix('/') else {
        return Invocation::Prompt;
    };
    let (name, arguments) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, a)| (n, a.trim()));
    let builtin = match (name, arguments) {
        ("compact", focus) => Some(Builtin::Compact(
            (!focus.is_empty()).then(|| focus.to_owned()),
        )),
        ("undo", "skip") => Some(Builtin::Undo(Conflicts::Skip)),
        ("undo", "overwrite") => Some(Builtin::Undo(Conflicts::Overwrite)),
        ("undo", _) => Some(Builtin::Undo(Conflicts::Ask)),
        ("diff", _) => Some(Builtin::Diff),
        ("plan", _) => Some(Builtin::Plan),
        _ => None,
    };
    match (builtin, custom.get(name)) {
        (Some(builtin), _) => Invocation::Builtin(builtin),
        (None, Some(command)) => Invocation::Custom(command.prompt(arguments)),
        // An unknown command is text for the agent, as a path like /etc would be.
        (None, None) => Invocation::Prompt,
    }
}

/// Runs `command`; the job answers `responder` (in order with the session's updates).
pub async fn run(
    command: Builtin,
    controls: &Controls,
    responder: Responder<PromptResponse>,
) -> Job {
    let text = match command {
        // The pump starts it: its run's end then comes after the prompt is known.
        Builtin::Compact(focus) => return Job::Compact { focus, responder },
        Builtin::Plan => {
            let mode = controls.modes.mode().next();
            controls.modes.set(mode);
            match mode {
                crate::runtime::AgentMode::Plan => {
                    "Plan mode is on: the agent reads and plans, and changes nothing."
                }
                crate::runtime::AgentMode::Default => "Plan mode is off.",
            }
            .to_owned()
        }
        Builtin::Undo(conflicts) => {
            let checkpoints = controls.checkpoints.clone();
            match tokio::task::spawn_blocking(move || checkpoints.undo(conflicts)).await {
                Ok(Ok(UndoOutcome::Done(report))) => report.message(),
                Ok(Ok(UndoOutcome::Confirm(question))) => format!(
                    "{} Nothing was changed: send /undo skip to leave those files as they \
                     are, or /undo overwrite to put them back too.",
                    question.message()
                ),
                Ok(Err(e)) => format!("Cannot undo: {e}"),
                Err(e) => format!("Cannot undo: the operation stopped unexpectedly: {e}"),
            }
        }
        Builtin::Diff => {
            let checkpoints = controls.checkpoints.clone();
            match tokio::task::spawn_blocking(move || checkpoints.session_diff()).await {
                Ok(Ok(files)) if files.is_empty() => "No file changed in this session.".to_owned(),
                Ok(Ok(files)) => {
                    let mut lines = Vec::new();
                    for file in &files {
                        let change = &file.change;
                        let outside = if file.changed_outside {
                            " (changed outside since)"
                        } else {
                            ""
                        };
                        lines.push(format!(
                            "{} {:?} +{} -{}{outside}",
                            change.path, change.kind, change.added, change.removed
                        ));
                    }
                    format!(
                        "Files changed in this session:\n{}",
                        fenced(&lines.join("\n"))
                    )
                }
                Ok(Err(e)) => format!("No diff: {e}"),
                Err(e) => format!("No diff: the operation stopped unexpectedly: {e}"),
            }
        }
    };
    reply(text, responder)
}

/// A command's answer: one message, and the turn ends.
fn reply(text: String, responder: Responder<PromptResponse>) -> Job {
    Job::Reply {
        updates: vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(
            text.into(),
        ))],
        responder,
        reason: StopReason::EndTurn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::CustomCommand;

    #[test]
    fn built_ins_custom_commands_and_plain_text_are_told_apart() {
        let custom = CommandSet {
            commands: vec![CustomCommand {
                name: "review".into(),
                description: "review a file".into(),
                argument_hint: Some("[file]".into()),
                body: "Review $ARGUMENTS carefully.".into(),
                path: "/x/review.md".into(),
                source: ".claw-tui/commands".into(),
            }],
            warnings: Vec::new(),
        };
        assert_eq!(
            parse("/compact keep the API", &custom),
            Invocation::Builtin(Builtin::Compact(Some("keep the API".into())))
        );
        assert_eq!(
            parse("/undo overwrite", &custom),
            Invocation::Builtin(Builtin::Undo(Conflicts::Overwrite))
        );
        assert_eq!(
            parse("/review src/a.rs", &custom),
            Invocation::Custom("Review src/a.rs carefully.".into())
        );
        assert_eq!(parse("/etc/hosts is odd", &custom), Invocation::Prompt);
        assert_eq!(parse("hello", &custom), Invocation::Prompt);
        let SessionUpdate::AvailableCommandsUpdate(update) = available(&custom) else {
            unreachable!()
        };
        let names: Vec<&str> = update
            .available_commands
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["compact", "undo", "diff", "plan", "review"]);
    }
}
