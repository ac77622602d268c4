//! The Landlock sandbox, applied in a tiny launcher process and never in claw-tui itself.
//!
//! `exec` runs `claw-tui __sandbox-exec --write DIR... -- sh -c COMMAND`. The launcher
//! restricts itself to writing only under the `--write` paths (reads stay allowed),
//! reports the outcome on the first line of stderr, then replaces itself with the shell,
//! so the restriction covers the shell and everything it starts. Doing it in a separate
//! executable keeps the code between fork and exec to what the standard library does.

use landlock::{
    ABI, AccessFs, RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus, path_beneath_rules,
};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// The hidden subcommand that runs the launcher: `claw-tui __sandbox-exec ...`.
pub const SANDBOX_SUBCOMMAND: &str = "__sandbox-exec";

/// Start of the status line the launcher writes to stderr before running the command.
pub(crate) const STATUS_PREFIX: &[u8] = b"\x1b[claw-sandbox:";

/// Landlock ABI the rules are written for; older kernels get what they support.
const TARGET_ABI: ABI = ABI::V5;

/// Exit code of the launcher when the sandbox could not be set up.
const EXIT_SETUP_FAILED: i32 = 125;
/// Exit code of the launcher when the command could not be started.
const EXIT_EXEC_FAILED: i32 = 127;

/// What the launcher reported about the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LauncherStatus {
    /// Every requested restriction is in force.
    Enforced,
    /// The kernel supports only part of the restrictions; those are in force.
    Partial,
    /// The kernel has no Landlock: the command runs unsandboxed.
    NotEnforced,
    /// The sandbox could not be set up; the command did not run.
    Failed(String),
}

impl LauncherStatus {
    /// Whether the command runs with write restrictions.
    pub fn sandboxed(&self) -> bool {
        matches!(self, Self::Enforced | Self::Partial)
    }

    fn encode(&self) -> String {
        match self {
            Self::Enforced => "enforced".to_owned(),
            Self::Partial => "partial".to_owned(),
            Self::NotEnforced => "not-enforced".to_owned(),
            Self::Failed(why) => format!("failed:{}", why.replace('\n', " ")),
        }
    }

    /// Parses a status line (without the newline); `None` if it is not one.
    pub fn decode(line: &[u8]) -> Option<Self> {
        let body = line.strip_prefix(STATUS_PREFIX)?;
        let body = String::from_utf8_lossy(body);
        let body = body.strip_suffix(']').unwrap_or(&body);
        Some(match body {
            "enforced" => Self::Enforced,
            "partial" => Self::Partial,
            "not-enforced" => Self::NotEnforced,
            other => Self::Failed(other.strip_prefix("failed:").unwrap_or(other).to_owned()),
        })
    }
}

/// The paths a sandboxed command may write under: the workspace, the temp dir, and the
/// devices ordinary shells and tools write to.
pub(crate) fn write_paths(workspace: &Path) -> Vec<PathBuf> {
    let temp = std::env::temp_dir();
    let temp = temp.canonicalize().unwrap_or(temp);
    let mut paths = vec![workspace.to_path_buf(), temp];
    paths.extend(
        [
            "/dev/null",
            "/dev/zero",
            "/dev/full",
            "/dev/tty",
            "/dev/pts",
            "/dev/ptmx",
            "/dev/shm",
        ]
        .map(PathBuf::from),
    );
    paths
}

/// The launcher arguments (after the program) for running `program args...` sandboxed.
pub(crate) fn launcher_args(writes: &[PathBuf], program: &[&OsStr]) -> Vec<OsString> {
    let mut args = vec![OsString::from(SANDBOX_SUBCOMMAND)];
    for path in writes {
        args.push("--write".into());
        args.push(path.into());
    }
    args.push("--".into());
    args.extend(program.iter().map(|a| a.to_os_string()));
    args
}

/// Runs the sandbox launcher: `args` are the arguments after [`SANDBOX_SUBCOMMAND`],
/// `--write DIR`... `-- PROGRAM ARGS...`. Restricts writes to the given directories,
/// then replaces the process with the program; returns an exit code only on failure.
///
/// Call it first thing in `main`, before any runtime or thread starts.
pub fn sandbox_launcher_main(args: &[OsString]) -> i32 {
    let (writes, program) = match parse_args(args) {
        Ok(parsed) => parsed,
        Err(why) => return report(&LauncherStatus::Failed(why), EXIT_SETUP_FAILED),
    };
    let status = match restrict(&writes) {
        Ok(RulesetStatus::FullyEnforced) => LauncherStatus::Enforced,
        Ok(RulesetStatus::PartiallyEnforced) => LauncherStatus::Partial,
        Ok(RulesetStatus::NotEnforced) => LauncherStatus::NotEnforced,
        Err(e) => {
            let why = format!("Landlock refused the ruleset: {e}");
            return report(&LauncherStatus::Failed(why), EXIT_SETUP_FAILED);
        }
    };
    report(&status, 0);
    let Some((first, rest)) = program.split_first() else {
        return EXIT_EXEC_FAILED;
    };
    let error = std::process::Command::new(first).args(rest).exec();
    let _ = writeln!(
        std::io::stderr(),
        "claw-tui sandbox: cannot run {}: {error}",
        Path::new(first).display()
    );
    EXIT_EXEC_FAILED
}

/// Writes the status line; a closed stderr is not worth failing for.
fn report(status: &LauncherStatus, code: i32) -> i32 {
    let mut line = STATUS_PREFIX.to_vec();
    line.extend_from_slice(status.encode().as_bytes());
    line.extend_from_slice(b"]\n");
    let _ = std::io::stderr().write_all(&line);
    code
}

fn parse_args(args: &[OsString]) -> Result<(Vec<PathBuf>, Vec<OsString>), String> {
    let mut writes = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.to_str() {
            Some("--write") => match iter.next() {
                Some(path) => writes.push(PathBuf::from(path)),
                None => return Err("--write needs a directory".to_owned()),
            },
            Some("--") => {
                let program: Vec<OsString> = iter.cloned().collect();
                if program.is_empty() {
                    return Err("no command given after --".to_owned());
                }
                return Ok((writes, program));
            }
            _ => {
                return Err(format!(
                    "unexpected launcher argument {:?}; usage: {SANDBOX_SUBCOMMAND} \
                     [--write DIR]... -- PROGRAM [ARGS]...",
                    arg
                ));
            }
        }
    }
    Err("no command given (expected -- PROGRAM [ARGS]...)".to_owned())
}

/// Handles every write access and allows it only beneath `writes`; reads are not handled,
/// so they stay allowed everywhere.
fn restrict(writes: &[PathBuf]) -> Result<RulesetStatus, RulesetError> {
    let access = AccessFs::from_write(TARGET_ABI);
    let status = landlock::Ruleset::default()
        .handle_access(access)?
        .create()?
        .add_rules(path_beneath_rules(writes, access))?
        .restrict_self()?;
    Ok(status.ruleset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_round_trips() {
        for status in [
            LauncherStatus::Enforced,
            LauncherStatus::Partial,
            LauncherStatus::NotEnforced,
            LauncherStatus::Failed("no such dir".into()),
        ] {
            let line = [STATUS_PREFIX, status.encode().as_bytes(), b"]"].concat();
            assert_eq!(LauncherStatus::decode(&line), Some(status));
        }
        assert_eq!(LauncherStatus::decode(b"hello"), None);
    }

    #[test]
    fn launcher_arguments_are_checked() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(parse_args(&args(&["--write"])).is_err());
        assert!(parse_args(&args(&["--write", "/a", "--"])).is_err());
        assert!(parse_args(&args(&["--bogus"])).is_err());
        let (writes, program) =
            parse_args(&args(&["--write", "/a", "--", "sh", "-c", "x"])).unwrap_or_default();
        assert_eq!(writes, vec![PathBuf::from("/a")]);
        assert_eq!(program, args(&["sh", "-c", "x"]));
    }
}
