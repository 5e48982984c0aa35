//! A fast, approximate Lua 5.1 scanner for the nesting bound: it knows
//! strings, long brackets, comments and the symbols that open, close or
//! chain expressions. full_moon's lexer is exact but costs as much as the
//! parse itself.

use full_moon::tokenizer::Symbol;

use super::{Lexeme, LexemeKind};

/// The significant lexemes of `source` (positions are approximate: only
/// the nesting check uses them, to place its single diagnostic).
pub(crate) fn lexemes(source: &str) -> Vec<Lexeme> {
    scan(source).0
}

/// A comment: where its `--` starts (1-based line, and column in
/// characters) and its text without `--` and without long brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Comment {
    pub line: usize,
    pub column: usize,
    /// The column in bytes, to order it among the lexemes.
    pub byte_column: usize,
    pub text: String,
}

/// The significant lexemes and the comments of `source`, in order.
pub(crate) fn scan(source: &str) -> (Vec<Lexeme>, Vec<Comment>) {
    let mut scanner = Scanner {
        bytes: source.as_bytes(),
        at: 0,
        line: 1,
        line_start: 0,
        out: Vec::new(),
        comments: Vec::new(),
    };
    scanner.run();
    (scanner.out, scanner.comments)
}

struct Scanner<'s> {
    bytes: &'s [u8],
    at: usize,
    line: usize,
    line_start: usize,
    out: Vec<Lexeme>,
    comments: Vec<Comment>,
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.at + ahead).copied().unwrap_or(0)
    }

    fn advance(&mut self, count: usize) {
        for _ in 0..count {
            if self.peek(0) == b'\n' {
                self.line += 1;
                self.line_start = self.at + 1;
            }
            if self.at < self.bytes.len() {
                self.at += 1;
            }
        }
    }

    fn push(&mut self, kind: LexemeKind, start_line: usize, start_column: usize) {
        self.out.push(Lexeme {
            kind,
            line: start_line,
            column: start_column,
            end_line: self.line,
            end_column: self.at - self.line_start + 1,
        });
    }

    fn run(&mut self) {
        while self.at < self.bytes.len() {
            let (line, column) = (self.line, self.at - self.line_start + 1);
            let byte = self.peek(0);
            let kind = match byte {
                b' ' | b'\t' | b'\r' | b'\n' => {
                    self.advance(1);
                    continue;
                }
                b'-' if self.peek(1) == b'-' => {
                    self.comment();
                    continue;
                }
                b'\'' | b'"' => {
                    self.quoted(byte);
                    LexemeKind::Literal
                }
                b'[' if self.long_bracket_level().is_some() => {
                    self.long_bracket();
                    LexemeKind::Literal
                }
                b'0'..=b'9' => {
                    self.number();
                    LexemeKind::Literal
                }
                b'.' if self.peek(1).is_ascii_digit() => {
                    self.number();
                    LexemeKind::Literal
                }
                b if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 => self.word(),
                _ => self.symbol(),
            };
            self.push(kind, line, column);
        }
    }

    fn comment(&mut self) {
        let line = self.line;
        let byte_column = self.at - self.line_start + 1;
        let column = String::from_utf8_lossy(&self.bytes[self.line_start..self.at])
            .chars()
            .count()
            + 1;
        self.advance(2);
        let (start, end) = if let Some(level) = (self.peek(0) == b'[')
            .then(|| self.long_bracket_level())
            .flatten()
        {
            let start = self.at + level + 2;
            self.long_bracket();
            // Without the closing bracket, when there is one.
            let end = if self
                .bytes
                .get(..self.at)
                .is_some_and(|before| before.ends_with(b"]"))
            {
                self.at.saturating_sub(level + 2).max(start)
            } else {
                self.at
            };
            (start, end)
        } else {
            let start = self.at;
            while self.at < self.bytes.len() && self.peek(0) != b'\n' {
                self.advance(1);
            }
            (start, self.at)
        };
        let text = self.bytes.get(start..end).unwrap_or_default();
        self.comments.push(Comment {
            line,
            column,
            byte_column,
            text: String::from_utf8_lossy(text).into_owned(),
        });
    }

    fn quoted(&mut self, quote: u8) {
        self.advance(1);
        while self.at < self.bytes.len() {
            match self.peek(0) {
                b'\\' => self.advance(2),
                b'\n' => return,
                b if b == quote => {
                    self.advance(1);
                    return;
                }
                _ => self.advance(1),
            }
        }
    }

    /// At `[`: the number of `=` of a long bracket `[==[`, if it is one.
    fn long_bracket_level(&self) -> Option<usize> {
        let equals = (1..).take_while(|&i| self.peek(i) == b'=').count();
        (self.peek(equals + 1) == b'[').then_some(equals)
    }

    fn long_bracket(&mut self) {
        let level = self.long_bracket_level().unwrap_or(0);
        self.advance(level + 2);
        while self.at < self.bytes.len() {
            if self.peek(0) == b']'
                && (1..=level).all(|i| self.peek(i) == b'=')
                && self.peek(level + 1) == b']'
            {
                self.advance(level + 2);
                return;
            }
            self.advance(1);
        }
    }

    fn number(&mut self) {
        while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'.' {
            let exponent = matches!(self.peek(0), b'e' | b'E');
            self.advance(1);
            if exponent && matches!(self.peek(0), b'+' | b'-') {
                self.advance(1);
            }
        }
    }

    fn word(&mut self) -> LexemeKind {
        let start = self.at;
        while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' || self.peek(0) >= 0x80 {
            self.advance(1);
        }
        let word = self.bytes.get(start..self.at).unwrap_or_default();
        let symbol = match word {
            b"and" => Symbol::And,
            b"break" => Symbol::Break,
            b"do" => Symbol::Do,
            b"else" => Symbol::Else,
            b"elseif" => Symbol::ElseIf,
            b"end" => Symbol::End,
            b"function" => Symbol::Function,
            b"if" => Symbol::If,
            b"in" => Symbol::In,
            b"local" => Symbol::Local,
            b"not" => Symbol::Not,
            b"or" => Symbol::Or,
            b"repeat" => Symbol::Repeat,
            b"return" => Symbol::Return,
            b"then" => Symbol::Then,
            b"until" => Symbol::Until,
            b"true" | b"false" | b"nil" => return LexemeKind::Literal,
            _ => return LexemeKind::Name(String::new()),
        };
        LexemeKind::Symbol(symbol)
    }

    fn symbol(&mut self) -> LexemeKind {
        let two = [self.peek(0), self.peek(1)];
        let (symbol, length) = match &two {
            b"==" => (Symbol::TwoEqual, 2),
            b"~=" => (Symbol::TildeEqual, 2),
            b"<=" => (Symbol::LessThanEqual, 2),
            b">=" => (Symbol::GreaterThanEqual, 2),
            b".." => (Symbol::TwoDots, 2),
            _ => match two[0] {
                b'(' => (Symbol::LeftParen, 1),
                b')' => (Symbol::RightParen, 1),
                b'[' => (Symbol::LeftBracket, 1),
                b']' => (Symbol::RightBracket, 1),
                b'{' => (Symbol::LeftBrace, 1),
                b'}' => (Symbol::RightBrace, 1),
                b'+' => (Symbol::Plus, 1),
                b'-' => (Symbol::Minus, 1),
                b'*' => (Symbol::Star, 1),
                b'/' => (Symbol::Slash, 1),
                b'%' => (Symbol::Percent, 1),
                b'^' => (Symbol::Caret, 1),
                b'#' => (Symbol::Hash, 1),
                b'<' => (Symbol::LessThan, 1),
                b'>' => (Symbol::GreaterThan, 1),
                b'=' => (Symbol::Equal, 1),
                b',' => (Symbol::Comma, 1),
                b';' => (Symbol::Semicolon, 1),
                _ => {
                    self.advance(1);
                    return LexemeKind::Other;
                }
            },
        };
        self.advance(length);
        LexemeKind::Symbol(symbol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_strings_and_comments() {
        let kinds: Vec<LexemeKind> =
            lexemes("local s = '(' .. \"[[\" --[==[ ( ]==] -- (\nreturn [[ ( ]]")
                .into_iter()
                .map(|lexeme| lexeme.kind)
                .collect();
        assert_eq!(
            kinds,
            [
                LexemeKind::Symbol(Symbol::Local),
                LexemeKind::Name(String::new()),
                LexemeKind::Symbol(Symbol::Equal),
                LexemeKind::Literal,
                LexemeKind::Symbol(Symbol::TwoDots),
                LexemeKind::Literal,
                LexemeKind::Symbol(Symbol::Return),
                LexemeKind::Literal,
            ]
        );
    }
}
