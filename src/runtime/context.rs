//! The main agent's system prompt: a built-in identity, the user's `AGENTS.md`
//! instructions, the workspace memory file and the list of available skills.
//!
//! Every file is optional. A file larger than [`MAX_FILE_BYTES`] is cut there with a
//! note saying so, so one huge file cannot crowd out the conversation.

use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes of one file put in the prompt.
pub const MAX_FILE_BYTES: usize = 32 * 1024;
/// The instructions file looked for in the workspace, its parents and the config dir.
pub const AGENTS_FILE: &str = "AGENTS.md";
/// The memory file, relative to the workspace.
pub const MEMORY_FILE: &str = ".claw-tui/MEMORY.md";
/// Where workspace skills live, relative to the workspace.
pub const WORKSPACE_SKILLS_DIR: &str = ".claw-tui/skills";
/// Where global skills live, relative to the config dir.
pub const GLOBAL_SKILLS_DIR: &str = "skills";
/// The file describing a skill, inside its directory.
pub const SKILL_FILE: &str = "SKILL.md";
/// Longest skill description kept in the list.
const MAX_DESCRIPTION_CHARS: usize = 200;

/// A skill the agent can read when a task calls for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Its name (frontmatter `name:`, else its directory's name).
    pub name: String,
    /// One line saying what it is for.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
}

/// The system prompt for `workspace` as of today; `extra` (the user's configured
/// instructions) comes last.
pub fn build_system_prompt(
    workspace: &Path,
    config_dir: &Path,
    tool_names: &[String],
    extra: Option<&str>,
) -> String {
    let today = chrono::Local::now().date_naive();
    build_system_prompt_on(today, workspace, config_dir, tool_names, extra)
}

/// [`build_system_prompt`] for a given date.
pub fn build_system_prompt_on(
    date: NaiveDate,
    workspace: &Path,
    config_dir: &Path,
    tool_names: &[String],
    extra: Option<&str>,
) -> String {
    let mut sections = vec![identity(date, workspace, tool_names)];
    let instructions: Vec<String> = agents_files(workspace, config_dir)
        .iter()
        .filter_map(|path| {
            let text = read_capped(path)?;
            Some(format!("## {}\n\n{text}", path.display()))
        })
        .collect();
    if !instructions.is_empty() {
        sections.push(format!(
            "# Instructions from AGENTS.md files\n\nThe user's standing instructions; when \
             they disagree, the later (more specific) file wins.\n\n{}",
            instructions.join("\n\n")
        ));
    }
    if let Some(memory) = read_capped(&workspace.join(MEMORY_FILE)) {
        sections.push(format!("# Memory ({MEMORY_FILE})\n\n{memory}"));
    }
    let skills = discover_skills(workspace, config_dir);
    if !skills.is_empty() {
        let list: Vec<String> = skills
            .iter()
            .map(|s| format!("- {}: {} ({})", s.name, s.description, s.path.display()))
            .collect();
        sections.push(format!(
            "# Skills\n\nWhen a task matches one of these skills, read its file with \
             read_file first and follow it.\n\n{}",
            list.join("\n")
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

/// The `AGENTS.md` files that apply, in prompt order: the global one from `config_dir`,
/// then those from the git root (or the workspace when it is not in a repository) down
/// to the workspace. Only files that exist are returned.
pub fn agents_files(workspace: &Path, config_dir: &Path) -> Vec<PathBuf> {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let chain: Vec<&Path> = match workspace.ancestors().position(is_git_root) {
        Some(root) => workspace.ancestors().take(root + 1).collect(),
        None => vec![workspace.as_path()],
    };
    let mut files = vec![config_dir.join(AGENTS_FILE)];
    files.extend(chain.iter().rev().map(|dir| dir.join(AGENTS_FILE)));
    let mut seen = Vec::new();
    files.retain(|f| {
        let key = f.canonicalize().unwrap_or_else(|_| f.clone());
        let fresh = f.is_file() && !seen.contains(&key);
        seen.push(key);
        fresh
    });
    files
}

fn is_git_root(dir: &Path) -> bool {
    // `.git` is a directory in a clone and a file in a worktree or submodule.
    dir.join(".git").exists()
}

/// The skills in the workspace and the config dir, by name; a workspace skill hides a
/// global one of the same name.
pub fn discover_skills(workspace: &Path, config_dir: &Path) -> Vec<Skill> {
    let mut by_name = BTreeMap::new();
    let dirs = [
        config_dir.join(GLOBAL_SKILLS_DIR),
        workspace.join(WORKSPACE_SKILLS_DIR),
    ];
    for dir in dirs {
        for skill in skills_in(&dir) {
            by_name.insert(skill.name.clone(), skill);
        }
    }
    by_name.into_values().collect()
}

fn skills_in(dir: &Path) -> Vec<Skill> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut skills: Vec<Skill> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path().join(SKILL_FILE);
            let text = read_prefix(&path)?.0;
            let dir_name = entry.file_name().to_string_lossy().into_owned();
            let (name, description) = parse_skill(&text, &dir_name);
            Some(Skill {
                name,
                description,
                path,
            })
        })
        .collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills
}

/// A skill's name and one-line description from its `SKILL.md`: the frontmatter's
/// `name:` and `description:`, else `fallback_name` and the first heading or line.
pub fn parse_skill(text: &str, fallback_name: &str) -> (String, String) {
    let (front, body) = split_frontmatter(text);
    let field = |key: &str| front.and_then(|f| frontmatter_value(f, key));
    let name = field("name").unwrap_or_else(|| fallback_name.to_owned());
    let description = field("description")
        .or_else(|| first_line(body))
        .unwrap_or_else(|| "(no description)".to_owned());
    (name, one_line(&description))
}

/// The frontmatter block (between `---` lines at the very top) and the rest.
fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, text)
}

/// A simple `key: value` from frontmatter; folded (`>`/`|`) values join their
/// indented lines.
fn frontmatter_value(front: &str, key: &str) -> Option<String> {
    let mut lines = front.lines();
    while let Some(line) = lines.next() {
        let Some(value) = line
            .strip_prefix(key)
            .and_then(|rest| rest.trim_start().strip_prefix(':'))
        else {
            continue;
        };
        let value = value.trim();
        let value = if value.is_empty() || value.starts_with('>') || value.starts_with('|') {
            lines
                .by_ref()
                .take_while(|l| l.starts_with(' ') || l.starts_with('\t'))
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            unquote(value).to_owned()
        };
        return Some(value).filter(|v| !v.is_empty());
    }
    None
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// The first heading's text, or else the first non-empty line.
fn first_line(body: &str) -> Option<String> {
    let lines = || body.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_owned())
        .filter(|l| !l.is_empty())
        .or_else(|| lines().next().map(str::to_owned))
}

fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_DESCRIPTION_CHARS {
        return line;
    }
    let cut: String = line.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// The file's first [`MAX_FILE_BYTES`] as text and its full size, or `None` when it is
/// missing or unreadable.
fn read_prefix(path: &Path) -> Option<(String, u64)> {
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let size = meta.len();
    let mut bytes = Vec::new();
    let limit = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX);
    file.take(limit).read_to_end(&mut bytes).ok()?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            // A cut through a multi-byte character is not the file's fault: drop the stub.
            let utf8 = e.utf8_error();
            let mut bytes = e.into_bytes();
            if utf8.error_len().is_none() {
                bytes.truncate(utf8.valid_up_to());
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    Some((text, size))
}

/// A file's text for the prompt, cut with a note when too large; `None` when it is
/// missing, unreadable or blank.
fn read_capped(path: &Path) -> Option<String> {
    let (text, size) = read_prefix(path)?;
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
