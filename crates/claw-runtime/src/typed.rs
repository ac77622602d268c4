//! A prompt as the user typed it, made into what is sent, the same in every front-end
//! without a composer of its own (`-p`, `--mode json`, RPC): a custom command
//! (`/review src/a.rs`) becomes its file's prompt, then each `$skill` it mentions is
//! attached. The client does the same in its own steps (the popup, the skills read off
//! the UI thread).

use crate::commands::{CommandSet, discover_commands};
use crate::config::Settings;
use crate::runtime::context::mention::{attach_skills, mentioned};
use crate::runtime::context::skills::SkillCatalog;
use crate::runtime::context::{ProjectContext, SkillAttachError, home_dir};
use std::path::Path;
use std::sync::Arc;

/// What typed prompts are made with: the workspace's custom commands and its skills.
#[derive(Clone, Debug)]
pub struct PromptFiles {
    /// The custom commands.
    pub commands: Arc<CommandSet>,
    /// The skills (and the instructions files) the runtime found.
    pub context: Arc<ProjectContext>,
}

impl PromptFiles {
    /// The custom commands of the settings' workspace beside `context`; a command file
    /// named like one of `builtin` (the client's commands, refused alike everywhere) is
    /// not used.
    pub fn find(settings: &Settings, context: Arc<ProjectContext>, builtin: &[&str]) -> Self {
        let commands = discover_commands(
            &settings.workspace,
            &crate::setup::config_dir(settings),
            home_dir().as_deref(),
            builtin,
        );
        Self {
            commands: Arc::new(commands),
            context,
        }
    }

    /// `text` as sent (see [`typed_prompt`]).
    pub fn prepare(&self, text: &str) -> Result<String, SkillAttachError> {
        typed_prompt(
            text,
            &self.commands,
            &self.context.skills,
            &self.context.workspace,
        )
    }
}

impl CommandSet {
    /// The prompt of the custom command `text` names (`/name arguments`); `None` when
    /// it names none (a path like `/etc/hosts` stays a prompt).
    pub fn prompt_for(&self, text: &str) -> Option<String> {
        let rest = text.trim_start().strip_prefix('/')?;
        let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        Some(self.get(name)?.prompt(arguments))
    }
}

/// `text` as sent: a custom command's prompt in its place, the mentioned skills
/// attached (read beneath `workspace` for a project's). A skill that cannot be
/// attached is an error: the prompt is not sent without what the user asked for.
pub fn typed_prompt(
    text: &str,
    commands: &CommandSet,
    skills: &SkillCatalog,
    workspace: &Path,
) -> Result<String, SkillAttachError> {
    let text = commands.prompt_for(text).unwrap_or_else(|| text.to_owned());
    let mentioned: Vec<_> = mentioned(&text, skills)
        .into_iter()
        .map(|s| (s.name.clone(), s.path.clone()))
        .collect();
    if mentioned.is_empty() {
        return Ok(text);
    }
    attach_skills(workspace, &text, &mentioned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::discover_commands;
    use crate::runtime::context::skills::discover_skills;

    #[test]
    fn a_command_becomes_its_prompt_and_a_mentioned_skill_is_attached() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".claude/commands/git")).unwrap();
        std::fs::write(
            ws.join(".claude/commands/git/pr.md"),
            "Open a PR for $1 using $style.",
        )
        .unwrap();
        std::fs::create_dir_all(ws.join(".claude/skills/style")).unwrap();
        std::fs::write(
            ws.join(".claude/skills/style/SKILL.md"),
            "---\nname: style\ndescription: house style\n---\nUse short sentences.",
        )
        .unwrap();
        let commands = discover_commands(&ws, &ws.join("config"), None, &[]);
        let skills = discover_skills(&ws, &ws.join("config"), None);
        let sent = typed_prompt("/git:pr feature-x", &commands, &skills, &ws).unwrap();
        assert!(
            sent.starts_with("Open a PR for feature-x using $style."),
            "{sent}"
        );
        assert!(sent.contains("<skill name=\"style\""), "{sent}");
        assert!(sent.contains("Use short sentences."), "{sent}");
        // Not a command: as typed.
        let sent = typed_prompt("/etc/hosts: what is in it?", &commands, &skills, &ws).unwrap();
        assert_eq!(sent, "/etc/hosts: what is in it?");
    }
}
