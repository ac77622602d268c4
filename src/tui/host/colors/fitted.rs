//! A backend that draws each cell in colours the terminal shows ([`Depth::fit_cell`]):
//! every front-end's terminal is made with it ([`crate::tui::host::terminal::terminal`]),
//! so none draws 24-bit colour on a terminal that did not say it has it.

use super::Depth;
use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use std::io::{self, Write};

/// `inner` drawing in the colours of `depth`.
pub struct Fitted<B> {
    inner: B,
    depth: Depth,
}

impl<B> Fitted<B> {
    /// `inner` drawing in the colours of `depth`.
    pub fn new(inner: B, depth: Depth) -> Self {
        Self { inner, depth }
    }
}

impl<B: Write> Write for Fitted<B> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<B: Backend> Backend for Fitted<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if self.depth == Depth::TrueColor {
            return self.inner.draw(content);
        }
        // Only the cells that changed since the last frame come here.
        let fitted: Vec<(u16, u16, Cell)> = content
            .map(|(x, y, cell)| (x, y, self.depth.fit_cell(cell)))
            .collect();
        self.inner
            .draw(fitted.iter().map(|(x, y, cell)| (*x, *y, cell)))
    }

    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Backend::flush(&mut self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::{Color, Style};
    use ratatui::text::Span;

    #[test]
    fn the_frame_reaches_the_terminal_in_its_colours() {
        let backend = Fitted::new(TestBackend::new(4, 1), Depth::Ansi);
        let mut term = Terminal::new(backend).unwrap();
        let completed = term
            .draw(|frame| {
                let span = Span::styled("hi", Style::new().fg(Color::Rgb(250, 5, 5)));
                frame.render_widget(span, frame.area());
            })
            .unwrap();
        // The app's own frame keeps the theme's colour: only what is sent changes.
        assert_eq!(completed.buffer[(0, 0)].fg, Color::Rgb(250, 5, 5));
        let drawn = term.backend().inner.buffer();
        assert_eq!(drawn[(0, 0)].fg, Color::LightRed);
        assert_eq!(drawn[(0, 0)].symbol(), "h");
    }
}
