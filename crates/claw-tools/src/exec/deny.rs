//! Deny rules: commands `exec` refuses to run, whatever the sandbox and approval say.
//!
//! This list is best-effort. It catches the common catastrophic commands as a model
//! would write them, also inside `;`/`&&`/`||`/`|` chains, substitutions, and through
//! wrappers (`sudo`, `env`, `nohup`, `timeout`, `xargs`, `eval`, `sh -c '...'`...), but
//! it does not evaluate the shell: variables, aliases, generated scripts or another
//! interpreter (`python -c`) get past it. The sandbox and the approval policy are the
//! real boundaries; these rules only stop the obvious disasters early with a clear
//! reason.

use super::shell::{self, Segment};
use super::words::{basename, is_assignment, option_value, shell_script, skip_options, wrapper};

/// Nested scripts (`bash -c "sh -c '...'"`) deeper than this are refused outright.
const MAX_DEPTH: usize = 8;

/// Why a command was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Short name of the rule, e.g. `rm-root`.
    pub rule: &'static str,
    /// What the rule protects against.
    pub reason: &'static str,
    /// The part of the command that matched.
    pub matched: String,
}

impl Refusal {
    fn new(rule: &'static str, reason: &'static str, matched: impl Into<String>) -> Self {
        Self {
            rule,
            reason,
            matched: matched.into(),
        }
    }

    /// The message the model receives.
    pub fn message(&self) -> String {
        format!(
            "Refused by the exec deny rule `{}` ({}): `{}`. This safety rule cannot be \
             bypassed; do not try variations of the command. If the operation is really \
             needed, ask the user to run it themselves.",
            self.rule, self.reason, self.matched
        )
    }
}

const RM_ROOT: &str = "recursive delete of / or the home directory";
const MKFS: &str = "formatting a filesystem";
const DD: &str = "raw copies with dd";
const FORK_BOMB: &str = "fork bomb";
const RAW_DISK: &str = "writing to a raw disk device";
const CHMOD_ROOT: &str = "recursive permission or owner change of / or the home directory";
const SHUTDOWN: &str = "shutting down or rebooting the machine";
const NESTING: &str = "scripts nested too deeply to check";

/// Checks `command` against every deny rule.
pub fn check(command: &str) -> Result<(), Refusal> {
    check_script(command, 0)
}

fn check_script(script: &str, depth: usize) -> Result<(), Refusal> {
    if depth > MAX_DEPTH {
        return Err(Refusal::new("nesting", NESTING, script.trim()));
    }
    if let Some(bomb) = fork_bomb(script) {
        return Err(Refusal::new("fork-bomb", FORK_BOMB, bomb));
    }
    let parsed = shell::parse(script);
    for nested in &parsed.nested {
        check_script(nested, depth + 1)?;
    }
    for segment in &parsed.segments {
        check_segment(segment, depth)?;
    }
    Ok(())
}

fn check_segment(segment: &Segment, depth: usize) -> Result<(), Refusal> {
    if let Some(target) = segment.out_targets.iter().find(|t| is_raw_disk(t)) {
        return Err(Refusal::new(
            "raw-disk-write",
            RAW_DISK,
            format!("> {target}"),
        ));
    }
    check_words(&segment.words, depth)
}

/// Reserved words and grouping that may precede a command in a simple command.
const KEYWORDS: [&str; 13] = [
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

/// Shells whose `-c` script is checked.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"];

fn check_words(words: &[String], depth: usize) -> Result<(), Refusal> {
    let mut rest = words;
    loop {
        while let Some(first) = rest.first()
            && (KEYWORDS.contains(&first.as_str()) || is_assignment(first))
        {
            rest = &rest[1..];
        }
        let Some(first) = rest.first() else {
            return Ok(());
        };
        let name = basename(first);
        let args = &rest[1..];
        if let Some((with_value, operands)) = wrapper(name) {
            rest = skip_options(args, with_value)
                .get(operands..)
                .unwrap_or_default();
            continue;
        }
        let script = match name {
            "env" => {
                if let Some(script) = option_value(args, &["-S", "--split-string"]) {
                    script.to_owned()
                } else {
                    rest = skip_options(args, &["-u", "--unset", "-C", "--chdir"]);
                    while let Some(first) = rest.first()
                        && is_assignment(first)
                    {
                        rest = &rest[1..];
                    }
                    continue;
                }
            }
            "command" if args.iter().any(|a| a == "-v" || a == "-V") => return Ok(()),
            "command" | "builtin" | "exec" | "nohup" | "setsid" | "busybox" | "unbuffer" => {
                rest = skip_options(args, &["-a"]);
                continue;
            }
            "eval" | "watch" => skip_options(args, &["-n", "--interval"]).join(" "),
            "su" => match option_value(args, &["-c", "--command"]) {
                Some(script) => script.to_owned(),
                None => return Ok(()),
            },
            name if SHELLS.contains(&name) => match shell_script(args) {
                Some(script) => script.to_owned(),
                None => return Ok(()),
            },
            _ => return check_command(name, args, rest),
        };
        return check_script(&script, depth + 1);
    }
}

fn check_command(name: &str, args: &[String], words: &[String]) -> Result<(), Refusal> {
    let matched = || words.join(" ");
    let options = || args.iter().take_while(|a| *a != "--");
    let operands = || {
        let mut after_dashes = false;
        args.iter().filter(move |a| {
            if after_dashes {
                return true;
            }
            if *a == "--" {
                after_dashes = true;
                return false;
            }
            !a.starts_with('-') || a.len() == 1
        })
    };
    let recursive = |short: char| {
        options().any(|a| {
            a == "--recursive" || (a.starts_with('-') && !a.starts_with("--") && a.contains(short))
        })
    };
    let root_or_home = || operands().any(|t| is_root_or_home(t));
    let raw_disk_operand = || operands().any(|a| is_raw_disk(a));
    let rule = match name {
        "rm" if options().any(|a| a == "--no-preserve-root")
            || ((recursive('r') || recursive('R')) && root_or_home()) =>
        {
            ("rm-root", RM_ROOT)
        }
        "mke2fs" | "mkswap" => ("mkfs", MKFS),
        n if n == "mkfs" || n.starts_with("mkfs.") => ("mkfs", MKFS),
        "dd" if args
            .iter()
            .any(|a| is_raw_disk(a.trim_start_matches("of="))) =>
        {
            ("raw-disk-write", RAW_DISK)
        }
        "dd" if args.iter().any(|a| a.starts_with("if=")) => ("dd", DD),
        "chmod" | "chown" | "chgrp" if recursive('R') && root_or_home() => {
            ("chmod-root", CHMOD_ROOT)
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => ("shutdown", SHUTDOWN),
        "init" | "telinit" if operands().any(|a| a == "0" || a == "6") => ("shutdown", SHUTDOWN),
        "systemctl"
            if operands().any(|a| {
                matches!(
                    a.as_str(),
                    "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot"
                )
            }) =>
        {
            ("shutdown", SHUTDOWN)
        }
        // Writers whose operands are all destinations.
        "tee" | "shred" | "wipefs" | "blkdiscard" if raw_disk_operand() => {
            ("raw-disk-write", RAW_DISK)
        }
        // Copiers write to their last operand.
        "cp" | "mv" | "install" | "ln"
            if operands()
                .collect::<Vec<_>>()
                .last()
                .is_some_and(|a| is_raw_disk(a)) =>
        {
            ("raw-disk-write", RAW_DISK)
        }
        _ => return Ok(()),
    };
    Err(Refusal::new(rule.0, rule.1, matched()))
}

/// `/`, `~`, `$HOME` and the like: a path that is the root or the home directory itself,
/// or everything in it (`/*`, `~/.`).
fn is_root_or_home(target: &str) -> bool {
    let rest = if let Some(rest) = target.strip_prefix('/') {
        rest
    } else if let Some(rest) = target
        .strip_prefix("${HOME}")
        .or_else(|| target.strip_prefix("$HOME"))
        .or_else(|| target.strip_prefix('~'))
    {
        rest
    } else {
        return false;
    };
    rest.chars().all(|c| matches!(c, '/' | '.' | '*'))
}

/// Whole-disk and partition device nodes.
fn is_raw_disk(path: &str) -> bool {
    const PREFIXES: [&str; 10] = [
        "/dev/sd",
        "/dev/hd",
        "/dev/vd",
        "/dev/xvd",
        "/dev/nvme",
        "/dev/mmcblk",
        "/dev/disk/",
        "/dev/mapper/",
        "/dev/md",
        "/dev/dm-",
    ];
    PREFIXES
        .iter()
        .any(|p| path.starts_with(p) && path.len() > p.len())
}

/// A function that pipes itself into itself (`:(){ :|:& };:`): returns the definition.
fn fork_bomb(script: &str) -> Option<String> {
    let compact: String = script.chars().filter(|c| !c.is_whitespace()).collect();
    let is_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-');
    for (brace, _) in compact.match_indices('{') {
        let head = &compact[..brace];
        let head = head.strip_suffix("()").unwrap_or(head);
        let start = head
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_name(*c))
            .last()
            .map_or(head.len(), |(i, _)| i);
        let mut name = &head[start..];
        if let Some(stripped) = name.strip_prefix("function")
            && !stripped.is_empty()
        {
            name = stripped;
        }
        if name.is_empty() {
            continue;
        }
        if compact[brace + 1..].starts_with(&format!("{name}|{name}")) {
            return Some(script.trim().to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(command: &str) -> Option<&'static str> {
        check(command).err().map(|r| r.rule)
    }

    #[test]
    fn root_and_home_targets() {
        for t in ["/", "//", "/*", "/.", "~", "~/", "~/*", "$HOME", "${HOME}/"] {
            assert!(is_root_or_home(t), "{t}");
        }
        for t in ["./", ".", "/tmp", "~/project", "build", "$HOME/x", "*"] {
            assert!(!is_root_or_home(t), "{t}");
        }
    }

    #[test]
    fn fork_bombs() {
        assert_eq!(rule(":(){ :|:& };:"), Some("fork-bomb"));
        assert_eq!(rule("bomb() { bomb | bomb & }; bomb"), Some("fork-bomb"));
        assert_eq!(rule("function f { f|f& }; f"), Some("fork-bomb"));
        assert_eq!(rule("f() { echo hi; }; f | f"), None);
    }

    #[test]
    fn wrappers_are_unwrapped() {
        assert_eq!(rule("sudo -u root rm -rf /"), Some("rm-root"));
        assert_eq!(rule("env -i A=1 rm -fr ~"), Some("rm-root"));
        assert_eq!(rule("env -S 'rm -rf /'"), Some("rm-root"));
        assert_eq!(rule("timeout 5 reboot"), Some("shutdown"));
        assert_eq!(rule("nohup nice -n 5 mkfs.ext4 /dev/sdb1"), Some("mkfs"));
        assert_eq!(rule("bash -lc \"sh -c 'rm -rf /'\""), Some("rm-root"));
        assert_eq!(rule("eval rm -rf /"), Some("rm-root"));
        assert_eq!(rule("echo / | xargs -0 rm -rf /"), Some("rm-root"));
        assert_eq!(rule("command -v reboot"), None);
        assert_eq!(rule("bash script.sh"), None);
    }

    #[test]
    fn rule_details() {
        assert_eq!(rule("rm --no-preserve-root -rf /x"), Some("rm-root"));
        assert_eq!(rule("rm -f /"), None);
        assert_eq!(rule("dd if=/dev/zero of=x bs=1 count=1"), Some("dd"));
        assert_eq!(rule("dd of=/dev/sda"), Some("raw-disk-write"));
        assert_eq!(rule("cat img > /dev/nvme0n1"), Some("raw-disk-write"));
        assert_eq!(rule("echo x | tee /dev/sdb"), Some("raw-disk-write"));
        assert_eq!(rule("echo x > /dev/null 2>&1"), None);
        assert_eq!(rule("chmod -R 777 /"), Some("chmod-root"));
        assert_eq!(rule("chmod 777 /"), None);
        assert_eq!(rule("sudo systemctl reboot"), Some("shutdown"));
        assert_eq!(rule("systemctl status"), None);
        assert_eq!(
            rule("if true; then /sbin/shutdown -h now; fi"),
            Some("shutdown")
        );
        assert_eq!(rule("echo \"$(reboot)\""), Some("shutdown"));
        assert_eq!(rule("su root -c 'halt'"), Some("shutdown"));
        assert_eq!(rule("rm -rf ./build && ls"), None);
        assert_eq!(rule("grep -r reboot ."), None);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut script = "ls".to_owned();
        for _ in 0..12 {
            script = format!("eval {script}");
        }
        assert_eq!(rule(&script), Some("nesting"));
        let mut script = "ls".to_owned();
        for _ in 0..12 {
            script = format!("sh -c {}", shell_quote(&script));
        }
        assert_eq!(rule(&script), Some("nesting"));
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
