//! Command-line flags.

use crate::agent::{ThinkingLevel, ToolExecution};
use crate::config::{Api, Flags};
use crate::session::SessionChoice;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// How the process talks to its caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// The full-screen terminal client, or plain text with `--print`.
    #[default]
    Text,
    /// Every agent event as one JSON object per line on stdout (needs a prompt).
    Json,
    /// A long-running process driven by JSON lines on stdin (see docs/rpc.md).
    Rpc,
}

/// Thinking effort as a flag value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ThinkingFlag {
    /// No extended thinking.
    Off,
    /// The smallest budget.
    Minimal,
    /// A small budget.
    Low,
    /// A medium budget.
    Medium,
    /// A large budget.
    High,
}

impl From<ThinkingFlag> for ThinkingLevel {
    fn from(flag: ThinkingFlag) -> Self {
        match flag {
            ThinkingFlag::Off => ThinkingLevel::Off,
            ThinkingFlag::Minimal => ThinkingLevel::Minimal,
            ThinkingFlag::Low => ThinkingLevel::Low,
            ThinkingFlag::Medium => ThinkingLevel::Medium,
            ThinkingFlag::High => ThinkingLevel::High,
        }
    }
}

/// Tool execution mode as a flag value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ToolExecutionFlag {
    /// One call after another.
    Sequential,
    /// All calls of a message at once.
    Parallel,
}

impl From<ToolExecutionFlag> for ToolExecution {
    fn from(flag: ToolExecutionFlag) -> Self {
        match flag {
            ToolExecutionFlag::Sequential => ToolExecution::Sequential,
            ToolExecutionFlag::Parallel => ToolExecution::Parallel,
        }
    }
}

/// The version `--version` prints: the package's and the commit built.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("CLAW_TUI_COMMIT"),
    ")"
);

/// claw-tui: an LLM agent in your terminal.
#[derive(Clone, Debug, Default, Parser)]
#[command(name = "claw-tui", version = VERSION, about, long_about = None)]
pub struct Cli {
    /// Prompt to send at start (`-` reads it from stdin, with --print or --mode json).
    pub prompt: Option<String>,

    /// Run the prompt to completion, print the answer to stdout and exit.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Output mode: text, json (event lines) or rpc (JSON lines on stdin/stdout).
    #[arg(long, value_enum, default_value_t = Mode::Text)]
    pub mode: Mode,

    /// Provider: a name from the config file, or anthropic, openai, demo.
    #[arg(long)]
    pub provider: Option<String>,

    /// Model id.
    #[arg(long)]
    pub model: Option<String>,

    /// API base URL (e.g. http://localhost:11434/v1 for Ollama).
    #[arg(long)]
    pub base_url: Option<String>,

    /// Wire format for this run: anthropic, openai (chat completions unless talking to
    /// OpenAI itself) or openai-responses.
    #[arg(long, value_enum)]
    pub api: Option<ApiFlag>,

    /// Attach an image (PNG, JPEG, GIF, WebP) to the prompt; repeat for more.
    #[arg(long = "image", value_name = "PATH")]
    pub images: Vec<PathBuf>,

    /// Thinking effort.
    #[arg(long, value_enum)]
    pub thinking: Option<ThinkingFlag>,

    /// Workspace directory the tools work in (default: the current directory).
    #[arg(long)]
    pub workspace: Option<PathBuf>,

    /// Config file (default: the platform config dir's claw-tui/config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,

    /// Colour theme name.
    #[arg(long)]
    pub theme: Option<String>,

    /// Run the tool calls of one message one after another or all at once.
    #[arg(long, value_enum)]
    pub tool_execution: Option<ToolExecutionFlag>,

    /// Turns one run may take before it stops and asks.
    #[arg(long)]
    pub max_turns: Option<u32>,

    /// Approve tool calls that would ask for approval.
    #[arg(long)]
    pub yes: bool,

    /// Start the MCP servers of the workspace's .mcp.json (a project file can start
    /// programs: without this flag, -p, --mode json and rpc skip them).
    #[arg(long)]
    pub trust_project_mcp: bool,

    /// -p, --mode json and rpc: do not run unless every enabled MCP server has started
    /// (one that failed, or is not trusted, ends the process with exit code 1).
    #[arg(long)]
    pub require_mcp: bool,

    /// Start in plan mode: the agent reads and plans, and changes nothing.
    #[arg(long)]
    pub plan: bool,

    /// Resume the most recent session of the workspace.
    #[arg(short = 'c', long = "continue", conflicts_with = "session")]
    pub continue_session: bool,

    /// Resume a session by id, id prefix or file path.
    #[arg(long)]
    pub session: Option<String>,

    /// When the resumed session is open elsewhere, continue in a new copy of it.
    #[arg(long)]
    pub fork: bool,

    /// Write no session file.
    #[arg(long)]
    pub no_session: bool,

    /// RPC mode: at the end of input, abort the running prompt and drop what is queued
    /// (saying how much), instead of finishing it all first.
    #[arg(long)]
    pub exit_on_eof: bool,

    /// RPC mode: the longest input line accepted, in bytes (default 16 MiB); a longer
    /// one gets an error response and is skipped.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,

    /// A command instead of a conversation.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Prints the completion script of `shell` for these flags and subcommands; the exit
/// code (a closed stdout is the reader's choice, not a failure to report).
pub fn print_completions(shell: clap_complete::Shell) -> i32 {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "claw-tui", &mut script);
    let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
    crate::exit::EXIT_OK
}

impl Cli {
    /// The subcommand a one-word prompt is a typo of (`claw-tui sesions`), if any: such
    /// a prompt is refused with the suggestion rather than sent to the model.
    pub fn mistyped_command(&self) -> Option<String> {
        use clap::CommandFactory;
        if self.command.is_some() {
            return None;
        }
        let word = self.prompt.as_deref()?;
        let plain = word.len() >= 3 && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        if !plain {
            return None;
        }
        Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .filter(|name| name != "help")
            .map(|name| (strsim::levenshtein(word, &name), name))
            .filter(|(distance, _)| *distance <= 2)
            .min()
            .map(|(_, name)| name)
    }

    /// What these flags set in the configuration (`config::resolve` takes it).
    pub fn config_flags(&self) -> Flags {
        Flags {
            config: self.config.clone(),
            workspace: self.workspace.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api: self.api.map(Api::from),
            thinking: self.thinking.map(ThinkingLevel::from),
            tool_execution: self.tool_execution.map(ToolExecution::from),
            max_turns: self.max_turns,
            theme: self.theme.clone(),
            yes: self.yes,
            trust_project_mcp: self.trust_project_mcp,
            plan: self.plan,
        }
    }

    /// The session these flags ask for (`session::open_session` takes it).
    pub fn session_choice(&self) -> SessionChoice {
        SessionChoice {
            no_session: self.no_session,
            session: self.session.clone(),
            continue_session: self.continue_session,
            fork: self.fork,
        }
    }
}

/// Wire formats `--api` chooses from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApiFlag {
    /// The Anthropic Messages API.
    Anthropic,
    /// OpenAI-compatible chat completions (the Responses API for OpenAI itself).
    Openai,
    /// The OpenAI Responses API.
    OpenaiResponses,
}

impl From<ApiFlag> for Api {
    fn from(flag: ApiFlag) -> Self {
        match flag {
            ApiFlag::Anthropic => Api::Anthropic,
            ApiFlag::Openai => Api::Openai,
            ApiFlag::OpenaiResponses => Api::OpenaiResponses,
        }
    }
}

/// Output format of `export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A readable transcript.
    Markdown,
    /// One JSON document.
    Json,
    /// One self-contained HTML page (styles inline, no script).
    Html,
}

/// Subcommands.
#[derive(Clone, Debug, PartialEq, Subcommand)]
pub enum Command {
    /// List the sessions of the workspace, most recent first.
    Sessions,
    /// Write a session as Markdown, JSON or HTML to stdout.
    Export {
        /// Session id, id prefix or file path.
        session: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Markdown)]
        format: ExportFormat,
    },
    /// Print a recorded LLM request of a session: its breakdown, or the raw body.
    Inspect {
        /// Session id, id prefix or file path (default: the workspace's latest session).
        session: Option<String>,
        /// Only the requests sent in this turn (the Nth prompt of the session).
        #[arg(long)]
        turn: Option<u32>,
        /// The Kth request, counting from 1 in send order (all agents; within the turn
        /// with --turn). Default: the latest (with --turn, that turn's first).
        #[arg(long)]
        request: Option<usize>,
        /// Print the body exactly as it was sent.
        #[arg(long, conflicts_with = "list")]
        raw: bool,
        /// List the session's requests instead.
        #[arg(long)]
        list: bool,
    },
    /// Show what protects this machine when commands run (exit 1 if not all is in force).
    Doctor,
    /// Replay a session as it ran, in the client (or its events as JSON lines).
    Replay {
        /// Session id, id prefix or file path (default: the workspace's latest).
        session: Option<String>,
        /// Speed factor, 0.25 to 64.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// Start at this turn (from 1).
        #[arg(long)]
        from: Option<usize>,
        /// Keep gaps longer than 2 s as they were.
        #[arg(long)]
        real_time: bool,
        /// `json` prints the recorded events as the JSON lines `--mode json` printed.
        #[arg(long, value_enum)]
        mode: Option<Mode>,
    },
    /// Start a session with no terminal of its own and serve it on a Unix socket, for
    /// `claw-tui attach` (or any client of the protocol in docs/rpc.md).
    Serve {
        /// Stop after this many seconds with nobody attached and nothing running (0:
        /// never).
        #[arg(long, default_value_t = 1800, value_name = "SECS")]
        idle_timeout: u64,
    },
    /// List this user's live sessions, or attach to one by its id (or a prefix of it).
    Attach {
        /// The session's id, or the start of it.
        id: Option<String>,
        /// Attach through this socket instead (e.g. one forwarded with `ssh -L`).
        #[arg(long, value_name = "PATH", conflicts_with = "id")]
        socket: Option<PathBuf>,
        /// `rpc` joins stdin and stdout to the session's JSON lines (for scripts)
        /// instead of opening the client.
        #[arg(long, value_enum)]
        mode: Option<Mode>,
    },
    /// Serve the Agent Client Protocol (v1) on stdin and stdout, for an editor that
    /// starts claw-tui as its agent (Zed, Neovim, JetBrains...).
    Acp,
    /// Print a completion script for a shell (e.g. `claw-tui completions bash >
    /// ~/.local/share/bash-completion/completions/claw-tui`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// MCP servers: `claw-tui mcp list`.
    Mcp {
        /// What to do.
        #[command(subcommand)]
        command: McpCommand,
    },
}

/// `claw-tui mcp` subcommands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Subcommand)]
pub enum McpCommand {
    /// Connect to each configured server and print its state and tools.
    List,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(text: &str) -> Cli {
        Cli::try_parse_from(["claw-tui", text]).unwrap()
    }

    #[test]
    fn a_one_word_prompt_close_to_a_command_is_taken_for_its_typo() {
        assert_eq!(
            prompt("sesions").mistyped_command().as_deref(),
            Some("sessions")
        );
        assert_eq!(
            prompt("atach").mistyped_command().as_deref(),
            Some("attach")
        );
        assert_eq!(
            prompt("doctr").mistyped_command().as_deref(),
            Some("doctor")
        );
        // A prompt that is not a lone word, or far from every command, is a prompt.
        assert_eq!(prompt("fix the sessions list").mistyped_command(), None);
        assert_eq!(prompt("refactor").mistyped_command(), None);
        assert_eq!(prompt("Sessions?").mistyped_command(), None);
        assert_eq!(prompt("ls").mistyped_command(), None);
        // The command itself is the command.
        let cli = Cli::try_parse_from(["claw-tui", "sessions"]).unwrap();
        assert_eq!(cli.mistyped_command(), None);
        assert_eq!(cli.command, Some(Command::Sessions));
    }
}
