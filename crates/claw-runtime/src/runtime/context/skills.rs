//! Skills in the open Agent Skills format: a directory holding a `SKILL.md` whose YAML
//! front matter gives its `name` and `description`, found in the project (from the
//! workspace up to the git root) and in the user's global skill directories.
//!
//! A skill is looked up by name; the nearest definition wins, so a project can
//! override a global skill and a subdirectory its repository's. Two definitions of one
//! name at the same level (one directory of the walk, or the global level) are
//! reported rather than one of them silently picked.

use super::files::ProjectFiles;
use super::project_chain;
use super::skill_file::{BrokenSkill, broken, skill_text};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The file describing a skill, inside its directory.
pub const SKILL_FILE: &str = "SKILL.md";
/// Skill directories of a project directory, in the order they are searched.
pub const PROJECT_SKILL_DIRS: [&str; 3] = [".claw-tui/skills", ".agents/skills", ".claude/skills"];
/// Where claw-tui's own global skills live, relative to the config dir.
pub const GLOBAL_SKILLS_DIR: &str = "skills";
/// Global skill directories shared with other agents, relative to the home directory.
pub const HOME_SKILL_DIRS: [&str; 2] = [".agents/skills", ".claude/skills"];
/// Longest skill description kept.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Whether a skill came with the project or from the user's global directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkillScope {
    /// From the workspace or a directory above it, up to the git root.
    Project,
    /// From the config dir, `~/.agents/skills` or `~/.claude/skills`.
    Global,
}

/// A skill the agent can read when a task calls for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Its name (front matter `name:`, else its directory's name).
    pub name: String,
    /// What it is for, on one line.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// Project or global.
    pub scope: SkillScope,
    /// The skill directory it was found in, as the user would write it
    /// (`.claude/skills`, `~/.agents/skills`, ...).
    pub source: String,
    /// Size of its `SKILL.md` in bytes.
    pub size: u64,
    /// The front matter's `license`, if any.
    pub license: Option<String>,
    /// The front matter's `compatibility`, if any.
    pub compatibility: Option<String>,
}

impl Skill {
    /// The skill's directory (the one holding its `SKILL.md`).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(&self.path)
    }
}

/// A name defined more than once at the same level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateSkill {
    /// The name.
    pub name: String,
    /// The definition used (the first in search order).
    pub used: PathBuf,
    /// The others at that level, ignored.
    pub ignored: Vec<PathBuf>,
}

impl DuplicateSkill {
    /// One line for the log and `/skills`.
    pub fn describe(&self) -> String {
        let ignored: Vec<String> = self
            .ignored
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        format!(
            "skill {} is defined more than once at the same level: using {}, ignoring {}",
            self.name,
            self.used.display(),
            ignored.join(", ")
        )
    }
}

/// Every skill that applies, by name, and what was wrong on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    /// The skills, sorted by name; each name once (the nearest definition).
    pub skills: Vec<Skill>,
    /// Names defined twice at one level.
    pub duplicates: Vec<DuplicateSkill>,
    /// Skill files whose front matter could not be read (listed anyway, by directory).
    pub problems: Vec<String>,
    /// Skill files that cannot be read as skills at all (not offered to the model).
    pub broken: Vec<BrokenSkill>,
}

impl SkillCatalog {
    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

/// One skill directory to search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillRoot {
    /// The directory whose subdirectories are skills.
    pub dir: PathBuf,
    /// How it is shown (`.claude/skills`, `~/.claude/skills`, `config/skills`).
    pub source: String,
    /// Project or global.
    pub scope: SkillScope,
}

/// The skill directories by level, nearest first: one level per directory from the
/// workspace up to the git root (only the workspace outside a repository), then the
/// global level (config dir, `~/.agents`, `~/.claude`). A directory reached twice
/// (the home directory inside the walk) counts at its nearest level only.
pub fn skill_levels(
    workspace: &Path,
    config_dir: &Path,
    home: Option<&Path>,
) -> Vec<Vec<SkillRoot>> {
    let mut levels: Vec<Vec<SkillRoot>> = project_chain(workspace)
        .iter()
        .rev()
        .map(|dir| {
            PROJECT_SKILL_DIRS
                .iter()
                .map(|rel| SkillRoot {
                    dir: dir.join(rel),
                    source: (*rel).to_owned(),
                    scope: SkillScope::Project,
                })
                .collect()
        })
        .collect();
    let mut global = vec![SkillRoot {
        dir: config_dir.join(GLOBAL_SKILLS_DIR),
        source: format!("{}/{GLOBAL_SKILLS_DIR}", config_dir.display()),
        scope: SkillScope::Global,
    }];
    if let Some(home) = home {
        global.extend(HOME_SKILL_DIRS.iter().map(|rel| SkillRoot {
            dir: home.join(rel),
            source: format!("~/{rel}"),
            scope: SkillScope::Global,
        }));
    }
    levels.push(global);
    let mut seen = HashSet::new();
    for level in &mut levels {
        level.retain(|root| {
            seen.insert(root.dir.canonicalize().unwrap_or_else(|_| root.dir.clone()))
        });
    }
    levels
}

/// The skills for `workspace`: see [`skill_levels`] for where they are looked for.
pub fn discover_skills(workspace: &Path, config_dir: &Path, home: Option<&Path>) -> SkillCatalog {
    let files = ProjectFiles::open(workspace);
    let mut catalog = SkillCatalog::default();
    let mut chosen: BTreeMap<String, Skill> = BTreeMap::new();
    for level in skill_levels(workspace, config_dir, home) {
        let mut here: BTreeMap<String, Vec<Skill>> = BTreeMap::new();
        for root in &level {
            for skill in skills_in(&files, root, &mut catalog) {
                here.entry(skill.name.clone()).or_default().push(skill);
            }
        }
        for (name, mut found) in here {
            let first = found.remove(0);
            if !found.is_empty() {
                catalog.duplicates.push(DuplicateSkill {
                    name: name.clone(),
                    used: first.path.clone(),
                    ignored: found.into_iter().map(|s| s.path).collect(),
                });
            }
            // Levels come nearest first: a name already chosen hides this one.
            chosen.entry(name).or_insert(first);
        }
    }
    catalog.skills = chosen.into_values().collect();
    catalog
}

/// The skills in `root`'s subdirectories, each `SKILL.md` opened through `files` (a
/// project's beneath its tree); one that cannot be used is a problem or broken, not a
/// skill.
fn skills_in(files: &ProjectFiles, root: &SkillRoot, catalog: &mut SkillCatalog) -> Vec<Skill> {
    // Sorted by name, so a duplicate's "first" is stable.
    let names = match files.entries(&root.dir) {
        Ok(names) => names.unwrap_or_default(),
        Err(e) => {
            catalog.problems.push(format!("skills are not read: {e}"));
            return Vec::new();
        }
    };
    let limit = u64::try_from(super::MAX_FILE_BYTES).unwrap_or(u64::MAX);
    names
        .into_iter()
        .filter_map(|name| {
            let dir = root.dir.join(&name);
            let path = dir.join(SKILL_FILE);
            let capped = match files.read(&path, limit) {
                // Nothing there (or a plain file beside the skill directories).
                Ok(found) => found?,
                Err(e) => {
                    catalog.problems.push(format!("a skill is not read: {e}"));
                    return None;
                }
            };
            let dir_name = name.to_string_lossy().into_owned();
            let size = capped.size;
            let text = match skill_text(capped.bytes, size) {
                Ok(text) => text,
                Err(why) => {
                    catalog.broken.push(broken(&dir_name, &path, why));
                    return None;
                }
            };
            let parsed = parse_skill_file(&text, &dir_name);
            if let Some(problem) = parsed.problem {
                catalog
                    .problems
                    .push(format!("{}: {problem}", path.display()));
            }
            Some(Skill {
                name: parsed.name,
                description: parsed.description,
                path,
                scope: root.scope,
                source: root.source.clone(),
                size,
                license: parsed.license,
                compatibility: parsed.compatibility,
            })
        })
        .collect()
}

/// The fields of the Agent Skills front matter claw-tui uses; others are ignored.
#[derive(Debug, Default, Deserialize)]
struct SkillFront {
    name: Option<String>,
    description: Option<String>,
    license: Option<String>,
    compatibility: Option<String>,
    #[allow(dead_code)]
    metadata: Option<serde_yaml_ng::Value>,
}

/// What a `SKILL.md` says about itself.
#[derive(Debug, PartialEq, Eq)]
pub struct ParsedSkill {
    /// Front matter `name`, else the directory's name.
    pub name: String,
    /// Front matter `description`, else the first heading or line, on one line.
    pub description: String,
    /// Front matter `license`.
    pub license: Option<String>,
    /// Front matter `compatibility`.
    pub compatibility: Option<String>,
    /// Why the front matter could not be read, when it could not.
    pub problem: Option<String>,
}

/// Reads a `SKILL.md`'s front matter; `fallback_name` is its directory's name.
pub fn parse_skill_file(text: &str, fallback_name: &str) -> ParsedSkill {
    let (front, body) = crate::front_matter::parse::<SkillFront>(text);
    let (front, problem) = match front {
        Ok(front) => (front, None),
        Err(e) => (SkillFront::default(), Some(e.to_string())),
    };
    let nonblank = |v: Option<String>| v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let name = nonblank(front.name).unwrap_or_else(|| fallback_name.to_owned());
    let description = nonblank(front.description)
        .or_else(|| first_line(body))
        .unwrap_or_else(|| "(no description)".to_owned());
    ParsedSkill {
        name,
        description: crate::text::one_line(&description, MAX_DESCRIPTION_CHARS),
        license: nonblank(front.license),
        compatibility: nonblank(front.compatibility),
        problem,
    }
}

/// A skill's name and one-line description from its `SKILL.md`.
pub fn parse_skill(text: &str, fallback_name: &str) -> (String, String) {
    let parsed = parse_skill_file(text, fallback_name);
    (parsed.name, parsed.description)
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
