//! A small, best-effort shell lexer for the deny rules.
//!
//! It splits a script into simple commands (at `;`, `&&`, `||`, `|`, `&`, newlines and
//! parentheses), removes quoting, and collects the text the shell would run elsewhere:
//! `$(...)`, backticks, `<(...)`/`>(...)` and here-document bodies. It does not expand
//! anything; the rules look at words as written.

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
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
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
                    let inner = self.read_backticks();
                    self.push_str(&format!("`{inner}`"));
                    self.out.nested.push(inner);
                }
                '$' => self.read_dollar(),
                _ => self.push_char(c),
            }
        }
        self.end_segment();
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
        match self.redirect.take() {
            None => self.seg.words.push(word),
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
        }
    }

    fn redirect_out(&mut self) {
        if self.peek(0) == Some('(') {
            self.pos += 1;
            let inner = self.read_balanced();
            self.out.nested.push(inner);
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
            let inner = self.read_balanced();
            self.out.nested.push(inner);
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
                    let inner = self.read_backticks();
                    self.word.push_str(&format!("`{inner}`"));
                    self.out.nested.push(inner);
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
                let inner = self.read_balanced();
                self.push_str(&format!("$({inner})"));
                self.out.nested.push(inner);
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
            self.out.nested.push(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> Vec<Vec<String>> {
        parse(script)
            .segments
            .into_iter()
            .map(|s| s.words)
            .collect()
    }

    #[test]
    fn splits_chains_and_removes_quotes() {
        assert_eq!(
            words("a 'b c' && d \"e f\"|g;h || i & j"),
            vec![
                vec!["a", "b c"],
                vec!["d", "e f"],
                vec!["g"],
                vec!["h"],
                vec!["i"],
                vec!["j"]
            ]
        );
    }

    #[test]
    fn redirections_are_not_words() {
        let parsed = parse("echo hi 2>&1 >> out.txt < in &> all 1>/dev/sda");
        assert_eq!(parsed.segments[0].words, vec!["echo", "hi"]);
        assert_eq!(
            parsed.segments[0].out_targets,
            vec!["out.txt", "all", "/dev/sda"]
        );
    }

    #[test]
    fn collects_substitutions_and_heredocs() {
        let parsed =
            parse("echo $(rm -rf /) `reboot` <(mkfs x)\ncat <<'EOF'\nshutdown now\nEOF\nls");
        assert_eq!(
            parsed.nested,
            vec!["rm -rf /", "reboot", "mkfs x", "shutdown now\n"]
        );
        let last = parsed.segments.last().map(|s| s.words.clone());
        assert_eq!(last, Some(vec!["ls".to_owned()]));
    }

    #[test]
    fn comments_and_escapes() {
        assert_eq!(words("r\\m -rf x # rm -rf /"), vec![vec!["rm", "-rf", "x"]]);
        assert_eq!(words("echo $'a\\'b'"), vec![vec!["echo", "a'b"]]);
    }
}
