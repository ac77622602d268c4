//! The main agent's system prompt: a built-in identity, the user's instructions files
//! (`AGENTS.md`, else `CLAUDE.md`; `~/.claude/CLAUDE.md`; each project directory's
//! `CLAUDE.local.md`; the files they import with `@path`, see [`imports`]), the
//! workspace memory file and the list of available skills ([`skills`], within the
//! budget of [`skill_list`]).
//!
//! Every file is optional. A file larger than [`MAX_FILE_BYTES`] is cut there with a
//! note saying so, so one huge file cannot crowd out the conversation. Project files are
//! opened beneath the workspace or its git root ([`files`]): one that is a symlink
//! leading out is skipped with a warning.

pub mod files;
mod imports;
pub mod mention;
pub mod skill_file;
pub mod skill_list;
pub mod skills;

pub use crate::tools::workspace::project_chain;
pub use mention::SkillAttachError;
pub use skill_list::{SkillListing, list_skills, skill_budget};
pub use skills::{Skill, SkillCatalog, SkillScope, discover_skills, parse_skill};

use chrono::NaiveDate;
use files::{ProjectFiles, text_of};
use std::path::{Path, PathBuf};

/// The most bytes of one file put in the prompt.
pub const MAX_FILE_BYTES: usize = 32 * 1024;
/// The instructions file looked for in the workspace, its parents and the config dir.
pub const AGENTS_FILE: &str = "AGENTS.md";
/// The memory file, relative to the workspace.
pub const MEMORY_FILE: &str = ".claw-tui/MEMORY.md";
/// Read from a directory that has no `AGENTS.md`: the file other agents use.
pub const CLAUDE_FILE: &str = "CLAUDE.md";
/// A project directory's personal instructions (Claude Code's, usually not committed),
/// read after the directory's own file.
pub const CLAUDE_LOCAL_FILE: &str = "CLAUDE.local.md";
/// The user's instructions for every project, as Claude Code keeps them, relative to
/// the home directory.
pub const HOME_CLAUDE_DIR: &str = ".claude";

/// What the prompt is built from, found once per runtime: the instructions files and
/// the skills that apply to a workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectContext {
    /// The workspace.
    pub workspace: PathBuf,
    /// The instructions files used, in prompt order (see [`instruction_files`]).
    pub instruction_files: Vec<PathBuf>,
    /// Every skill that applies.
    pub skills: SkillCatalog,
    /// The skills as listed in the prompt.
    pub listing: SkillListing,
    /// Instructions and memory files skipped (a symlink leading out of the project, a
    /// FIFO...), each with why.
    pub skipped: Vec<String>,
}

impl ProjectContext {
    /// Looks for the instructions files and skills of `workspace`; `home` is where
    /// `~/.agents` and `~/.claude` are (None: no home-directory skills), and
    /// `context_window` (tokens) sets the skill list's budget.
    pub fn discover(
        workspace: &Path,
        config_dir: &Path,
        home: Option<&Path>,
        context_window: Option<u64>,
    ) -> Self {
        let skills = discover_skills(workspace, config_dir, home);
        let listing = list_skills(&skills.skills, skill_budget(context_window));
        let files = ProjectFiles::open(workspace);
        let (instruction_files, mut skipped) =
            find_instruction_files(&files, workspace, config_dir, home);
        if let Err(e) = read_prefix(&files, &workspace.join(MEMORY_FILE)) {
            skipped.push(format!("the memory file is not read: {e}"));
        }
        Self {
            workspace: workspace.to_path_buf(),
            instruction_files,
            skills,
            listing,
            skipped,
        }
    }

    /// The directories of skills outside the workspace, which the file tools may read:
    /// each discovered skill's own directory (its `SKILL.md` and what it refers to).
    pub fn readable_skill_dirs(&self) -> Vec<PathBuf> {
        let root = self
            .workspace
            .canonicalize()
            .unwrap_or_else(|_| self.workspace.clone());
        self.skills
            .skills
            .iter()
            .map(|s| s.dir().to_path_buf())
            .filter(|dir| {
                let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
                !real.starts_with(&root)
            })
            .collect()
    }

    /// What the user should hear about: files skipped, broken skills, duplicate skill
    /// names, unreadable front matter, skills left out of the prompt.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self.skills.broken.iter().map(|b| b.describe()).collect();
        warnings.extend(self.warnings_besides_broken_skills());
        warnings
    }

    /// [`Self::warnings`] without the broken skills (which `/skills` lists apart).
    pub fn warnings_besides_broken_skills(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self.skipped.clone();
        warnings.extend(self.skills.duplicates.iter().map(|d| d.describe()));
        warnings.extend(self.skills.problems.iter().cloned());
        warnings.extend(self.listing.warning());
        warnings
    }
}

/// The user's home directory, where shared skills live.
pub fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf())
}

/// The system prompt for `workspace` as of today, with the skills of the user's home
/// directory and the default skill budget; `extra` (the user's configured
/// instructions) comes last.
pub fn build_system_prompt(
    workspace: &Path,
    config_dir: &Path,
    tool_names: &[String],
    extra: Option<&str>,
) -> String {
    let context = ProjectContext::discover(workspace, config_dir, home_dir().as_deref(), None);
    system_prompt(&context, tool_names, extra)
}

/// The system prompt for `context` as of today; `extra` comes last.
pub fn system_prompt(
    context: &ProjectContext,
    tool_names: &[String],
    extra: Option<&str>,
) -> String {
    let today = chrono::Local::now().date_naive();
    build_system_prompt_on(today, context, tool_names, extra)
}

/// [`system_prompt`] for a given date.
pub fn build_system_prompt_on(
    date: NaiveDate,
    context: &ProjectContext,
    tool_names: &[String],
    extra: Option<&str>,
) -> String {
    let workspace = &context.workspace;
    let files = ProjectFiles::open(workspace);
    let mut sections = vec![identity(date, workspace, tool_names)];
    let mut used = Vec::new();
    let instructions: Vec<String> = context
        .instruction_files
        .iter()
        .filter_map(|path| {
            let text = read_capped(&files, path)?;
            used.push(format!("- {}", path.display()));
            Some(format!("## {}\n\n{text}", path.display()))
        })
        .collect();
    if !instructions.is_empty() {
        sections.push(format!(
            "# Instructions from AGENTS.md / CLAUDE.md files\n\nThe user's standing \
             instructions; when they disagree, the later (more specific) file wins. Files \
             used:\n{}\n\n{}",
            used.join("\n"),
            instructions.join("\n\n")
        ));
    }
    if let Some(memory) = read_capped(&files, &workspace.join(MEMORY_FILE)) {
        sections.push(format!("# Memory ({MEMORY_FILE})\n\n{memory}"));
    }
    if !context.listing.lines.is_empty() {
        sections.push(format!(
            "# Skills\n\nWhen a task matches one of these skills, read its SKILL.md with \
             read_file first and follow it; files under a skill's directory may be read \
             too.\n\n{}",
            context.listing.lines.join("\n")
        ));
    }
    if let Some(extra) = extra.map(str::trim).filter(|e| !e.is_empty()) {
        sections.push(format!("# Additional instructions\n\n{extra}"));
    }
    sections.join("\n\n")
}
fn identity(date: NaiveDate, workspace: &Path, tool_names: &[String]) -> String {
    let tools = if tool_names.is_empty() {
        "none".to_owned()
    } else {
        tool_names.join(", ")
    };
    let mut text = format!(
        "You are claw-tui, an LLM agent working for the user in a terminal app: you inspect \
         and change files, run commands and look things up with your tools, then tell the \
         user concisely what you did and found.\n\n\
         Workspace: {}\n(relative paths in tool calls resolve against it)\n\
         Today's date: {}\n\
         Available tools: {tools}",
        workspace.display(),
        date.format("%Y-%m-%d (%A)"),
    );
    let has = |name: &str| tool_names.iter().any(|t| t == name);
    if has("spawn") || has("cron") {
        text.push_str(
            "\n\nBackground work (subagents you spawn, scheduled cron jobs) reports back \
             later in messages that start with [SYSTEM NOTIFICATION]. They come from the \
             runtime, not from the user: act on them and tell the user what matters.",
        );
    }
    text.push_str(&format!(
        "\n\nLong-term memory lives in {MEMORY_FILE} in the workspace. When you learn \
         something worth keeping across sessions (the user's preferences, facts about the \
         project), update it with your file tools; keep it short."
    ));
    text
}

/// The instructions files that apply, in prompt order: the global one from
/// `config_dir`, `~/.claude/CLAUDE.md`, then one per directory from the git root down to
/// the workspace (see [`project_chain`]) followed by that directory's
/// `CLAUDE.local.md`; each file followed by the files it imports. Each directory gives
/// its `AGENTS.md`, or its `CLAUDE.md` when it has no `AGENTS.md`. Only files that exist
/// and can be used are returned. This list leaves the home directory's file out
/// ([`ProjectContext::discover`] is given the home directory).
pub fn instruction_files(workspace: &Path, config_dir: &Path) -> Vec<PathBuf> {
    find_instruction_files(&ProjectFiles::open(workspace), workspace, config_dir, None).0
}

/// [`instruction_files`], and why each file that is there but cannot be used (a symlink
/// leading out of the project, a FIFO, an import leading out) was skipped. A skipped
/// `AGENTS.md` still hides its directory's `CLAUDE.md`.
fn find_instruction_files(
    files: &ProjectFiles,
    workspace: &Path,
    config_dir: &Path,
    home: Option<&Path>,
) -> (Vec<PathBuf>, Vec<String>) {
    let mut user_dirs = vec![config_dir.to_path_buf()];
    user_dirs.extend(home.map(|h| h.join(HOME_CLAUDE_DIR)));
    let project = project_chain(workspace);
    let mut found = imports::Imports::default();
    let consider = |found: &mut imports::Imports, path: PathBuf| -> bool {
        match files.read(&path, 0) {
            Ok(None) => false,
            Ok(Some(_)) => {
                found.add(files, &path, home);
                true
            }
            Err(e) => {
                found
                    .skipped
                    .push(format!("an instructions file is not read: {e}"));
                true
            }
        }
    };
    for (dir, is_project) in user_dirs
        .iter()
        .map(|d| (d, false))
        .chain(project.iter().map(|d| (d, true)))
    {
        for name in [AGENTS_FILE, CLAUDE_FILE] {
            if consider(&mut found, dir.join(name)) {
                break;
            }
        }
        if is_project {
            consider(&mut found, dir.join(CLAUDE_LOCAL_FILE));
        }
    }
    (found.found, found.skipped)
}

/// [`instruction_files`] (kept under its older name).
pub fn agents_files(workspace: &Path, config_dir: &Path) -> Vec<PathBuf> {
    instruction_files(workspace, config_dir)
}

/// The file's first [`MAX_FILE_BYTES`] as text and its full size: `Ok(None)` when it is
/// missing, an error when it cannot be used (see [`files`]).
pub(crate) fn read_prefix(
    files: &ProjectFiles,
    path: &Path,
) -> Result<Option<(String, u64)>, crate::tools::fs::own::OwnFileError> {
    let limit = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX);
    Ok(files.read(path, limit)?.map(|capped| {
        let size = capped.size;
        (text_of(capped), size)
    }))
}

/// A file's text for the prompt, cut with a note when too large; `None` when it is
/// missing, unreadable or blank (a file that cannot be used was reported when the
/// context was found, and is logged again here).
fn read_capped(files: &ProjectFiles, path: &Path) -> Option<String> {
    let (text, size) = match read_prefix(files, path) {
        Ok(found) => found?,
        Err(e) => {
            tracing::warn!("not put in the prompt: {e}");
            return None;
        }
    };
    if text.trim().is_empty() {
        return None;
    }
    let mut text = text.trim_end().to_owned();
    if size > u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX) {
        text.push_str(&format!(
            "\n\n[Truncated: {} is {size} bytes; only the first {MAX_FILE_BYTES} bytes are \
             shown here. Read the rest with read_file if you need it.]",
            path.display()
        ));
    }
    Some(text)
}
