//! What the client says once it gave the terminal back: which session this was, the
//! command that resumes it, and what it used.

use super::App;
use crate::chat::EntryKind;
use claw_text::short_tokens;
use std::path::{Path, PathBuf};

/// The session to name on the way out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Farewell {
    /// The session's id.
    pub id: String,
    /// Its file (the host says nothing when nothing was written to it).
    pub path: PathBuf,
    /// Tokens and cost, as the status bar counts them.
    usage: String,
}

/// The session shown when the client quits (`None` with `--no-session`, while a switch
/// to another one was under way, or when it holds no message: an empty session's file
/// is removed as it closes).
pub fn farewell(app: &App) -> Option<Farewell> {
    let session = &app.session;
    let conversation = app.chat.transcript().entries().iter().any(|e| {
        matches!(
            e.kind,
            EntryKind::User(_) | EntryKind::Assistant(_) | EntryKind::Recorded(_)
        )
    });
    if session.switching || !conversation {
        return None;
    }
    let usage = &app.status.totals().usage;
    Some(Farewell {
        id: session.id.clone()?,
        path: session.path.clone()?,
        usage: format!(
            "↑{} ↓{} tokens · {}",
            short_tokens(usage.input + usage.cache_read + usage.cache_write),
            short_tokens(usage.output),
            app.status.cost_text()
        ),
    })
}

impl Farewell {
    /// The line: `workspace` is given when the user is elsewhere (the sessions are
    /// found by workspace).
    pub fn line(&self, workspace: Option<&Path>) -> String {
        let place = workspace
            .map(|w| format!(" --workspace {}", shell_word(&w.display().to_string())))
            .unwrap_or_default();
        format!(
            "Session {id} saved ({usage}). Resume it with: claw-tui{place} --session {id}",
            id = self.id,
            usage = self.usage
        )
    }
}

/// `word` as one word for a POSIX shell.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Farewell {
        Farewell {
            id: "8ce784581e978ed477136785c3e6e01f".into(),
            path: "/d/s.jsonl".into(),
            usage: "↑1.3k ↓539 tokens · $0.0012".into(),
        }
    }

    #[test]
    fn the_line_names_the_session_its_use_and_the_command() {
        assert_eq!(
            sample().line(None),
            "Session 8ce784581e978ed477136785c3e6e01f saved (↑1.3k ↓539 tokens · $0.0012). \
             Resume it with: claw-tui --session 8ce784581e978ed477136785c3e6e01f"
        );
    }

    #[test]
    fn a_workspace_elsewhere_is_named_as_one_shell_word() {
        let line = sample().line(Some(Path::new("/home/me/it's here")));
        assert!(
            line.ends_with(r"claw-tui --workspace '/home/me/it'\''s here' --session 8ce784581e978ed477136785c3e6e01f"),
            "{line}"
        );
        assert_eq!(shell_word("/srv/repo-1"), "/srv/repo-1");
        assert_eq!(shell_word(""), "''");
    }
}
