//! A small, best-effort shell lexer for the deny rules.
//!
//! It splits a script into simple commands (at `;`, `&&`, `||`, `|`, `&`, newlines and
//! parentheses), removes quoting, and collects the text the shell would run elsewhere:
//! `$(...)`, backticks, `<(...)`/`>(...)` and here-document bodies. It does not expand
//! anything; the rules look at words as written.

mod places;
#[cfg(test)]
mod tests;

pub use places::replace_words;

/// One simple command as written: its words (quotes removed) and its output redirections.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Segment {
    /// Words, quotes removed, redirections left out.
    pub words: Vec<String>,
    /// Targets of `>`, `>>`, `>|`, `&>`, `<>` redirections.
    pub out_targets: Vec<String>,
}

/// A script split into simple commands, plus the nested scripts found inside it.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The simple commands, in order.
    pub segments: Vec<Segment>,
    /// Command and process substitutions and here-document bodies, to check as scripts.
    pub nested: Vec<String>,
    /// Where each of `nested` is in the script (its first character), when it is written
    /// there as is (not a here-document, not backticks with escapes).
    pub nested_at: Vec<Option<usize>>,
    /// Every word of `segments` (not redirection targets), in order, with the characters
    /// it was written as: `start..end`, in characters of the script, quotes included.
    pub spans: Vec<(String, std::ops::Range<usize>)>,
}

/// What the next word means after a redirection operator.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Redirect {
    /// `>`, `>>`, `>|`, `&>`, `<>`: a file written to.
    Out,
    /// `>&`: a file descriptor, or a file when it is not a number.
    DupOut,
    /// `<`, `<&`, `<<<`: read from; ignored.
    In,
    /// `<<` (strip tabs when true): the here-document delimiter.
    HereDoc(bool),
}

/// Splits `script` into simple commands.
pub(crate) fn parse(script: &str) -> Parsed {
    let mut lexer = Lexer {
        chars: script.chars().collect(),
        pos: 0,
        out: Parsed::default(),
        seg: Segment::default(),
        word: String::new(),
        in_word: false,
        redirect: None,
        heredocs: Vec::new(),
        word_at: None,
    };
    lexer.run();
    lexer.out
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    out: Parsed,
    seg: Segment,
    word: String,
    in_word: bool,
    redirect: Option<Redirect>,
    /// Here-document delimiters waiting for the end of the line: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
    /// Where the word being read was written: `start..end` in characters.
    word_at: Option<std::ops::Range<usize>>,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let at = self.pos;
            self.step(c);
            if self.in_word {
                let start = self.word_at.as_ref().map_or(at, |r| r.start);
                self.word_at = Some(start..self.pos);
            }
        }
        self.end_segment();
    }

    /// Reads from the character `c` on.
    fn step(&mut self, c: char) {
        {
            self.pos += 1;
            match c {
                ' ' | '\t' | '\r' => self.finish_word(),
                '\n' => {
                    self.end_segment();
                    self.read_heredoc_bodies();
                }
                ';' | '(' | ')' => self.end_segment(),
                '&' => match self.peek(0) {
                    Some('>') => {
                        self.finish_word();
                        self.pos += if self.peek(1) == Some('>') { 2 } else { 1 };
                        self.redirect = Some(Redirect::Out);
                    }
                    Some('&') => {
                        self.pos += 1;
                        self.end_segment();
                    }
                    _ => self.end_segment(),
                },
                '|' => {
                    if matches!(self.peek(0), Some('|' | '&')) {
                        self.pos += 1;
                    }
                    self.end_segment();
                }
                '>' => self.redirect_out(),
                '<' => self.redirect_in(),
                '#' if !self.in_word => self.skip_comment(),
                '\\' => match self.peek(0) {
                    Some('\n') => self.pos += 1,
                    Some(next) => {
                        self.pos += 1;
                        self.push_char(next);
                    }
                    None => self.push_char('\\'),
                },
                '\'' => {
                    let text = self.read_until_quote();
                    self.push_str(&text);
                }
                '"' => self.read_double_quoted(),
                '`' => {
                    let (inner, at) = self.backticks();
                    self.push_str(&format!("`{inner}`"));
                    self.push_nested(inner, at);
                }
                '$' => self.read_dollar(),
                _ => self.push_char(c),
            }
        }
    }

    fn push_char(&mut self, c: char) {
        self.word.push(c);
        self.in_word = true;
    }

    fn push_str(&mut self, s: &str) {
        self.word.push_str(s);
        self.in_word = true;
    }

    fn finish_word(&mut self) {
        if !self.in_word {
            return;
        }
        let word = std::mem::take(&mut self.word);
        self.in_word = false;
        let at = self.word_at.take().unwrap_or(self.pos..self.pos);
        match self.redirect.take() {
            None => {
                self.out.spans.push((word.clone(), at));
                self.seg.words.push(word);
            }
            Some(Redirect::Out) => self.seg.out_targets.push(word),
            Some(Redirect::DupOut) => {
                if word != "-" && !word.chars().all(|c| c.is_ascii_digit()) {
                    self.seg.out_targets.push(word);
                }
            }
            Some(Redirect::In) => {}
            Some(Redirect::HereDoc(strip_tabs)) => self.heredocs.push((word, strip_tabs)),
        }
    }

    fn end_segment(&mut self) {
        self.finish_word();
        self.redirect = None;
        let seg = std::mem::take(&mut self.seg);
        if !seg.words.is_empty() || !seg.out_targets.is_empty() {
            self.out.segments.push(seg);
        }
    }

    /// Drops a word made only of digits: it is the file descriptor of a redirection.
    fn drop_fd_number(&mut self) {
        if self.in_word && !self.word.is_empty() && self.word.chars().all(|c| c.is_ascii_digit()) {
            self.word.clear();
            self.in_word = false;
            self.word_at = None;
        }
    }

    fn redirect_out(&mut self) {
        if self.peek(0) == Some('(') {
            self.pos += 1;
            let at = self.pos;
            let inner = self.read_balanced();
            self.push_nested(inner, Some(at));
            return;
        }
        self.drop_fd_number();
        self.finish_word();
        let kind = match self.peek(0) {
            Some('>' | '|') => {
                self.pos += 1;
                Redirect::Out
            }
            Some('&') => {
                self.pos += 1;
                Redirect::DupOut
            }
            _ => Redirect::Out,
        };
        self.redirect = Some(kind);
    }

    fn redirect_in(&mut self) {
        if self.peek(0) == Some('(') {
            self.pos += 1;
            let at = self.pos;
            let inner = self.read_balanced();
            self.push_nested(inner, Some(at));
            return;
        }
        self.drop_fd_number();
        self.finish_word();
        let kind = match (self.peek(0), self.peek(1)) {
            (Some('<'), Some('<')) => {
                self.pos += 2;
                Redirect::In
            }
            (Some('<'), Some('-')) => {
                self.pos += 2;
                Redirect::HereDoc(true)
            }
            (Some('<'), _) => {
                self.pos += 1;
                Redirect::HereDoc(false)
            }
            (Some('>'), _) => {
                self.pos += 1;
                Redirect::Out
            }
            (Some('&'), _) => {
                self.pos += 1;
                Redirect::In
            }
            _ => Redirect::In,
        };
        self.redirect = Some(kind);
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// After the opening `'`: the text up to the closing one.
    fn read_until_quote(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                break;
            }
            text.push(c);
        }
        text
    }

    /// After the opening `"`: appends the unquoted text, collecting substitutions.
    fn read_double_quoted(&mut self) {
        self.in_word = true;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '"' => return,
                '\\' => match self.peek(0) {
                    Some(next @ ('"' | '\\' | '$' | '`')) => {
                        self.pos += 1;
                        self.word.push(next);
                    }
                    Some('\n') => self.pos += 1,
                    _ => self.word.push('\\'),
                },
                '`' => {
                    let (inner, at) = self.backticks();
                    self.word.push_str(&format!("`{inner}`"));
                    self.push_nested(inner, at);
                }
                '$' => self.read_dollar(),
                _ => self.word.push(c),
            }
        }
    }

    /// After a `$`: a substitution, `${...}`, `$'...'`, or a plain `$`.
    fn read_dollar(&mut self) {
        match self.peek(0) {
            Some('(') => {
                self.pos += 1;
                let at = self.pos;
                let inner = self.read_balanced();
                self.push_str(&format!("$({inner})"));
                self.push_nested(inner, Some(at));
            }
            Some('{') => {
                self.pos += 1;
                let mut text = String::from("${");
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    text.push(c);
                    if c == '}' {
                        break;
                    }
                }
                self.push_str(&text);
            }
            Some('\'') => {
                self.pos += 1;
                let mut text = String::new();
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    match c {
                        '\'' => break,
                        '\\' => {
                            if let Some(next) = self.peek(0) {
                                self.pos += 1;
                                match next {
                                    '\'' | '\\' => text.push(next),
                                    _ => {
                                        text.push('\\');
                                        text.push(next);
                                    }
                                }
                            }
                        }
                        _ => text.push(c),
                    }
                }
                self.push_str(&text);
            }
            _ => self.push_char('$'),
        }
    }

    fn push_nested(&mut self, script: String, at: Option<usize>) {
        self.out.nested.push(script);
        self.out.nested_at.push(at);
    }

    /// After the opening `` ` ``: the script up to the closing one, and where it is in
    /// the script when it is written there as is (no escapes).
    fn backticks(&mut self) -> (String, Option<usize>) {
        let start = self.pos;
        let inner = self.read_backticks();
        let closed = self.pos > start && self.chars.get(self.pos - 1) == Some(&'`');
        let end = if closed { self.pos - 1 } else { self.pos };
        let raw: String = self.chars[start..end.min(self.chars.len())]
            .iter()
            .collect();
        (inner.clone(), (raw == inner).then_some(start))
    }

    /// After the opening `` ` ``: the script up to the closing one.
    fn read_backticks(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(next) = self.peek(0) {
                        self.pos += 1;
                        if !matches!(next, '`' | '\\' | '$') {
                            text.push('\\');
                        }
                        text.push(next);
                    }
                }
                _ => text.push(c),
            }
        }
        text
    }

    /// After an opening `(`: the text up to the matching `)`, skipping quoted parts.
    fn read_balanced(&mut self) -> String {
        let start = self.pos;
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\\' => self.pos += 1,
                '\'' => {
                    self.read_until_quote();
                }
                '"' => {
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        match q {
                            '\\' => self.pos += 1,
                            '"' => break,
                            _ => {}
                        }
                    }
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        let end = self.pos - 1;
                        return self.chars[start..end].iter().collect();
                    }
                }
                _ => {}
            }
        }
        let end = self.pos.min(self.chars.len());
        self.chars[start..end].iter().collect()
    }

    /// At the start of a line: the bodies of the here-documents opened on the last one.
    fn read_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let mut line = String::new();
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let compared = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if compared == delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            self.push_nested(body, None);
        }
    }
}
