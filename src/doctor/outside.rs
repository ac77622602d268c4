//! The part of `claw-tui doctor` about what runs outside the exec sandbox: the user's
//! hooks, the MCP servers, and claw-tui's own helpers, each with what protects it —
//! and, for the hooks and servers that run workspace files, whether the content there
//! now is what the user trusted (it would not run otherwise).

use crate::config::Settings;
use crate::mcp::config::{Origin, Transport};
use crate::mcp::launch::McpPlan;
use crate::runtime::RuntimeEventSender;
use crate::tools::exec::HelperRunner;
use crate::trust::{Runner, Trust};
use crate::visible::visible;
use std::time::Duration;

/// One thing that runs outside the sandbox: what it is, and what protects it.
pub struct Outside {
    /// What runs: ``before_tool hook `sh x.sh` ``.
    pub what: String,
    /// What protects it, in words.
    pub protection: String,
    /// Why it keeps the sandbox from being fully in force, if it does (a hook or server
    /// whose files are untrusted is refused rather than run, so it does not).
    pub problem: Option<String>,
}

/// What the doctor found about claw-tui's own `git`, tried through its launcher.
pub struct GitHelper {
    /// Whether the launcher confined it (Landlock in force), when it ran.
    pub confined: Result<bool, String>,
    /// The user's `safe.bareRepository` setting, when git could say.
    pub bare_repository: Option<String>,
}

/// Runs `git --version` the way the checkpoints run git, and reads the user's
/// `safe.bareRepository` (their global config, read by the same confined git).
pub async fn try_git(helper: &HelperRunner) -> GitHelper {
    let cwd = std::env::temp_dir();
    let git = |args: &'static [&'static str]| {
        helper.run("git", args, &cwd, |env| env, Duration::from_secs(5))
    };
    let confined = match git(&["--version"]).await {
        Ok(output) if output.code == Some(0) => Ok(output.confined),
        Ok(output) => Err(format!("git exited with {:?}", output.code)),
        Err(e) => Err(e.to_string()),
    };
    let bare_repository = match git(&["config", "--global", "--get", "safe.bareRepository"]).await {
        Ok(output) if output.code == Some(0) => {
            Some(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        }
        // Exit 1: not set, git's default ("all").
        Ok(output) if output.code == Some(1) => Some("all".to_owned()),
        _ => None,
    };
    GitHelper {
        confined,
        bare_repository,
    }
}

/// Every hook, MCP server and helper of `settings`, with what protects each.
pub fn inventory(settings: &Settings, plan: &McpPlan, git: &GitHelper) -> Vec<Outside> {
    let trust = Trust::open(
        &settings.workspace,
        &settings.data_dir,
        RuntimeEventSender::discard(),
    );
    let mut found = hooks(settings, &trust);
    found.extend(servers(settings, plan, &trust));
    found.extend(helpers(git));
    found
}

/// How a runner's workspace files stand with the user's trust.
fn pinned(trust: &Trust, runner: &Runner) -> String {
    let shown = |path: &std::path::Path| {
        let relative = path.strip_prefix(trust.workspace()).unwrap_or(path);
        visible(&relative.to_string_lossy()).into_owned()
    };
    let named: Vec<String> = trust.named(runner).iter().map(|p| shown(p)).collect();
    if named.is_empty() {
        return "names no workspace file".into();
    }
    let named = named.join(", ");
    match trust.check(runner) {
        Ok(()) => format!("runs {named} only with the content you trusted: trusted now"),
        Err(untrusted) => {
            let why: Vec<String> = untrusted
                .files
                .iter()
                .map(|(file, changed)| {
                    let state = if *changed { "changed" } else { "never trusted" };
                    format!("{} {state}", shown(&file.path))
                })
                .collect();
            format!(
                "runs {named} only with the content you trusted: NOT trusted now ({}), so \
                 it does not run (the client asks, the headless modes refuse)",
                why.join(", ")
            )
        }
    }
}

fn hooks(settings: &Settings, trust: &Trust) -> Vec<Outside> {
    let config = &settings.file.hooks;
    let lists = [
        (
            "before_tool",
            config
                .before_tool
                .iter()
                .map(|h| &h.command)
                .collect::<Vec<_>>(),
        ),
        (
            "after_tool",
            config.after_tool.iter().map(|h| &h.command).collect(),
        ),
        ("prompt", config.prompt.iter().map(|h| &h.command).collect()),
        ("stop", config.stop.iter().map(|h| &h.command).collect()),
        ("notify", config.notify.iter().map(|h| &h.command).collect()),
    ];
    lists
        .into_iter()
        .flat_map(|(event, commands)| {
            commands.into_iter().map(move |command| {
                let runner = crate::hooks::trust_runner(command, &settings.workspace);
                Outside {
                    what: format!("{event} hook `{}`", visible(command)),
                    protection: format!(
                        "your config; under the launcher without Landlock, exec's scrubbed \
                         environment, killed with what it started at its time limit; {}",
                        pinned(trust, &runner)
                    ),
                    problem: None,
                }
            })
        })
        .collect()
}

fn servers(settings: &Settings, plan: &McpPlan, trust: &Trust) -> Vec<Outside> {
    let started = plan.start.iter().map(|spec| (spec, true));
    let waiting = plan.untrusted.iter().map(|spec| (spec, false));
    started
        .chain(waiting)
        .map(|(spec, starts)| {
            let origin = match spec.origin {
                Origin::User => "your config",
                Origin::Project => "the project's .mcp.json",
            };
            let what = format!("MCP server \"{}\" ({origin})", visible(&spec.name));
            let protection = match (&spec.config.transport, starts) {
                (Transport::Http { url, .. }, _) => format!(
                    "no process here: a remote server at {}",
                    crate::llm::tap::redact_url(url)
                ),
                (Transport::Stdio { .. }, false) => "not started: the whole entry waits for \
                    your trust (the client shows it; --trust-project-mcp starts it)"
                    .into(),
                (Transport::Stdio { command, .. }, true) => {
                    let entry = match spec.origin {
                        Origin::User => "",
                        Origin::Project => "the whole entry trusted; ",
                    };
                    let files = crate::mcp::trust::server_runner(spec, &settings.workspace)
                        .map(|runner| pinned(trust, &runner))
                        .unwrap_or_default();
                    format!(
                        "`{}` as you, in its own process group, with your environment less \
                         [exec]'s secrets; {entry}{files}",
                        visible(command),
                    )
                }
            };
            Outside {
                what,
                protection,
                problem: None,
            }
        })
        .collect()
}

fn helpers(git: &GitHelper) -> Vec<Outside> {
    let (state, problem) = match &git.confined {
        Ok(true) => ("Landlock in force".to_owned(), None),
        Ok(false) => (
            "Landlock NOT in force: only git's switches hold".to_owned(),
            Some("claw-tui's git runs without Landlock".to_owned()),
        ),
        Err(e) => (
            format!("did not run: {e} (checkpoints list no command changes)"),
            None,
        ),
    };
    vec![
        Outside {
            what: "git, for the checkpoints".into(),
            protection: format!(
                "under the sandbox launcher: writes nowhere, no network, exec's scrubbed \
                 environment without GIT_*, no system config, and switches that turn off \
                 what a repository configures (fsmonitor, hooks, pager, attributes, ssh, \
                 credential helpers); tried now: {state}"
            ),
            problem,
        },
        Outside {
            what: "your own git, in your shell".into(),
            protection: match git.bare_repository.as_deref() {
                Some("explicit") => "safe.bareRepository = explicit: a directory the agent \
                    shapes like a repository (HEAD, objects/, refs/, config) is not taken \
                    for one"
                    .to_owned(),
                Some(value) => format!(
                    "safe.bareRepository = {value}: a directory shaped like a repository \
                     is taken for one and its config obeyed (claw-tui refuses the model's \
                     and moves a command's aside); `git config --global \
                     safe.bareRepository explicit` makes your git ignore such directories"
                ),
                None => "safe.bareRepository: git could not say".to_owned(),
            },
            problem: None,
        },
        Outside {
            what: "$VISUAL / $EDITOR (Ctrl+G in the client)".into(),
            protection: "your editor, named by your environment, on a private temp file \
                holding the composer's text"
                .into(),
            problem: None,
        },
        Outside {
            what: "claw-tui itself (doctor's canary)".into(),
            protection: "this binary, re-run to hold the secret a command looks for".into(),
            problem: None,
        },
    ]
}

/// `text` in lines of at most `width` characters, broken between words.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}
