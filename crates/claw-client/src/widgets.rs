//! Drawing pieces the parts share: a pane's border and title, a fast line writer, and
//! the centred dialog box the overlays and the approval prompt use.

use super::wrap::str_width;
use crate::theme::{Theme, Token};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

/// Draws a pane's frame: rounded border and title, brighter when focused. Only the
/// border cells are touched (a `Block` would restyle every cell of the pane).
pub fn pane_frame(theme: &Theme, area: Rect, title: &str, focused: bool, buf: &mut Buffer) {
    if area.width < 2 || area.height < 2 {
        return;
    }
    let border = theme.border(focused);
    let (left, right, top, bottom) = (area.left(), area.right() - 1, area.top(), area.bottom() - 1);
    let mut put = |x: u16, y: u16, c: char| {
        if let Some(cell) = buf.cell_mut((x, y)) {
            cell.set_char(c).set_style(border);
        }
    };
    for x in left + 1..right {
        put(x, top, '─');
        put(x, bottom, '─');
    }
    for y in top + 1..bottom {
        put(left, y, '│');
        put(right, y, '│');
    }
    put(left, top, '╭');
    put(right, top, '╮');
    put(left, bottom, '╰');
    put(right, bottom, '╯');
    let mut title_style = theme.fg(Token::Accent);
    if focused {
        title_style = title_style.add_modifier(Modifier::BOLD);
    }
    let title = Line::from(Span::styled(title.to_owned(), title_style));
    put_line(buf, left + 1, top, &title, area.width.saturating_sub(2));
}

/// Writes a line like `Buffer::set_line`, with a fast path for ASCII spans: they need
/// no grapheme segmentation, which is most of the cost of drawing a screen of text.
pub fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    let right = x.saturating_add(max_width).min(buf.area.right());
    let mut col = x;
    for span in &line.spans {
        if col >= right {
            break;
        }
        let style = line.style.patch(span.style);
        let text: &str = &span.content;
        if text.is_ascii() {
            for b in text.bytes() {
                if col >= right {
                    break;
                }
                if b < 0x20 || b == 0x7f {
                    continue;
                }
                if let Some(cell) = buf.cell_mut((col, y)) {
                    cell.set_char(char::from(b)).set_style(style);
                }
                col += 1;
            }
        } else {
            col = buf
                .set_stringn(col, y, text, usize::from(right - col), style)
                .0;
        }
    }
}

/// A box `width_percent` of `area` wide (at least 30 cells) and `height` rows high,
/// centred in it.
pub fn centered(area: Rect, width_percent: u16, height: u16) -> Rect {
    let width = (area.width * width_percent / 100).max(30).min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Clears `area` and draws a dialog's double border with `title`; returns the inside.
pub fn dialog(theme: &Theme, area: Rect, title: String, buf: &mut Buffer) -> Rect {
    Clear.render(area, buf);
    buf.set_style(area, theme.text());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.border(true))
        .title(Span::styled(
            title,
            theme.fg(Token::Accent).add_modifier(Modifier::BOLD),
        ));
    let body = block.inner(area);
    block.render(area, buf);
    body
}

/// Draws `lines` into `body` from row `scroll` on (kept so the last page stays full).
pub fn scrolled(lines: &[Line<'static>], body: Rect, scroll: u16, buf: &mut Buffer) {
    let max = lines.len().saturating_sub(usize::from(body.height));
    let top = usize::from(scroll).min(max);
    for (i, line) in lines
        .iter()
        .skip(top)
        .take(usize::from(body.height))
        .enumerate()
    {
        buf.set_line(body.x, body.y + i as u16, line, body.width);
    }
}

/// Spinner frames, one per tick while work runs.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner's frame number `n`.
pub fn spinner(n: usize) -> &'static str {
    SPINNER[n % SPINNER.len()]
}

/// Duration as `850ms`, `2.4s` or `3m05s`.
pub fn format_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}

/// `950`, `12.3k`, `4.1M`.
pub fn compact(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1000..=999_999 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// `text` cut to `width` cells, ending in `…` when something was cut (so a cut line
/// says so instead of ending mid-word).
pub fn fit_width(text: &str, width: usize) -> String {
    if str_width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = str_width(c.encode_utf8(&mut [0; 4]));
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_width_marks_a_cut_and_counts_wide_characters() {
        assert_eq!(fit_width("open ID", 20), "open ID");
        assert_eq!(fit_width("open an earlier session", 10), "open an e…");
        assert_eq!(fit_width("日本語のテキスト", 7), "日本語…");
        assert_eq!(str_width(&fit_width("日本語のテキスト", 7)), 7);
        assert_eq!(fit_width("abc", 0), "");
    }
}
