//! Images attached from the composer: the `@path` mentions of image files in a message
//! (pure text work, for `update`), pasted image paths turned into such mentions, and why
//! one cannot be attached. The host loads the files (`host/attach.rs`). And who else is
//! attached to the session ([`ClientInfo`], as the session's socket names them).

use claw_tools::images::{ImageError, has_image_extension};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Characters that end a sentence rather than a path: `look at @a.png, please`.
const TRAILING: &[char] = &[',', ';', ':', ')', '!', '?', '.', '"', '\''];

/// The image paths mentioned as `@path` (or `@"path with spaces"`) in `text`, in order,
/// each once.
pub fn mentions(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let before = &rest[..at];
        let after = &rest[at + 1..];
        // An `@` inside a word (an e-mail address) mentions nothing.
        let starts_word = before.chars().next_back().is_none_or(char::is_whitespace);
        let (path, len) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => (quoted[..end].to_owned(), end + 2),
                None => (String::new(), 0),
            },
            None => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (after[..end].trim_end_matches(TRAILING).to_owned(), end)
            }
        };
        if starts_word && has_image_extension(&path) && !found.contains(&path) {
            found.push(path);
        }
        rest = &after[len.min(after.len())..];
    }
    found
}

/// The mention of `path`, quoted when it holds whitespace.
pub fn mention(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

/// When a paste is nothing but the path of an image file (as terminals paste a dropped
/// file: maybe quoted, with `\ ` escapes or as a `file://` URL), that path.
pub fn pasted_image_path(pasted: &str) -> Option<String> {
    let text = pasted.trim();
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| text.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)))
        .map_or_else(|| text.replace("\\ ", " "), str::to_owned);
    let path = unquoted
        .strip_prefix("file://")
        .map_or(unquoted.clone(), |p| p.replace("%20", " "));
    let looks_like_path = path.starts_with('/') || path.starts_with("~/") || path.starts_with("./");
    (looks_like_path && has_image_extension(&path)).then_some(path)
}

/// An image a message mentions cannot be attached; the message is not sent.
#[derive(Clone, Debug, thiserror::Error)]
#[error("Cannot attach @{path}: {source}.")]
pub struct AttachError {
    /// The path as mentioned.
    pub path: String,
    /// Why the image cannot be used.
    #[source]
    pub source: Arc<ImageError>,
}

/// Someone attached to the session.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientInfo {
    /// A number unique within the serving process.
    pub id: u64,
    /// `terminal` (the session's own client) or `socket`.
    pub kind: String,
    /// The process on the other end (from the socket's peer credentials).
    pub pid: Option<i32>,
    /// What the client called itself in `attach` (e.g. `claw-tui attach`).
    pub name: Option<String>,
    /// When it attached (milliseconds since the epoch).
    pub since_ms: u64,
}

impl ClientInfo {
    /// `socket client 2 · pid 4311 · claw-tui attach`, or the session's own terminal:
    /// how the dashboard, `/status` and the quit question name it.
    pub fn describe(&self) -> String {
        let mut parts = vec![if self.kind == "terminal" {
            "the session's own terminal".to_owned()
        } else {
            format!("{} client {}", self.kind, self.id)
        }];
        if let Some(pid) = self.pid {
            parts.push(format!("pid {pid}"));
        }
        // The session's own terminal is named by its kind already.
        if let Some(name) = self.name.as_ref().filter(|_| self.kind != "terminal") {
            parts.push(claw_text::one_line(name, 40));
        }
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_mentions_are_found_and_other_at_signs_ignored() {
        assert_eq!(
            mentions("compare @shots/a.png, and @\"my shot.JPG\" with @notes.md; mail a@b.png"),
            vec!["shots/a.png", "my shot.JPG"]
        );
        assert_eq!(mentions("@a.png @a.png"), vec!["a.png"]);
        assert!(mentions("email me at x@y.png").is_empty());
        assert!(mentions("a lone @").is_empty());
    }

    #[test]
    fn pasted_paths_of_images_become_mentions() {
        assert_eq!(
            pasted_image_path("/tmp/shot.png\n").as_deref(),
            Some("/tmp/shot.png")
        );
        assert_eq!(
            pasted_image_path("'/home/u/My Shot.webp'").as_deref(),
            Some("/home/u/My Shot.webp")
        );
        assert_eq!(
            pasted_image_path("/home/u/My\\ Shot.gif").as_deref(),
            Some("/home/u/My Shot.gif")
        );
        assert_eq!(
            pasted_image_path("file:///tmp/a%20b.jpeg").as_deref(),
            Some("/tmp/a b.jpeg")
        );
        assert_eq!(pasted_image_path("see /tmp/a.png"), None);
        assert_eq!(pasted_image_path("/tmp/a.txt"), None);
        assert_eq!(mention("/home/u/My Shot.webp"), "@\"/home/u/My Shot.webp\"");
        assert_eq!(mention("a.png"), "@a.png");
    }
}

#[cfg(test)]
mod client_tests {
    use super::ClientInfo;

    #[test]
    fn a_client_is_named_by_kind_pid_and_name_and_the_own_terminal_once() {
        let client = |kind: &str, name: &str| ClientInfo {
            id: 2,
            kind: kind.into(),
            pid: Some(42),
            name: Some(name.into()),
            since_ms: 0,
        };
        assert_eq!(
            client("socket", "laptop").describe(),
            "socket client 2 · pid 42 · laptop"
        );
        assert_eq!(
            client("terminal", "the session's own terminal").describe(),
            "the session's own terminal · pid 42"
        );
    }
}
