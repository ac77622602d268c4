//! The `claw-tui` binary.

/// What this build can do today, shown until the terminal client lands.
const STATUS: &str = "\
claw-tui — an LLM agent in your terminal

This build contains the agent core: the turn loop (LLM call, then tool calls),
its typed event stream, JSON-Schema-checked tools with before/after hooks,
sequential or parallel tool execution, abort, and the steering and follow-up
queues. It is exercised by `cargo test` and `cargo bench`.

Not in this build yet: the full-screen client, the Anthropic and
OpenAI-compatible providers, the offline demo model, the built-in tools, and
background subagents and cron. Until they land, there is nothing to chat with.

See README.md and docs/architecture.md.
";

fn main() {
    print!("{STATUS}");
}
