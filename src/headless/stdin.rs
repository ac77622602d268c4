//! `-p`'s stdin: the prompt itself (`-p -`), or, with a prompt given and stdin a pipe
//! or a file (`git diff | claw-tui -p "review this"`), context that follows it.

use color_eyre::eyre::{bail, eyre};
use std::io::Read;
use std::os::fd::AsFd;

/// The most of stdin taken as a prompt or its context: more is refused, not cut.
const STDIN_LIMIT: u64 = 4 << 20;

/// Whether stdin is a pipe or a file, something written to be read: not a terminal,
/// and not a device such as `/dev/null`.
pub(super) fn piped() -> bool {
    use nix::sys::stat::{SFlag, fstat};
    fstat(std::io::stdin().as_fd()).is_ok_and(|st| {
        let kind = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
        kind == SFlag::S_IFIFO || kind == SFlag::S_IFREG
    })
}

/// All of stdin as text, `what` naming it in errors.
pub(super) fn read(what: &str) -> color_eyre::Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(STDIN_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| eyre!("cannot read {what} from stdin: {e}"))?;
    if bytes.len() as u64 > STDIN_LIMIT {
        bail!(
            "stdin holds more than {} MiB, too much for {what}: name a file in the prompt \
             instead, for the agent to read",
            STDIN_LIMIT >> 20
        );
    }
    String::from_utf8(bytes).map_err(|_| eyre!("{what} on stdin is not UTF-8 text"))
}

/// The prompt followed by what stdin held, marked as such; the prompt alone when stdin
/// was empty.
pub(super) fn with_context(prompt: &str, stdin: &str) -> String {
    if stdin.trim().is_empty() {
        return prompt.to_owned();
    }
    let newline = if stdin.ends_with('\n') { "" } else { "\n" };
    format!("{prompt}\n\n<stdin>\n{stdin}{newline}</stdin>")
}
