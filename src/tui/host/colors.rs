//! The colours a terminal can show. Themes are written in 24-bit colour; a terminal
//! that has not said it shows 24-bit colour (`COLORTERM=truecolor` or `24bit`) gets
//! each colour as the nearest of the 256 indexed ones when `TERM` names them
//! (`xterm-256color`, `tmux-256color`), else the nearest of the 16 ANSI colours (the
//! Linux console, `vt100`, `screen`). The mapping is done where the frame is sent
//! ([`Fitted`]), so the view and the app's frames stay the same for every terminal.
//!
//! Not crossterm's `available_color_count`: it stops at `COLORTERM`'s presence
//! (`COLORTERM=yes` with `TERM=xterm-256color` gives 8 colours).

use crate::config::Colors;
use ratatui::buffer::Cell;
use ratatui::style::Color;

mod fitted;

pub use fitted::Fitted;

/// The colours to draw with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// 24-bit colour: drawn as the theme says.
    TrueColor,
    /// The 256 indexed colours.
    Indexed,
    /// The 16 ANSI colours.
    Ansi,
}

impl Depth {
    /// The depth `[ui] colors` asks for, or this terminal's (`COLORTERM`, `TERM`).
    pub fn of_terminal(setting: Option<Colors>) -> Self {
        let var = |name| std::env::var(name).ok();
        Self::chosen(setting, var("COLORTERM").as_deref(), var("TERM").as_deref())
    }

    /// The depth `[ui] colors` asks for, or the one `COLORTERM` and `TERM` say.
    pub fn chosen(setting: Option<Colors>, colorterm: Option<&str>, term: Option<&str>) -> Self {
        match setting.unwrap_or_default() {
            Colors::TrueColor => Self::TrueColor,
            Colors::Indexed => Self::Indexed,
            Colors::Ansi => Self::Ansi,
            Colors::Auto => Self::detected(colorterm, term),
        }
    }

    fn detected(colorterm: Option<&str>, term: Option<&str>) -> Self {
        let colorterm = colorterm.unwrap_or("").to_ascii_lowercase();
        if colorterm.contains("truecolor") || colorterm.contains("24bit") {
            return Self::TrueColor;
        }
        let term = term.unwrap_or("").to_ascii_lowercase();
        if term.contains("direct") {
            // terminfo's `*-direct` entries (xterm-direct, kitty-direct) are 24-bit.
            Self::TrueColor
        } else if term.contains("256") {
            Self::Indexed
        } else {
            Self::Ansi
        }
    }

    /// Words for the log.
    pub fn words(self) -> &'static str {
        match self {
            Self::TrueColor => "24-bit colour",
            Self::Indexed => "256 colours",
            Self::Ansi => "16 colours",
        }
    }

    /// `cell` in colours the terminal shows.
    pub fn fit_cell(self, cell: &Cell) -> Cell {
        let mut fitted = cell.clone();
        fitted.fg = self.color(cell.fg);
        fitted.bg = self.color(cell.bg);
        fitted.underline_color = self.color(cell.underline_color);
        fitted
    }

    fn color(self, color: Color) -> Color {
        match (self, color) {
            (Self::Indexed, Color::Rgb(r, g, b)) => Color::Indexed(nearest_indexed(r, g, b)),
            (Self::Ansi, Color::Rgb(r, g, b)) => nearest_ansi(r, g, b),
            (Self::Ansi, Color::Indexed(i)) if i >= 16 => {
                let (r, g, b) = indexed_rgb(i);
                nearest_ansi(r, g, b)
            }
            (_, other) => other,
        }
    }
}

/// The six levels of each channel in xterm's 6×6×6 colour cube (indexes 16–231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The nearest of xterm's colours 16–255 (the cube and the grey ramp; 0–15 are left
/// out because terminals set those to their own palettes).
fn nearest_indexed(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| {
        (0..CUBE.len())
            .min_by_key(|&i| u32::from(CUBE[i].abs_diff(v)))
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (16 + 36 * ri + 6 * gi + bi) as u8;
    let cube_distance = distance((r, g, b), (CUBE[ri], CUBE[gi], CUBE[bi]));
    // The grey ramp 232–255: 8, 18, … 238.
    let mean = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let step = (mean.saturating_sub(3) / 10).min(23) as u8;
    let grey = 8 + 10 * step;
    if distance((r, g, b), (grey, grey, grey)) < cube_distance {
        232 + step
    } else {
        cube
    }
}

/// The colour of index `i` (16–255) in xterm's default palette.
fn indexed_rgb(i: u8) -> (u8, u8, u8) {
    if i >= 232 {
        let v = 8 + 10 * (i - 232);
        return (v, v, v);
    }
    let i = usize::from(i.saturating_sub(16));
    (CUBE[i / 36], CUBE[(i / 6) % 6], CUBE[i % 6])
}

/// The ANSI colour for `r, g, b`, by hue rather than by distance: themes use soft
/// colours (Nord's yellow is #ebcb8b), which are nearer to a grey of xterm's palette
/// than to its saturated yellow, so the nearest colour would turn every warning grey.
/// A colour with little chroma is a grey by its lightness; any other keeps its hue
/// (the six of the palette, each sixty degrees wide) and is bright when it is light.
fn nearest_ansi(r: u8, g: u8, b: u8) -> Color {
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let chroma = max - min;
    if chroma < GREY_CHROMA {
        return match (u16::from(max) + u16::from(min)) / 2 {
            0..64 => Color::Black,
            64..144 => Color::DarkGray,
            144..224 => Color::Gray,
            _ => Color::White,
        };
    }
    let bright = max > BRIGHT_ABOVE;
    // Sectors centred on the hues: red 330–30, yellow 30–90, green 90–150, ...
    match ((hue_degrees(r, g, b) + 30.0).rem_euclid(360.0) / 60.0) as u8 {
        0 if bright => Color::LightRed,
        0 => Color::Red,
        1 if bright => Color::LightYellow,
        1 => Color::Yellow,
        2 if bright => Color::LightGreen,
        2 => Color::Green,
        3 if bright => Color::LightCyan,
        3 => Color::Cyan,
        4 if bright => Color::LightBlue,
        4 => Color::Blue,
        _ if bright => Color::LightMagenta,
        _ => Color::Magenta,
    }
}

/// Below this chroma (the channels' spread) a colour reads as a grey.
const GREY_CHROMA: u8 = 32;
/// A colour whose strongest channel is above this takes the palette's bright variant.
const BRIGHT_ABOVE: u8 = 160;

/// The hue of `r, g, b` in degrees, 0–360 (red 0, green 120, blue 240).
fn hue_degrees(r: u8, g: u8, b: u8) -> f32 {
    let (r, g, b) = (f32::from(r), f32::from(g), f32::from(b));
    let max = r.max(g).max(b);
    let chroma = max - r.min(g).min(b);
    if chroma == 0.0 {
        return 0.0;
    }
    let h = if max == r {
        ((g - b) / chroma).rem_euclid(6.0)
    } else if max == g {
        (b - r) / chroma + 2.0
    } else {
        (r - g) / chroma + 4.0
    };
    h * 60.0
}

/// Squared distance, the green channel weighted as the eye weighs it.
fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| u32::from(x.abs_diff(y)).pow(2);
    2 * d(a.0, b.0) + 4 * d(a.1, b.1) + 3 * d(a.2, b.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    #[test]
    fn the_terminal_says_how_many_colours() {
        let auto = |ct: Option<&str>, t: Option<&str>| Depth::chosen(None, ct, t);
        assert_eq!(
            auto(Some("truecolor"), Some("xterm-256color")),
            Depth::TrueColor
        );
        assert_eq!(auto(Some("24bit"), Some("linux")), Depth::TrueColor);
        assert_eq!(auto(Some("yes"), Some("xterm-256color")), Depth::Indexed);
        assert_eq!(auto(None, Some("tmux-256color")), Depth::Indexed);
        assert_eq!(auto(None, Some("xterm-direct")), Depth::TrueColor);
        for term in ["linux", "vt100", "screen", "xterm"] {
            assert_eq!(auto(None, Some(term)), Depth::Ansi, "{term}");
        }
        assert_eq!(auto(None, None), Depth::Ansi);
        let set = |c| Depth::chosen(Some(c), None, Some("linux"));
        assert_eq!(set(Colors::TrueColor), Depth::TrueColor);
        assert_eq!(set(Colors::Indexed), Depth::Indexed);
        assert_eq!(
            Depth::chosen(Some(Colors::Ansi), Some("truecolor"), None),
            Depth::Ansi
        );
    }

    #[test]
    fn colours_map_to_their_nearest() {
        assert_eq!(nearest_indexed(255, 0, 0), 196);
        assert_eq!(nearest_indexed(0, 0, 0), 16);
        assert_eq!(nearest_indexed(128, 128, 128), 244);
        assert_eq!(nearest_indexed(95, 135, 175), 67);
        for i in 16..=255u8 {
            let (r, g, b) = indexed_rgb(i);
            assert_eq!(indexed_rgb(nearest_indexed(r, g, b)), (r, g, b), "{i}");
        }
        assert_eq!(nearest_ansi(250, 10, 10), Color::LightRed);
        assert_eq!(nearest_ansi(20, 20, 20), Color::Black);
        assert_eq!(nearest_ansi(120, 120, 130), Color::DarkGray);
        assert_eq!(nearest_ansi(30, 200, 40), Color::LightGreen);
        assert_eq!(nearest_ansi(20, 120, 30), Color::Green);
        // The dark theme's soft colours keep their meaning: Nord's yellow, red, green,
        // blue and frost, and its dim grey.
        assert_eq!(nearest_ansi(0xeb, 0xcb, 0x8b), Color::LightYellow);
        assert_eq!(nearest_ansi(0xbf, 0x61, 0x6a), Color::LightRed);
        assert_eq!(nearest_ansi(0xa3, 0xbe, 0x8c), Color::LightGreen);
        assert_eq!(nearest_ansi(0x81, 0xa1, 0xc1), Color::LightBlue);
        assert_eq!(nearest_ansi(0x88, 0xc0, 0xd0), Color::LightCyan);
        assert_eq!(nearest_ansi(0xb4, 0x8e, 0xad), Color::LightMagenta);
        // The light theme's darker ones stay dark.
        assert_eq!(nearest_ansi(0x8a, 0x1c, 0x1c), Color::Red);
        assert_eq!(nearest_ansi(0x4c, 0x56, 0x6a), Color::DarkGray);
        assert_eq!(nearest_ansi(0xec, 0xef, 0xf4), Color::White);
    }

    #[test]
    fn a_cell_keeps_named_colours_and_loses_every_24_bit_one() {
        let cell = |style: Style| {
            let mut cell = Cell::new("x");
            cell.set_style(style);
            cell
        };
        let rgb = cell(
            Style::new()
                .fg(Color::Rgb(255, 0, 0))
                .bg(Color::Rgb(0, 0, 0)),
        );
        let indexed = cell(Style::new().fg(Color::Indexed(196)).bg(Color::Reset));
        let named = cell(Style::new().fg(Color::Cyan));
        let fit = |depth: Depth, c: &Cell| {
            let c = depth.fit_cell(c);
            (c.fg, c.bg)
        };
        assert_eq!(
            fit(Depth::Indexed, &rgb),
            (Color::Indexed(196), Color::Indexed(16))
        );
        assert_eq!(
            fit(Depth::Indexed, &indexed),
            (Color::Indexed(196), Color::Reset)
        );
        assert_eq!(fit(Depth::Indexed, &named), (Color::Cyan, Color::Reset));
        assert_eq!(fit(Depth::Ansi, &rgb), (Color::LightRed, Color::Black));
        assert_eq!(fit(Depth::Ansi, &indexed), (Color::LightRed, Color::Reset));
        assert_eq!(fit(Depth::Ansi, &named), (Color::Cyan, Color::Reset));
        assert_eq!(
            fit(Depth::TrueColor, &rgb),
            (Color::Rgb(255, 0, 0), Color::Rgb(0, 0, 0))
        );
        assert_eq!(Depth::Ansi.fit_cell(&rgb).symbol(), "x");
    }
}
