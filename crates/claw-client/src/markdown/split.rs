//! Where a streaming markdown text can be cut so the part before the cut is final.

/// Finds where a growing markdown text can be cut so that the part before the cut
/// renders the same now as it will when the text is complete: after a blank line that
/// is outside any code fence. Scans each line once, however often it is called.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitScanner {
    scanned: usize,
    fence: Option<(char, usize)>,
    boundary: usize,
}

impl SplitScanner {
    /// The latest cut point in `src` (which only ever grows between calls).
    pub fn advance(&mut self, src: &str) -> usize {
        if self.scanned > src.len() || !src.is_char_boundary(self.scanned) {
            *self = SplitScanner::default();
        }
        while let Some(rel) = src[self.scanned..].find('\n') {
            let end = self.scanned + rel + 1;
            let line = &src[self.scanned..end - 1];
            self.scan_line(line, end);
            self.scanned = end;
        }
        self.boundary
    }

    fn scan_line(&mut self, line: &str, end: usize) {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim_start_matches(' ');
        let fence_char = body.chars().next().filter(|c| *c == '`' || *c == '~');
        if indent <= 3
            && let Some(ch) = fence_char
        {
            let run = body.chars().take_while(|c| *c == ch).count();
            if run >= 3 {
                match self.fence {
                    None => self.fence = Some((ch, run)),
                    Some((open, len))
                        if open == ch && run >= len && body[run..].trim().is_empty() =>
                    {
                        self.fence = None;
                    }
                    Some(_) => {}
                }
                return;
            }
        }
        if self.fence.is_none() && line.trim().is_empty() {
            self.boundary = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_point_stays_out_of_code_fences() {
        let mut s = SplitScanner::default();
        assert_eq!(s.advance("para one\n"), 0);
        assert_eq!(s.advance("para one\n\npara"), 10);
        let with_fence = "para one\n\n```\ncode\n\nmore\n";
        assert_eq!(s.advance(with_fence), 10);
        let closed = format!("{with_fence}```\n\nafter");
        assert_eq!(s.advance(&closed), closed.len() - "after".len());
    }
}
