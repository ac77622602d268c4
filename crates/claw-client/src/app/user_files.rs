//! What the user's own files add to the client: custom slash commands, `$name` skill
//! mentions and the `/skills` list. The files were read at start; nothing here reads
//! them again (attaching a mentioned skill is an effect the runtime carries out).

use super::App;
use crate::msg::Effect;
use crate::part::Handled;
use claw_agent::NoticeLevel;
use claw_runtime::commands::CommandSet;
use claw_runtime::runtime::context::mention::mentioned;
use claw_runtime::runtime::context::{ProjectContext, SkillAttachError, SkillScope};
use std::fmt::Write;
use std::sync::Arc;

/// The skills, instructions files and custom commands found at start.
#[derive(Clone, Debug, Default)]
pub struct UserFiles {
    /// Instructions files and skills (as the prompt was built from them).
    pub context: Arc<ProjectContext>,
    /// Custom slash commands.
    pub commands: Arc<CommandSet>,
}

impl UserFiles {
    /// The custom commands as the slash popup lists them: `/name` and its description,
    /// argument hint and source.
    pub fn popup_entries(&self) -> Vec<(String, String)> {
        self.commands
            .commands
            .iter()
            .map(|c| {
                let mut detail = c.description.clone();
                if let Some(hint) = &c.argument_hint {
                    detail = format!("{hint} · {detail}");
                }
                (format!("/{}", c.name), format!("{detail} ({})", c.source))
            })
            .collect()
    }
}

impl App {
    /// Whether `text` starts with a custom command's name (built-ins were left out of
    /// the set when it was found, so they still win).
    pub(super) fn is_custom_command(&self, text: &str) -> bool {
        let Some(rest) = text.strip_prefix('/') else {
            return false;
        };
        let name = rest.split(char::is_whitespace).next().unwrap_or(rest);
        self.user_files.commands.get(name).is_some()
    }

    /// A composer text that names a custom command (`/review src/a.rs`) as the prompt
    /// its file makes; `None` for anything else.
    pub(super) fn custom_command_prompt(&self, text: &str) -> Option<String> {
        self.user_files.commands.prompt_for(text)
    }

    /// Sends `text`, first asking for the skills it mentions to be attached.
    pub(super) fn send_with_mentions(&mut self, text: String) -> Handled {
        let skills: Vec<_> = mentioned(&text, &self.user_files.context.skills)
            .into_iter()
            .map(|s| (s.name.clone(), s.path.clone()))
            .collect();
        if skills.is_empty() {
            return self.send_text(text);
        }
        Handled::changed().with(Effect::AttachSkills { text, skills })
    }

    /// The mentioned skills were read (or one could not be): send the message with
    /// them, or give the text back to the composer with the reason.
    pub(super) fn skills_attached(
        &mut self,
        text: String,
        result: Result<String, SkillAttachError>,
    ) -> Handled {
        match result {
            Ok(message) => self.send_message(&text, message),
            Err(why) => {
                self.composer.put_back(text);
                self.chat.notice(NoticeLevel::Error, why.to_string())
            }
        }
    }

    /// What `/status` says of the user's files: the instructions files the system
    /// prompt was built from, and how many skills and custom commands there are.
    pub(super) fn user_files_rows(&self) -> Vec<(&'static str, String)> {
        let context = &self.user_files.context;
        let mut rows = vec![("Your files", String::new())];
        if context.instruction_files.is_empty() {
            rows.push((
                "instructions",
                "none (no AGENTS.md or CLAUDE.md)".to_owned(),
            ));
        }
        for (i, path) in context.instruction_files.iter().enumerate() {
            let label = if i == 0 { "instructions" } else { "" };
            rows.push((label, path.display().to_string()));
        }
        let skills = context.skills.skills.len();
        rows.push((
            "skills",
            format!(
                "{skills} ({} in the prompt) · /skills lists them",
                skills - context.listing.left_out.len()
            ),
        ));
        rows.push((
            "commands",
            format!("{} of your own", self.user_files.commands.commands.len()),
        ));
        rows
    }

    /// `/skills`: each skill with its source, path and size, the broken ones with their
    /// file and line, then what else was wrong.
    pub(super) fn list_skills(&mut self) -> Handled {
        let context = &self.user_files.context;
        let skills = &context.skills;
        let mut text = String::new();
        if skills.skills.is_empty() {
            text.push_str(
                "No skills found. Put a SKILL.md in .claw-tui/skills/NAME/, .agents/skills/NAME/ \
                 or .claude/skills/NAME/ (here or up to the git root, or in your home or \
                 config directory).\n",
            );
        } else {
            let _ = writeln!(text, "Skills ({}):", skills.skills.len());
            for skill in &skills.skills {
                let scope = match skill.scope {
                    SkillScope::Project => "project",
                    SkillScope::Global => "global",
                };
                let listed = if context.listing.left_out.contains(&skill.name) {
                    " · not in the prompt"
                } else {
                    ""
                };
                let _ = writeln!(
                    text,
                    "  ${} — {} ({scope}, {}) · {} · {}{listed}",
                    skill.name,
                    skill.description,
                    skill.source,
                    skill.path.display(),
                    claw_text::byte_size(skill.size),
                );
            }
        }
        if !skills.broken.is_empty() {
            let _ = writeln!(
                text,
                "Broken, not offered to the model ({}):",
                skills.broken.len()
            );
            for broken in &skills.broken {
                let _ = writeln!(
                    text,
                    "  ✗ {} — {} line {}: {}",
                    broken.name,
                    broken.path.display(),
                    broken.line,
                    broken.reason
                );
            }
        }
        for warning in context.warnings_besides_broken_skills() {
            let _ = writeln!(text, "⚠ {warning}");
        }
        self.chat
            .notice(NoticeLevel::Info, text.trim_end().to_owned())
    }
}
