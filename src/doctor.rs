//! `claw-tui doctor`: prints what protects this machine when the agent runs commands —
//! the kernel's Landlock ABI and which of its features are in force, whether a real
//! sandboxed command can read claw-tui's secrets or get out (it tries: /tmp, signals,
//! host unix sockets, UDP and TCP with `network = "deny"`, capabilities, a set-user-ID
//! file, protected paths), how its processes are contained, what runs outside the
//! sandbox (hooks, MCP servers, claw-tui's own helpers) and what protects each, the
//! approval mode, and where things live. Exit code 0 when the sandbox is fully in force, 1 otherwise.

mod connect;
mod outside;
mod probe;
mod routes;

pub use connect::{PROBE_SUBCOMMAND, probe_main};

use crate::config::Settings;
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED};
use crate::tools::exec::{
    ApprovalMode, ContainmentMode, DEFAULT_SCRUB_ENV, ExecConfig, ExecTool, HOST_SERVICE_ENV,
    LandlockState, NetworkMode, Report, SandboxMode, SandboxReport,
};
use probe::ProbeResult;
use std::fmt::Write as _;

/// Runs the checks and prints the report; returns the exit code.
pub fn run(settings: &Settings) -> i32 {
    let canary = probe::plant_canary();
    let exec = &settings.file.exec;
    let tool = ExecTool::new(settings.workspace.clone(), exec.clone());
    let listeners = routes::Listeners::open();
    let sockets = listeners
        .as_ref()
        .map(routes::Listeners::socket_script)
        .unwrap_or_default();
    let (probe, routes, git) = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(async {
            let probe = probe::run(&tool, canary.as_deref().unwrap_or(""), &sockets).await;
            let routes = match &listeners {
                Ok(listeners) => routes::try_routes(exec, listeners)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(format!("no listener could be opened ({e})")),
            };
            let git = outside::try_git(&tool.helper()).await;
            (probe, routes, git)
        }),
        Err(e) => (
            ProbeResult {
                content: format!("cannot start the probe: {e}"),
                ..ProbeResult::default()
            },
            Err(format!("cannot start the probe: {e}")),
            outside::GitHelper {
                confined: Err(format!("cannot start the probe: {e}")),
                bare_repository: None,
            },
        ),
    };
    let mut report = Doctor {
        text: "claw-tui doctor: what protects this machine when the agent runs commands\n".into(),
        problems: Vec::new(),
    };
    report.sandbox(exec, &probe);
    report.routes(exec, &probe, listeners.as_ref().ok(), routes);
    report.secrets(exec, &probe, &canary);
    report.outside(settings, &git);
    report.settings(settings);
    print!("{}", report.text);
    if report.problems.is_empty() {
        println!("\nResult: the sandbox is fully in force.");
        EXIT_OK
    } else {
        println!("\nResult: the sandbox is NOT fully in force:");
        for problem in &report.problems {
            println!("  - {problem}");
        }
        EXIT_RUN_FAILED
    }
}

/// The report being written, and what keeps the sandbox from being fully in force.
#[derive(Default)]
struct Doctor {
    text: String,
    problems: Vec<String>,
}

impl Doctor {
    fn heading(&mut self, title: &str) {
        let _ = writeln!(self.text, "\n{title}");
    }

    fn line(&mut self, label: &str, value: impl std::fmt::Display) {
        let _ = writeln!(self.text, "  {label:<24}{value}");
    }

    fn sandbox(&mut self, exec: &ExecConfig, probe: &ProbeResult) {
        let reports = reports(probe);
        let mode = match exec.sandbox {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Off => "off",
        };
        self.heading(&format!("Sandbox of exec ([exec] sandbox = \"{mode}\")"));
        if exec.sandbox == SandboxMode::Off {
            self.problems
                .push("[exec] sandbox = \"off\": commands are not confined".into());
        }
        let Some(sandbox) = reports.sandbox else {
            self.line("launcher", format!("did not run: {}", probe.content.trim()));
            self.problems
                .push("the sandbox launcher did not run a command".into());
            return;
        };
        self.line(
            "Landlock",
            match sandbox.abi {
                0 => "not available in this kernel".to_owned(),
                abi => format!("ABI {abi}"),
            },
        );
        let on = exec.sandbox == SandboxMode::WorkspaceWrite;
        let landlock = matches!(
            sandbox.landlock,
            LandlockState::Enforced | LandlockState::Partial
        );
        self.feature(
            "write confinement",
            on.then_some(sandbox.write_confined),
            "workspace, private temp dir, /dev/null and ptys, [exec] writable_paths",
            "writes are not confined",
        );
        let writable = if exec.writable_paths.is_empty() {
            "(none)".to_owned()
        } else {
            exec.writable_paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.line("  writable_paths", writable);
        let netns = matches!(
            reports.containment,
            Some(Report::Containment {
                network_namespace: true,
                ..
            })
        );
        match exec.network {
            NetworkMode::Allow => self.line(
                "network",
                "allowed ([exec] network = \"allow\"; \"deny\" is tried below)",
            ),
            NetworkMode::Deny if !on => self.line("network", "off (no sandbox)"),
            NetworkMode::Deny if netns => self.line(
                "network",
                "in force: none at all, a network namespace with only its loopback \
                 ([exec] network = \"deny\")",
            ),
            NetworkMode::Deny => {
                let text = if sandbox.network_denied {
                    "[exec] network = \"deny\" refuses only TCP (Landlock): no network \
                     namespace here, so UDP and unix sockets reach the host"
                } else {
                    "[exec] network = \"deny\" is not enforced: no network namespace, and \
                     Landlock cannot restrict TCP (needs ABI 4)"
                };
                self.line("network", format!("NOT in force: {text}"));
                self.problems.push(format!("network: {text}"));
            }
        }
        self.feature(
            "signal scoping",
            on.then_some(sandbox.signals_scoped),
            "signals to processes outside the command are refused",
            "signals to other processes are not refused (needs Landlock ABI 6)",
        );
        if on && !landlock {
            self.problems
                .push("Landlock is not in force: writes are not confined".into());
        }
        self.feature(
            "abstract sockets",
            on.then_some(sandbox.abstract_sockets_scoped || netns),
            "host abstract unix sockets are out of reach",
            "host abstract unix sockets are reachable (needs Landlock ABI 6)",
        );
        self.feature(
            "set-id files",
            on.then_some(sandbox.setid_refused),
            "a command cannot make a set-user-ID or set-group-ID file (seccomp)",
            "a command can make set-user-ID files, which work outside the sandbox",
        );
        self.containment(reports.containment.as_ref(), exec);
        self.line("probe: write to /tmp", probe.check("write_tmp"));
        if probe.check("write_tmp") != "refused" {
            self.problems
                .push("a command could write to /tmp outside its private temp dir".into());
        }
        self.line(
            "probe: $TMPDIR",
            format!(
                "{} ({})",
                probe.check("write_tmpdir"),
                probe.check("tmpdir")
            ),
        );
        self.line("probe: signal claw-tui", probe.check("signal"));
        if probe.check("signal") != "refused" {
            self.problems
                .push("a command could send a signal to claw-tui".into());
        }
    }

    /// One Landlock feature: in force, missing (a problem), or not asked for.
    fn feature(&mut self, label: &str, state: Option<bool>, yes: &str, no: &str) {
        match state {
            Some(true) => self.line(label, format!("in force: {yes}")),
            Some(false) => {
                self.line(label, format!("NOT in force: {no}"));
                self.problems.push(format!("{label}: {no}"));
            }
            None => self.line(label, "off (no sandbox)"),
        }
    }

    fn containment(&mut self, report: Option<&Report>, exec: &ExecConfig) {
        let Some(Report::Containment {
            mode,
            private_proc,
            private_pts,
            fallback_reason,
            user_namespace,
            mounts,
            ..
        }) = report
        else {
            self.line("process containment", "unknown (no report)");
            self.problems.push("process containment unknown".into());
            return;
        };
        let text = match mode {
            ContainmentMode::PidNamespace => format!(
                "{}pid and mount namespaces: its init (the launcher's helper) kills \
                 everything left at the time limit, on abort and when claw-tui exits; {} \
                 /proc, {} /dev/pts",
                if *user_namespace { "user, " } else { "" },
                if *private_proc { "private" } else { "host" },
                if *private_pts { "private" } else { "host" }
            ),
            ContainmentMode::Subreaper => "child subreaper: the launcher kills every \
                 descendant at the time limit, on abort and when claw-tui exits"
                .to_owned(),
        };
        self.line("process containment", text);
        if let Some(why) = fallback_reason {
            self.line("  fallback because", why);
        }
        match mounts {
            Some(m) => self.line(
                "command's mounts",
                format!(
                    "protected paths held: {}; writable paths {}; host sockets masked: {}, \
                     socket directories covered: {}",
                    m.guarded,
                    if m.nosuid { "nosuid" } else { "NOT all nosuid" },
                    m.sockets_masked,
                    m.socket_dirs_masked
                ),
            ),
            None if exec.sandbox == SandboxMode::WorkspaceWrite => {
                self.line(
                    "command's mounts",
                    "none: host sockets are not masked; protected paths are checked after \
                     each command",
                );
                self.problems
                    .push("no mount namespace: host unix sockets are not masked".into());
            }
            None => self.line("command's mounts", "none (no sandbox)"),
        }
        if *mode == ContainmentMode::Subreaper && exec.sandbox == SandboxMode::WorkspaceWrite {
            self.problems.push(if exec.pid_namespace {
                "no pid namespace for commands (fallback: subreaper)".to_owned()
            } else {
                "[exec] pid_namespace = false".to_owned()
            });
        }
    }

    fn secrets(
        &mut self,
        exec: &ExecConfig,
        probe: &ProbeResult,
        canary: &Result<String, probe::CanaryError>,
    ) {
        self.heading(&format!(
            "Secrets (a sandboxed command looked for {} in claw-tui's environment)",
            probe::CANARY_VAR
        ));
        if let Err(why) = canary {
            self.line("canary", format!("NOT planted: {why}"));
            self.problems
                .push(format!("the secrets check did not run: {why}"));
        }
        let checks = [
            ("env", "its own environment"),
            ("parent_environ", "/proc/$PPID/environ"),
            ("claw_environ", "claw-tui's environ"),
            ("claw_mem", "claw-tui's memory"),
        ];
        for (name, label) in checks {
            let value = probe.check(name);
            self.line(label, describe(value));
            if value.chars().any(|c| c.is_ascii_uppercase()) || value == "not run" {
                self.problems.push(format!("{label}: {}", describe(value)));
            }
        }
        let leaking = probe.check("leaking_environ");
        self.line(
            "all of /proc/*/environ",
            format!(
                "{} readable, {leaking} with the canary; {} processes visible",
                probe.check("visible_environ"),
                probe.check("processes")
            ),
        );
        if leaking != "0" || probe.canary_seen {
            self.problems
                .push("the canary reached a sandboxed command".into());
        }
        let mut scrubbed: Vec<String> = DEFAULT_SCRUB_ENV.iter().map(|s| s.to_string()).collect();
        scrubbed.extend(exec.scrub_env.iter().cloned());
        self.line("removed from commands", scrubbed.join(" "));
        self.line("and host services", HOST_SERVICE_ENV.join(" "));
        if !exec.pass_env.is_empty() {
            self.line("passed on purpose", exec.pass_env.join(" "));
        }
    }

    fn outside(&mut self, settings: &Settings, git: &outside::GitHelper) {
        self.heading("Outside the sandbox (runs as you; what protects each)");
        let plan = crate::mcp::launch::plan(settings);
        if settings.file.hooks.is_empty() {
            self.line("hooks", "none configured");
        }
        if plan.start.is_empty() && plan.untrusted.is_empty() {
            self.line("MCP servers", "none configured");
        }
        for item in outside::inventory(settings, &plan, git) {
            let _ = writeln!(self.text, "  {}", item.what);
            for line in outside::wrap(&item.protection, 84) {
                let _ = writeln!(self.text, "      {line}");
            }
            self.problems.extend(item.problem);
        }
    }

    fn settings(&mut self, settings: &Settings) {
        self.heading("Settings");
        let approval = match (settings.file.exec.approval, settings.yes) {
            (ApprovalMode::Never, _) => "never: every command runs without asking",
            (ApprovalMode::Ask, true) => "ask, but --yes approves every command",
            (ApprovalMode::Ask, false) => {
                "ask: each command is shown first; denied where nobody can answer (-p)"
            }
            (ApprovalMode::AlwaysDeny, _) => "always-deny: no command runs",
        };
        self.line("approval", approval);
        self.line("workspace", settings.workspace.display());
        let config = &settings.config_path;
        self.line(
            "config",
            format!(
                "{}{}",
                config.display(),
                if config.exists() {
                    ""
                } else {
                    " (not found: defaults)"
                }
            ),
        );
        self.line("data", settings.data_dir.display());
        self.line(
            "state",
            format!("{} (log: claw-tui.log)", settings.state_dir.display()),
        );
    }
}

/// The launcher's reports from the probe's tool result details.
#[derive(Default)]
struct Reports {
    sandbox: Option<SandboxReport>,
    containment: Option<Report>,
}

fn reports(probe: &ProbeResult) -> Reports {
    let get = |key: &str| probe.details.get(key).cloned().unwrap_or_default();
    Reports {
        sandbox: serde_json::from_value(get("sandbox_report")).ok(),
        containment: serde_json::from_value(get("containment_report")).ok(),
    }
}

/// Words for a probe value.
fn describe(value: &str) -> &str {
    match value {
        "clean" => "readable, no secret in it",
        "refused" => "refused",
        "invisible" => "not visible (outside the command's pid namespace)",
        "LEAK" => "LEAKS the canary",
        "OPEN" => "OPEN for reading",
        other => other,
    }
}
