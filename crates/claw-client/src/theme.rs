//! Colour themes: semantic tokens (text, dim, accent, ...) mapped to colours, and the
//! syntect theme used for code blocks.
//!
//! Built-in themes are compiled in from `themes/*.toml`; a `NAME.toml` in the config
//! dir's `themes/` folder overrides or adds one. `NO_COLOR` turns every colour off and
//! leaves only bold, dim, italic and reverse video.

mod error;

pub use error::{ColorError, ThemeError, ThemeFileError};

use ratatui::style::{Color, Modifier, Style};
use std::path::{Path, PathBuf};

/// The themes compiled into the binary: (name, TOML text).
pub const BUILTIN_THEMES: [(&str, &str); 3] = [
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.toml"),
    ),
];

/// The colour tokens a theme file must define under `[colors]`.
pub const TOKENS: [&str; 19] = [
    "text",
    "dim",
    "accent",
    "user",
    "assistant",
    "thinking",
    "tool",
    "success",
    "error",
    "warning",
    "notify",
    "message",
    "code",
    "link",
    "border",
    "border_focus",
    "selection",
    "status_bg",
    "status_fg",
];

/// Colours a theme may give or leave out (an older theme file stays valid): the
/// background of added and of removed lines in a diff.
pub const OPTIONAL_TOKENS: [&str; 2] = ["diff_added_bg", "diff_removed_bg"];

/// A resolved theme: a colour per token and the syntect theme name.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    /// The syntect theme for code blocks (empty with `NO_COLOR`: code stays plain).
    pub syntax_theme: String,
    /// Whether colours are off (`NO_COLOR`).
    pub no_color: bool,
    colors: [Color; TOKENS.len()],
    /// The optional colours, in the order of [`OPTIONAL_TOKENS`].
    optional: [Option<Color>; OPTIONAL_TOKENS.len()],
}

/// A semantic colour token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Token {
    Text,
    Dim,
    Accent,
    User,
    Assistant,
    Thinking,
    Tool,
    Success,
    Error,
    Warning,
    Notify,
    Message,
    Code,
    Link,
    Border,
    BorderFocus,
    Selection,
    StatusBg,
    StatusFg,
}

impl Theme {
    /// The built-in theme called `name`, if there is one.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN_THEMES.iter().find(|(n, _)| *n == name)?;
        // The built-in files are tested to parse, so this only fails if one is broken.
        Theme::parse(text, name).ok()
    }

    /// The default theme (dark).
    pub fn fallback() -> Theme {
        Theme::builtin("dark").unwrap_or_else(|| Theme {
            name: "plain".into(),
            syntax_theme: String::new(),
            no_color: true,
            colors: [Color::Reset; TOKENS.len()],
            optional: [None; OPTIONAL_TOKENS.len()],
        })
    }

    /// Loads `name`: `user_dir/NAME.toml` when it exists, else the built-in theme.
    pub fn load(name: &str, user_dir: Option<&Path>) -> Result<Theme, ThemeError> {
        if let Some(dir) = user_dir {
            let path = dir.join(format!("{name}.toml"));
            match std::fs::read_to_string(&path) {
                Ok(text) => return Theme::parse(&text, &path.display().to_string()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(ThemeError::Read {
                        path: path.display().to_string(),
                        source: std::sync::Arc::new(source),
                    });
                }
            }
        }
        match BUILTIN_THEMES.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => Theme::parse(text, name),
            None => Err(ThemeError::Unknown {
                name: name.to_owned(),
                builtin: BUILTIN_THEMES.map(|(n, _)| n).join(", "),
                dir: user_dir
                    .map_or_else(|| "<config dir>/themes".into(), |d| d.display().to_string()),
            }),
        }
    }

    /// Parses a theme file; `source_name` names it in errors.
    pub fn parse(text: &str, source_name: &str) -> Result<Theme, ThemeError> {
        let invalid = |problem: ThemeFileError| ThemeError::Invalid {
            source_name: source_name.to_owned(),
            problem,
        };
        let table: toml::Table =
            toml::from_str(text).map_err(|e| invalid(ThemeFileError::NotToml(e)))?;
        let mut name = None;
        let mut syntax_theme = None;
        let mut colors_table = None;
        for (key, value) in &table {
            match (key.as_str(), value) {
                ("name", toml::Value::String(s)) => name = Some(s.clone()),
                ("syntax_theme", toml::Value::String(s)) => syntax_theme = Some(s.clone()),
                ("colors", toml::Value::Table(t)) => colors_table = Some(t),
                ("name" | "syntax_theme", _) => {
                    return Err(invalid(ThemeFileError::NotAString { key: key.clone() }));
                }
                ("colors", _) => return Err(invalid(ThemeFileError::ColorsNotATable)),
                _ => return Err(invalid(ThemeFileError::UnknownKey { key: key.clone() })),
            }
        }
        let colors_table = colors_table.ok_or_else(|| invalid(ThemeFileError::MissingColors))?;
        for key in colors_table.keys() {
            if !TOKENS.contains(&key.as_str()) && !OPTIONAL_TOKENS.contains(&key.as_str()) {
                return Err(invalid(ThemeFileError::UnknownToken { key: key.clone() }));
            }
        }
        let mut colors = [Color::Reset; TOKENS.len()];
        for (slot, token) in colors.iter_mut().zip(TOKENS) {
            let value = colors_table
                .get(token)
                .ok_or_else(|| invalid(ThemeFileError::MissingToken { token }))?;
            *slot = parse_color(value)
                .map_err(|source| invalid(ThemeFileError::BadColor { token, source }))?;
        }
        let mut optional = [None; OPTIONAL_TOKENS.len()];
        for (slot, token) in optional.iter_mut().zip(OPTIONAL_TOKENS) {
            if let Some(value) = colors_table.get(token) {
                *slot = Some(
                    parse_color(value)
                        .map_err(|source| invalid(ThemeFileError::BadColor { token, source }))?,
                );
            }
        }
        Ok(Theme {
            name: name.unwrap_or_else(|| source_name.to_owned()),
            syntax_theme: syntax_theme.unwrap_or_else(|| "base16-ocean.dark".into()),
            no_color: false,
            colors,
            optional,
        })
    }

    /// The same theme with colours off: styles keep only their modifiers.
    pub fn without_color(mut self) -> Theme {
        self.no_color = true;
        self.syntax_theme.clear();
        self.colors = [Color::Reset; TOKENS.len()];
        self.optional = [None; OPTIONAL_TOKENS.len()];
        self
    }

    /// The background of an added (`true`) or removed diff line, if the theme shades them.
    pub fn diff_bg(&self, added: bool) -> Option<Color> {
        self.optional[usize::from(!added)]
    }

    /// The colour of a token (`Reset` with `NO_COLOR`).
    pub fn color(&self, token: Token) -> Color {
        self.colors[token as usize]
    }

    /// Foreground style of a token.
    pub fn fg(&self, token: Token) -> Style {
        if self.no_color {
            return Style::default();
        }
        Style::default().fg(self.color(token))
    }

    /// Plain text.
    pub fn text(&self) -> Style {
        self.fg(Token::Text)
    }

    /// Secondary text: dimmed.
    pub fn dim(&self) -> Style {
        self.fg(Token::Dim).add_modifier(Modifier::DIM)
    }

    /// A pane border, brighter when the pane has focus.
    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.no_color) {
            (true, true) => Style::default().add_modifier(Modifier::BOLD),
            (false, true) => Style::default().add_modifier(Modifier::DIM),
            (true, false) => self.fg(Token::BorderFocus),
            (false, false) => self.fg(Token::Border),
        }
    }

    /// The selected row of a list.
    pub fn selection(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().bg(self.color(Token::Selection))
        }
    }

    /// The status bar background and text.
    pub fn status(&self) -> Style {
        if self.no_color {
            return Style::default().add_modifier(Modifier::REVERSED);
        }
        Style::default()
            .bg(self.color(Token::StatusBg))
            .fg(self.color(Token::StatusFg))
    }
}

/// The directory user themes are read from: `themes/` next to the config file.
pub fn user_theme_dir(config_path: &Path) -> Option<PathBuf> {
    config_path.parent().map(|dir| dir.join("themes"))
}

/// Whether `NO_COLOR` asks for no colours (set and not empty, per no-color.org).
pub fn no_color_requested(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// Parses `"#rrggbb"`, a colour name, `"reset"`, or an ANSI index (number or string).
pub fn parse_color(value: &toml::Value) -> Result<Color, ColorError> {
    let text = match value {
        toml::Value::Integer(n) => {
            return u8::try_from(*n)
                .map(Color::Indexed)
                .map_err(|_| ColorError::NotAnIndex { value: *n });
        }
        toml::Value::String(s) => s.trim().to_ascii_lowercase(),
        other => {
            return Err(ColorError::NotAString {
                found: other.type_str(),
            });
        }
    };
    if let Some(hex) = text.strip_prefix('#') {
        let valid = hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit());
        let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
        return if valid {
            Ok(Color::Rgb(channel(0), channel(2), channel(4)))
        } else {
            Err(ColorError::BadHex { text })
        };
    }
    if let Ok(index) = text.parse::<u8>() {
        return Ok(Color::Indexed(index));
    }
    let named = match text.replace(['-', '_', ' '], "").as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return Err(ColorError::Unknown { text }),
    };
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_themes_parse() {
        for (name, _) in BUILTIN_THEMES {
            let theme = Theme::builtin(name).unwrap();
            assert_eq!(theme.name, name);
            assert!(!theme.syntax_theme.is_empty());
        }
        assert_eq!(Theme::fallback().name, "dark");
    }

    #[test]
    fn errors_name_the_key() {
        let dark = BUILTIN_THEMES[0].1;
        let missing = dark.replace("warning = \"#ebcb8b\"\n", "");
        let err = Theme::parse(&missing, "x.toml").unwrap_err().to_string();
        assert!(
            err.contains("x.toml") && err.contains("colors.warning"),
            "{err}"
        );
        let bad = dark.replace("\"#ebcb8b\"", "\"#ebcb8\"");
        let err = Theme::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(
            err.contains("colors.warning") && err.contains("#rrggbb"),
            "{err}"
        );
        let extra = format!("{dark}\nsparkle = \"red\"\n");
        let err = Theme::parse(&extra, "x.toml").unwrap_err().to_string();
        assert!(err.contains("colors.sparkle"), "{err}");
        let err = Theme::parse("name = 3\n[colors]\n", "y.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`name`"), "{err}");
    }

    #[test]
    fn diff_shading_is_optional_and_checked() {
        let dark = BUILTIN_THEMES[0].1;
        let theme = Theme::parse(dark, "dark").unwrap();
        assert_eq!(theme.diff_bg(true), Some(Color::Rgb(0x26, 0x33, 0x2a)));
        assert_eq!(theme.diff_bg(false), Some(Color::Rgb(0x3b, 0x26, 0x28)));
        // A theme file written before the shading existed stays valid, unshaded.
        let older: String = dark
            .lines()
            .filter(|l| !l.starts_with("diff_"))
            .map(|l| format!("{l}\n"))
            .collect();
        let theme = Theme::parse(&older, "older").unwrap();
        assert_eq!(theme.diff_bg(true), None);
        assert_eq!(theme.diff_bg(false), None);
        let bad = dark.replace(
            "diff_added_bg = \"#26332a\"",
            "diff_added_bg = \"greenish\"",
        );
        let err = Theme::parse(&bad, "bad").unwrap_err().to_string();
        assert!(err.contains("diff_added_bg"), "{err}");
        assert_eq!(Theme::fallback().without_color().diff_bg(true), None);
    }

    #[test]
    fn file_errors_keep_their_cause() {
        let dark = BUILTIN_THEMES[0].1;
        let bad = dark.replace("\"#ebcb8b\"", "true");
        let err = Theme::parse(&bad, "x.toml").unwrap_err();
        assert!(
            matches!(
                &err,
                ThemeError::Invalid {
                    problem: ThemeFileError::BadColor {
                        token: "warning",
                        ..
                    },
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "theme x.toml: bad value for `colors.warning`: expected a colour string, found boolean"
        );
        let err = Theme::parse("[colors", "y.toml").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("theme y.toml: not valid TOML: "),
            "{err}"
        );
        assert!(std::error::Error::source(&err).is_some());
        // A directory where the file should be cannot be read: that is said, not skipped.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("odd.toml")).unwrap();
        let err = Theme::load("odd", Some(dir.path())).unwrap_err();
        assert!(matches!(err, ThemeError::Read { .. }), "{err:?}");
        assert!(
            err.to_string().contains("odd.toml: cannot read the file: "),
            "{err}"
        );
    }

    #[test]
    fn colours_parse_in_every_form() {
        use toml::Value;
        assert_eq!(
            parse_color(&Value::String("#0a0B0c".into())),
            Ok(Color::Rgb(10, 11, 12))
        );
        assert_eq!(
            parse_color(&Value::String("Light-Blue".into())),
            Ok(Color::LightBlue)
        );
        assert_eq!(parse_color(&Value::Integer(42)), Ok(Color::Indexed(42)));
        assert_eq!(
            parse_color(&Value::String("reset".into())),
            Ok(Color::Reset)
        );
        assert_eq!(
            parse_color(&Value::Integer(300)),
            Err(ColorError::NotAnIndex { value: 300 })
        );
        assert_eq!(
            parse_color(&Value::Integer(300)).unwrap_err().to_string(),
            "300 is not an ANSI colour index 0-255"
        );
        assert_eq!(
            parse_color(&Value::String("mauve".into()))
                .unwrap_err()
                .to_string(),
            "\"mauve\" is not a colour: use #rrggbb, a name like lightblue, an index 0-255, or reset"
        );
        assert_eq!(
            parse_color(&Value::Boolean(true)).unwrap_err().to_string(),
            "expected a colour string, found boolean"
        );
    }

    #[test]
    fn user_themes_override_and_unknown_names_explain() {
        let dir = tempfile::tempdir().unwrap();
        let custom = BUILTIN_THEMES[0]
            .1
            .replace("name = \"dark\"", "name = \"mine\"");
        std::fs::write(dir.path().join("mine.toml"), custom).unwrap();
        assert_eq!(Theme::load("mine", Some(dir.path())).unwrap().name, "mine");
        assert_eq!(
            Theme::load("light", Some(dir.path())).unwrap().name,
            "light"
        );
        let err = Theme::load("nope", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("dark, light, high-contrast") && err.contains("nope.toml"),
            "{err}"
        );
    }

    #[test]
    fn no_color_keeps_only_modifiers() {
        let theme = Theme::fallback().without_color();
        assert_eq!(theme.fg(Token::Error), Style::default());
        assert!(theme.selection().add_modifier.contains(Modifier::REVERSED));
        assert!(
            no_color_requested(Some("1"))
                && !no_color_requested(Some(""))
                && !no_color_requested(None)
        );
    }
}
