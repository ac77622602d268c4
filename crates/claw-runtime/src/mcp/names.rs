//! The names MCP tools get in the registry: `mcp__SERVER__TOOL`, reduced to what every
//! provider accepts (`^[a-zA-Z0-9_-]{1,64}$`), the same on every start and never two
//! alike.
//!
//! A name that already fits is kept as it is (`get-sum` of `everything` is
//! `mcp__everything__get-sum`). One that does not (other characters, or too long) has
//! those characters replaced by `_`, is cut to leave room, and ends in `_` and eight hex
//! digits of a hash of the server's and the tool's original names, so two tools that
//! reduce alike still differ and a name does not change between runs.

/// Longest tool name the providers accept.
pub const MAX_TOOL_NAME: usize = 64;
/// What every MCP tool name starts with.
pub const PREFIX: &str = "mcp__";

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// FNV-1a (32 bits): tiny, and the same in every build (std's hasher is not).
fn stable_hash(parts: &[&str], salt: u32) -> u32 {
    let mut hash: u32 = 0x811c_9dc5 ^ salt;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0)) {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    }
    hash
}

/// The registry name of `server`'s tool `tool`; `taken` says whether a name is already
/// used by another tool (then a hashed variant is chosen).
pub fn tool_name(server: &str, tool: &str, taken: &dyn Fn(&str) -> bool) -> String {
    let cleaned: String = tool
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    let server_clean: String = server
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    let plain = format!("{PREFIX}{server_clean}__{cleaned}");
    let fits = cleaned == tool && server_clean == server && !tool.is_empty();
    if fits && plain.len() <= MAX_TOOL_NAME && !taken(&plain) {
        return plain;
    }
    let candidate = |salt: u32| {
        let suffix = format!("_{:08x}", stable_hash(&[server, tool], salt));
        // Every character is ASCII here, so byte lengths are character counts.
        let room = MAX_TOOL_NAME - suffix.len();
        format!("{}{suffix}", &plain[..plain.len().min(room)])
    };
    // Some salt is free: there are only finitely many tools.
    (0..=u32::MAX)
        .map(candidate)
        .find(|name| !taken(name))
        .unwrap_or(plain)
}

/// Whether `name` is an MCP tool's registry name.
pub fn is_mcp_tool(name: &str) -> bool {
    name.starts_with(PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_TOOL_NAME).contains(&name.len()) && name.chars().all(allowed)
    }

    const FREE: &dyn Fn(&str) -> bool = &|_| false;

    #[test]
    fn names_that_fit_are_kept() {
        assert_eq!(
            tool_name("everything", "get-sum", FREE),
            "mcp__everything__get-sum"
        );
        assert_eq!(
            tool_name("fs", "read_text_file", FREE),
            "mcp__fs__read_text_file"
        );
    }

    #[test]
    fn other_characters_are_replaced_and_hashed() {
        let dotted = tool_name("srv", "files.read", FREE);
        assert!(dotted.starts_with("mcp__srv__files_read_"), "{dotted}");
        assert!(valid(&dotted));
        // Reduces like the tool that already has the underscore, yet differs from it.
        assert_ne!(dotted, tool_name("srv", "files_read", FREE));
        assert_ne!(dotted, tool_name("srv", "files/read", FREE));
        let unicode = tool_name("srv", "lire-fichier-é", FREE);
        assert!(valid(&unicode), "{unicode}");
    }

    #[test]
    fn long_names_are_capped_and_stable() {
        let long = "a".repeat(100);
        let first = tool_name("server", &long, FREE);
        assert_eq!(first.len(), MAX_TOOL_NAME);
        assert!(valid(&first));
        assert_eq!(first, tool_name("server", &long, FREE), "same on every run");
        let other = tool_name("server", &format!("{long}b"), FREE);
        assert_ne!(first, other, "same 55-char head, different tools");
        assert_eq!(other.len(), MAX_TOOL_NAME);
        // Exactly at the limit is kept whole.
        let tool = "t".repeat(MAX_TOOL_NAME - "mcp__s__".len());
        assert_eq!(tool_name("s", &tool, FREE), format!("mcp__s__{tool}"));
    }

    #[test]
    fn collisions_get_another_name() {
        // Server `a` with tool `b__c` and server `a__b` with tool `c` read the same.
        let first = tool_name("a", "b__c", FREE);
        assert_eq!(first, "mcp__a__b__c");
        let taken = |n: &str| n == first;
        let second = tool_name("a__b", "c", &taken);
        assert_ne!(second, first);
        assert!(valid(&second));
        assert_eq!(second, tool_name("a__b", "c", &taken), "stable");
    }

    #[test]
    fn empty_tool_name_still_gets_a_valid_name() {
        let name = tool_name("s", "", FREE);
        assert!(valid(&name), "{name}");
    }
}
