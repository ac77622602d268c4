//! Why a theme cannot be loaded, down to the key and the colour at fault.

use super::TOKENS;
use std::sync::Arc;

/// Why a theme could not be loaded.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ThemeError {
    /// No built-in theme and no user file has that name.
    #[error(
        "unknown theme \"{name}\": use one of {builtin}, or create {dir}/{name}.toml \
         (copy a built-in one from the themes/ folder of the source as a start)"
    )]
    Unknown {
        /// The requested name.
        name: String,
        /// The built-in names, comma separated.
        builtin: String,
        /// Where user themes are looked up.
        dir: String,
    },
    /// The user's theme file exists but cannot be read.
    #[error("theme {path}: cannot read the file: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why reading failed.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The file has a problem; the message names the file and the key.
    #[error("theme {source_name}: {problem}")]
    Invalid {
        /// The file (or built-in name) the theme came from.
        source_name: String,
        /// What is wrong, naming the key.
        #[source]
        problem: ThemeFileError,
    },
}

/// What is wrong inside a theme file.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ThemeFileError {
    /// The text is not TOML.
    #[error("not valid TOML: {}", .0.message().trim())]
    NotToml(#[source] toml::de::Error),
    /// `name` or `syntax_theme` is not a string.
    #[error("`{key}` must be a string")]
    NotAString {
        /// The key.
        key: String,
    },
    /// `colors` is not a table.
    #[error("`colors` must be a table ([colors])")]
    ColorsNotATable,
    /// A top-level key a theme does not have.
    #[error("unknown key `{key}`; a theme has name, syntax_theme and [colors]")]
    UnknownKey {
        /// The key.
        key: String,
    },
    /// No `[colors]` table.
    #[error("missing the [colors] table")]
    MissingColors,
    /// A key under `[colors]` that is no token.
    #[error("unknown key `colors.{key}`; the tokens are {}", TOKENS.join(", "))]
    UnknownToken {
        /// The key.
        key: String,
    },
    /// A token without a colour.
    #[error("missing key `colors.{token}`")]
    MissingToken {
        /// The token.
        token: &'static str,
    },
    /// A token whose value is no colour.
    #[error("bad value for `colors.{token}`: {source}")]
    BadColor {
        /// The token.
        token: &'static str,
        /// What is wrong with the value.
        #[source]
        source: ColorError,
    },
}

/// Why a value is not a colour.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ColorError {
    /// A number outside 0-255.
    #[error("{value} is not an ANSI colour index 0-255")]
    NotAnIndex {
        /// The number.
        value: i64,
    },
    /// Neither a string nor a number.
    #[error("expected a colour string, found {found}")]
    NotAString {
        /// The TOML type found (`boolean`, `array`...).
        found: &'static str,
    },
    /// `#` followed by something other than six hex digits.
    #[error("\"{text}\" is not a #rrggbb colour")]
    BadHex {
        /// The value (trimmed, lower case).
        text: String,
    },
    /// No colour name, hex code or index.
    #[error(
        "\"{text}\" is not a colour: use #rrggbb, a name like lightblue, an index 0-255, or reset"
    )]
    Unknown {
        /// The value (trimmed, lower case).
        text: String,
    },
}
