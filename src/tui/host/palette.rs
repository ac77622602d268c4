//! Which built-in theme fits the terminal when neither `--theme` nor a config file names
//! one: light text on a dark background is unreadable on a light one, and the other
//! way round. The terminal says what it is through `COLORFGBG` (rxvt, Konsole, some
//! others set it) or, asked, through OSC 11.

use std::time::Duration;

/// How long the terminal gets to answer the background query. Terminals that answer
/// do so in a few milliseconds; one that answers nothing else costs no more than this
/// (the query is followed by a DA1 request every terminal answers, so most stop waiting
/// sooner).
const QUERY_TIMEOUT: Duration = Duration::from_millis(150);

/// `"light"` or `"dark"`: what `COLORFGBG` says, else the terminal's answer to the
/// background query; dark when neither tells.
pub fn fitting_theme() -> &'static str {
    let (name, how) = match from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref()) {
        Some(name) => (name, "COLORFGBG"),
        None => (queried(), "the background query"),
    };
    tracing::debug!("theme {name}, chosen by {how}");
    name
}

/// The theme `COLORFGBG` (`"fg;bg"` or `"fg;default;bg"`, ANSI colour indexes) points
/// to: a background of white (7 or 15) is light, any other index dark.
fn from_colorfgbg(value: Option<&str>) -> Option<&'static str> {
    let background: u8 = value?.rsplit(';').next()?.trim().parse().ok()?;
    Some(if matches!(background, 7 | 15) {
        "light"
    } else {
        "dark"
    })
}

/// Asks the terminal for its background colour; dark when it does not answer in time.
fn queried() -> &'static str {
    let mut options = terminal_colorsaurus::QueryOptions::default();
    options.timeout = QUERY_TIMEOUT;
    // The background alone (one question, not two): more than half way to white is a
    // light terminal.
    match terminal_colorsaurus::background_color(options) {
        Ok(color) if color.perceived_lightness() > 0.5 => "light",
        Ok(_) => "dark",
        Err(e) => {
            tracing::debug!("the terminal did not say its background: {e}");
            "dark"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorfgbg_names_the_background_last() {
        assert_eq!(from_colorfgbg(Some("15;0")), Some("dark"));
        assert_eq!(from_colorfgbg(Some("0;15")), Some("light"));
        assert_eq!(from_colorfgbg(Some("0;default;7")), Some("light"));
        assert_eq!(from_colorfgbg(Some("12;8")), Some("dark"));
        assert_eq!(from_colorfgbg(Some("default")), None);
        assert_eq!(from_colorfgbg(None), None);
    }
}
