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

/// The 16 ANSI colours as xterm shows them by default, with their names.
const ANSI: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

fn nearest_ansi(r: u8, g: u8, b: u8) -> Color {
    ANSI.iter()
        .min_by_key(|(_, rgb)| distance((r, g, b), *rgb))
        .map_or(Color::Reset, |(color, _)| *color)
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
        assert_eq!(nearest_ansi(30, 200, 40), Color::Green);
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
