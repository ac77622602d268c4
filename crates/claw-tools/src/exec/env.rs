//! Which environment variables a command gets: everything of claw-tui's environment
//! except secrets and pointers to host services, plus `TMPDIR` pointing at the private
//! temp dir.
//!
//! The launcher is started with this environment already, so its own
//! `/proc/PID/environ` (readable by the command it supervises) holds no secret either.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::ffi::{OsStr, OsString};

/// Names (globs, any case) that are always treated as secrets.
pub const DEFAULT_SCRUB_ENV: [&str; 9] = [
    "*_KEY",
    "*_SECRET*",
    "*_TOKEN",
    "*_PASSWORD",
    "*_PASSWD",
    "AWS_*",
    "SECRET",
    "TOKEN",
    "PASSWORD",
];

/// Names (globs, any case) of variables that point at services of the host — a
/// terminal multiplexer's or editor's server, an agent, a display, a bus, a container
/// engine — through which a command could act outside the sandbox. They are removed
/// unless `[exec] pass_env` names them (the socket also needs `allow_sockets`).
pub const HOST_SERVICE_ENV: [&str; 21] = [
    "TMUX",
    "TMUX_*",
    "STY",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "XAUTHORITY",
    "WAYLAND_*",
    "SWAYSOCK",
    "I3SOCK",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_*IPC*",
    "PULSE_SERVER",
];

/// Decides which variables are secrets: the built-in patterns and `[exec] scrub_env`,
/// minus `[exec] pass_env`; and which point at host services ([`HOST_SERVICE_ENV`]).
#[derive(Clone, Debug)]
pub struct EnvPolicy {
    scrub: GlobSet,
    host: GlobSet,
    pass: GlobSet,
}

fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern.trim())
        .case_insensitive(true)
        .literal_separator(false)
        .build()
}

/// Why `[exec] scrub_env` or `pass_env` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EnvPatternError {
    /// A pattern that is not a glob.
    #[error("[exec] {list}: \"{pattern}\" is not a valid pattern: {source}")]
    Invalid {
        /// `scrub_env` or `pass_env`.
        list: &'static str,
        /// The pattern as written.
        pattern: String,
        /// What globset says is wrong with it.
        #[source]
        source: globset::Error,
    },
    /// Valid patterns that together are too much for one matcher.
    #[error("[exec] {list}: the patterns cannot be combined: {source}")]
    Combined {
        /// `scrub_env` or `pass_env`.
        list: &'static str,
        /// What globset says.
        #[source]
        source: globset::Error,
    },
}

/// The patterns as one set; with `strict`, an invalid one is an error naming `list`,
/// else it is skipped.
fn set<'a>(
    list: &'static str,
    patterns: impl IntoIterator<Item = &'a str>,
    strict: bool,
) -> Result<GlobSet, EnvPatternError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        match glob(pattern) {
            Ok(glob) => {
                builder.add(glob);
            }
            Err(source) if strict => {
                return Err(EnvPatternError::Invalid {
                    list,
                    pattern: pattern.to_owned(),
                    source,
                });
            }
            Err(_) => {}
        }
    }
    builder
        .build()
        .map_err(|source| EnvPatternError::Combined { list, source })
}

impl EnvPolicy {
    /// The policy with `scrub` added to the built-in patterns and `pass` exempted; an
    /// invalid pattern is an error naming it.
    pub fn new(scrub: &[String], pass: &[String]) -> Result<Self, EnvPatternError> {
        let scrub_all = DEFAULT_SCRUB_ENV
            .into_iter()
            .chain(scrub.iter().map(String::as_str));
        Ok(Self {
            scrub: set("scrub_env", scrub_all, true)?,
            host: host_services(),
            pass: set("pass_env", pass.iter().map(String::as_str), true)?,
        })
    }

    /// Like [`EnvPolicy::new`], skipping invalid patterns.
    pub fn lenient(scrub: &[String], pass: &[String]) -> Self {
        let scrub_all = DEFAULT_SCRUB_ENV
            .into_iter()
            .chain(scrub.iter().map(String::as_str));
        Self {
            scrub: set("scrub_env", scrub_all, false).unwrap_or_else(|_| GlobSet::empty()),
            host: host_services(),
            pass: set("pass_env", pass.iter().map(String::as_str), false)
                .unwrap_or_else(|_| GlobSet::empty()),
        }
    }

    /// Whether the variable `name` is kept from commands.
    pub fn is_secret(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        self.scrub.is_match(name.as_ref()) && !self.pass.is_match(name.as_ref())
    }

    /// Whether the variable `name` points at a host service and is kept from commands.
    pub fn is_host_service(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        self.host.is_match(name.as_ref()) && !self.pass.is_match(name.as_ref())
    }

    /// The environment for a command: `vars` without secrets and host services, with
    /// `TMPDIR` set.
    pub fn command_env(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        tmpdir: &std::path::Path,
    ) -> Vec<(OsString, OsString)> {
        vars.into_iter()
            .filter(|(name, _)| {
                name != "TMPDIR" && !self.is_secret(name) && !self.is_host_service(name)
            })
            .chain([(OsString::from("TMPDIR"), tmpdir.as_os_str().to_owned())])
            .collect()
    }
}

fn host_services() -> GlobSet {
    set("host services", HOST_SERVICE_ENV, false).unwrap_or_else(|_| GlobSet::empty())
}

/// Whether a variable holds a secret by the built-in patterns alone.
pub fn is_secret_env_name(name: &str) -> bool {
    static DEFAULT: std::sync::OnceLock<EnvPolicy> = std::sync::OnceLock::new();
    DEFAULT
        .get_or_init(|| EnvPolicy::lenient(&[], &[]))
        .is_secret(name.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_patterns_and_config_decide() {
        for secret in [
            "ANTHROPIC_API_KEY",
            "my_service_token",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "DB_PASSWORD",
            "CLIENT_SECRET_FILE",
            "PASSWORD",
        ] {
            assert!(is_secret_env_name(secret), "{secret}");
        }
        for plain in [
            "PATH",
            "HOME",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "TMPDIR",
        ] {
            assert!(!is_secret_env_name(plain), "{plain}");
        }
        let policy = EnvPolicy::new(
            &["DATABASE_URL".into(), "corp_*".into()],
            &["GITHUB_TOKEN".into()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(policy.is_secret("database_url".as_ref()));
        assert!(policy.is_secret("CORP_ANYTHING".as_ref()));
        assert!(!policy.is_secret("GITHUB_TOKEN".as_ref()));
        assert!(policy.is_secret("GITLAB_TOKEN".as_ref()));
        let err = EnvPolicy::new(&["[oops".into()], &[]).map(drop);
        let err = err.map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains("scrub_env") && e.contains("[oops")));
    }

    #[test]
    fn the_command_environment_has_no_secrets_and_the_private_tmpdir() {
        let policy = EnvPolicy::lenient(&[], &[]);
        let vars = [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk"),
            ("TMPDIR", "/tmp"),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("WAYLAND_DISPLAY", "wayland-0"),
        ]
        .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let env = policy.command_env(vars, "/tmp/private".as_ref());
        assert_eq!(
            env,
            [("PATH", "/bin"), ("TMPDIR", "/tmp/private")]
                .map(|(n, v)| (OsString::from(n), OsString::from(v)))
        );
        let passing = EnvPolicy::lenient(&[], &["SSH_AUTH_SOCK".into()]);
        assert!(!passing.is_host_service("SSH_AUTH_SOCK".as_ref()));
        assert!(passing.is_host_service("tmux_pane".as_ref()));
    }
}
