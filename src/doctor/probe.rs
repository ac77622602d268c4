//! The live part of `claw-tui doctor`: a real command through the real launcher chain
//! that tries to reach a canary secret and to get out of the sandbox.
//!
//! The canary is a variable named like a token in claw-tui's own environment: the doctor
//! re-executes itself once with it, so it is in `/proc/PID/environ` exactly as a key
//! given to claw-tui would be.

use crate::agent::{CheckedArgs, Tool, ToolResult, ToolUpdates};
use crate::tools::exec::ExecTool;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use tokio_util::sync::CancellationToken;

/// The canary variable: a name the default scrub patterns cover.
pub(super) const CANARY_VAR: &str = "CLAW_TUI_DOCTOR_CANARY_TOKEN";

/// Why the canary could not be put in this process's environment.
#[derive(Debug, thiserror::Error)]
pub(super) enum CanaryError {
    /// The running executable cannot be found to re-run it.
    #[error("no executable path: {0}")]
    NoExecutable(#[source] std::io::Error),
    /// Replacing the process with itself plus the canary failed.
    #[error("cannot re-run with the canary: {0}")]
    Rerun(#[source] std::io::Error),
}

/// Makes sure this process carries the canary in its environment: the first time, by
/// replacing itself with the same command plus the variable (the pid stays). Returns the
/// canary's value, or why it could not be planted.
pub(super) fn plant_canary() -> Result<String, CanaryError> {
    if let Ok(value) = std::env::var(CANARY_VAR)
        && value.starts_with("canary-")
    {
        return Ok(value);
    }
    let value = format!(
        "canary-{:016x}{:016x}",
        fastrand::u64(..),
        fastrand::u64(..)
    );
    let exe = std::env::current_exe().map_err(CanaryError::NoExecutable)?;
    let error = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(CANARY_VAR, &value)
        .exec();
    Err(CanaryError::Rerun(error))
}

/// What the probe command found, by check name (see the script).
#[derive(Debug, Default)]
pub(super) struct ProbeResult {
    /// `key=value` lines the probe printed.
    pub checks: BTreeMap<String, String>,
    /// The tool result's details (launcher reports included).
    pub details: Value,
    /// The tool result's text, for when the probe could not run.
    pub content: String,
    /// Whether the canary's value appeared anywhere in the output.
    pub canary_seen: bool,
}

impl ProbeResult {
    /// The value of one check, or "not run".
    pub fn check(&self, name: &str) -> &str {
        self.checks.get(name).map_or("not run", String::as_str)
    }
}

/// The probe script (run as the command itself, so `$PPID` is what a command's parent
/// is): each line `name=value`. Set before it: `me`, claw-tui's pid; `outside`, a path
/// under /tmp outside the private temp dir; `canary`, what to look for: the canary's
/// name and `=` (the command never learns the value itself).
const SCRIPT: &str = r#"
found() { grep -a -c -F "$canary" 2>/dev/null | head -n 1; }
environ() {
  if [ ! -e "/proc/$1" ]; then echo invisible
  elif ! tr '\0' '\n' < "/proc/$1/environ" > /dev/null 2>&1; then echo refused
  elif [ "$(tr '\0' '\n' < "/proc/$1/environ" | found)" = 0 ]; then echo clean
  else echo LEAK; fi
}
echo "env=$(if [ "$(env | found)" = 0 ]; then echo clean; else echo LEAK; fi)"
echo "parent_environ=$(environ "$PPID")"
echo "claw_environ=$(environ "$me")"
leaks=0; readable=0
for f in /proc/[0-9]*/environ; do
  if tr '\0' '\n' < "$f" > /dev/null 2>&1; then
    readable=$((readable + 1))
    [ "$(tr '\0' '\n' < "$f" | found)" = 0 ] || leaks=$((leaks + 1))
  fi
done
echo "visible_environ=$readable"
echo "leaking_environ=$leaks"
if [ ! -e "/proc/$me" ]; then echo claw_mem=invisible
elif (exec 3< "/proc/$me/mem") 2>/dev/null; then echo claw_mem=OPEN
else echo claw_mem=refused; fi
if kill -0 "$me" 2>/dev/null; then echo signal=SENT; else echo signal=refused; fi
if (echo x > "$outside") 2>/dev/null; then echo write_tmp=ALLOWED; else echo write_tmp=refused; fi
if (echo x > "$TMPDIR/doctor-probe") 2>/dev/null; then echo write_tmpdir=ok; else echo write_tmpdir=FAILED; fi
echo "tmpdir=$TMPDIR"
echo "processes=$(ls -d /proc/[0-9]* | wc -l)"
for set in CapEff CapPrm CapInh CapBnd CapAmb NoNewPrivs; do
  echo "$set=$(sed -n "s/^$set:[[:space:]]*//p" /proc/self/status)"
done
echo "max_processes=$(sed -n 's/^Max processes *\([^ ]*\).*/\1/p' /proc/self/limits)"
echo "pid_max=$(cat /proc/sys/kernel/pid_max)"
echo "max_address_space=$(sed -n 's/^Max address space *\([^ ]*\).*/\1/p' /proc/self/limits)"
echo "tmpdir_size=$(df -Pk "$TMPDIR" 2>/dev/null | awk 'NR==2 {print $2}')"
"#;

/// Runs the probe through `tool` (so with the configured sandbox and launcher), with
/// `more` (more `name=value` lines) after the script.
pub(super) async fn run(tool: &ExecTool, canary: &str, more: &str) -> ProbeResult {
    let outside = std::env::temp_dir().join(format!("claw-tui-doctor-{:x}", fastrand::u64(..)));
    let command = format!(
        "me={}; outside='{}'; canary='{CANARY_VAR}='{SCRIPT}{more}",
        std::process::id(),
        outside.display(),
    );
    let args = json!({"command": command, "timeout": 30});
    let result = match CheckedArgs::for_tool(tool, args) {
        Ok(args) => {
            tool.execute(
                "doctor",
                args,
                CancellationToken::new(),
                ToolUpdates::discard(),
            )
            .await
        }
        Err(problem) => ToolResult::error(problem.to_string()),
    };
    let escaped = outside.exists();
    let _ = std::fs::remove_file(&outside);
    let mut checks: BTreeMap<String, String> = result
        .content
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    if escaped {
        // Trust the file system over what the command printed.
        checks.insert("write_tmp".into(), "ALLOWED".into());
    }
    ProbeResult {
        canary_seen: !canary.is_empty() && result.content.contains(canary),
        checks,
        details: result.details,
        content: result.content,
    }
}
