//! Plan mode: the main agent investigates and proposes, and changes nothing.
//!
//! Switching equips the main agent as [`AgentRole::Planner`], which the tool policy
//! offers only read-only tools (no `write_file`, `edit_file`, `exec`, `cron`, `spawn`,
//! `message`, nor an MCP tool not marked read-only), adds a short note to the system
//! prompt, and announces the mode as the `mode` setting (`setting_update`, recorded in
//! the session). The tool list and the note apply from the next run on, like any tool or
//! prompt change; a run already under way when plan mode goes on has its calls of tools
//! that change anything refused from that moment (`ToolPolicy::set_planning`).

use crate::agent::Agent;
use crate::tools::policy::{AgentRole, ToolPolicy};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// The setting key the mode is announced under.
pub const MODE_SETTING: &str = "mode";

/// What the main agent may do.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AgentMode {
    /// Everything its tools allow.
    #[default]
    Default,
    /// Read and plan only.
    Plan,
}

impl AgentMode {
    /// The other mode (what Shift+Tab switches to).
    pub fn next(self) -> Self {
        match self {
            AgentMode::Default => AgentMode::Plan,
            AgentMode::Plan => AgentMode::Default,
        }
    }

    /// The mode's name, as `set_mode` and the status bar use it.
    pub fn name(self) -> &'static str {
        match self {
            AgentMode::Default => "default",
            AgentMode::Plan => "plan",
        }
    }
}

/// A mode name that is neither `default` nor `plan`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode \"{name}\"; use default or plan")]
pub struct UnknownMode {
    /// The name given.
    pub name: String,
}

impl std::str::FromStr for AgentMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, UnknownMode> {
        match text {
            "default" => Ok(AgentMode::Default),
            "plan" => Ok(AgentMode::Plan),
            other => Err(UnknownMode {
                name: other.to_owned(),
            }),
        }
    }
}

/// The note plan mode adds to the system prompt, naming the tools left.
pub fn plan_note(tools: &[String]) -> String {
    format!(
        "\n\n# Plan mode\n\nThe user switched on plan mode: do not change anything now. \
         Tools that write files, run commands, schedule jobs, start subagents or message \
         the user are not available; you have {}. Investigate as much as the task needs, \
         then answer with a concrete, numbered plan (files to change, what to change in \
         each, how to check it works) and any questions. The user reviews the plan and may \
         ask you to implement it once plan mode is off.",
        if tools.is_empty() {
            "no tools".to_owned()
        } else {
            tools.join(", ")
        }
    )
}

/// The role the main agent has in `mode`.
fn role_of(mode: AgentMode) -> AgentRole {
    match mode {
        AgentMode::Default => AgentRole::Main,
        AgentMode::Plan => AgentRole::Planner,
    }
}

/// What `mode` adds to the system prompt, naming the tools `policy` leaves it.
fn note_of(mode: AgentMode, policy: &ToolPolicy) -> String {
    match mode {
        AgentMode::Plan => plan_note(&policy.names_for_role(&AgentRole::Planner)),
        AgentMode::Default => String::new(),
    }
}

/// Switches the main agent between the modes; cheap to clone.
#[derive(Clone)]
pub struct ModeSwitch {
    agent: Agent,
    policy: ToolPolicy,
    state: Arc<Mutex<(AgentMode, String)>>,
}

impl ModeSwitch {
    /// A switch for `agent`, equipped by `policy`, starting in the default mode.
    pub fn new(agent: Agent, policy: ToolPolicy) -> Self {
        Self {
            agent,
            policy,
            state: Arc::new(Mutex::new((AgentMode::Default, String::new()))),
        }
    }

    /// The mode now.
    pub fn mode(&self) -> AgentMode {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    /// Equips the main agent again for the mode it is in (the tools changed: an MCP
    /// server's arrived), with `prompt` as its system prompt plus the mode's note. The
    /// tools are never equipped any other way while the switch exists, so plan mode
    /// stays in force whatever arrives.
    pub fn refresh(&self, prompt: String) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.policy.equip(&self.agent, &role_of(state.0));
        state.1 = note_of(state.0, &self.policy);
        self.agent.set_system_prompt(prompt + &state.1);
    }

    /// Equips the main agent again with the tools of the mode it is in (the policy's
    /// tools were replaced: an editor's file system took over the file tools).
    pub fn reequip(&self) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.policy.equip(&self.agent, &role_of(state.0));
    }

    /// Switches to `mode`; says whether it changed.
    pub fn set(&self, mode: AgentMode) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.0 == mode {
            return false;
        }
        self.policy.set_planning(mode == AgentMode::Plan);
        self.policy.equip(&self.agent, &role_of(mode));
        let prompt = self.agent.state().system_prompt.clone();
        // The note added on entering is taken off again, wherever the prompt stands now.
        let mut prompt = match prompt.strip_suffix(state.1.as_str()) {
            Some(base) if !state.1.is_empty() => base.to_owned(),
            _ => prompt,
        };
        state.1 = note_of(mode, &self.policy);
        prompt.push_str(&state.1);
        self.agent.set_system_prompt(prompt);
        state.0 = mode;
        self.agent.announce_setting(MODE_SETTING, &mode);
        true
    }
}

impl std::fmt::Debug for ModeSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModeSwitch")
            .field("mode", &self.mode())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_by_name_and_an_unknown_one_is_named() {
        assert_eq!("plan".parse::<AgentMode>(), Ok(AgentMode::Plan));
        assert_eq!("default".parse::<AgentMode>(), Ok(AgentMode::Default));
        let error = "yolo".parse::<AgentMode>().unwrap_err();
        assert_eq!(
            error,
            UnknownMode {
                name: "yolo".into()
            }
        );
        assert_eq!(
            error.to_string(),
            "unknown mode \"yolo\"; use default or plan"
        );
    }
}
