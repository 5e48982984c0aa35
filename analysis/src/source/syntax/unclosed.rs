//! Which construct a script fails to close, found the way Lua's own parser
//! reports it: "`end` expected (to close `if` at line 14)". full_moon says
//! a block is unclosed, but not which one or where it started, and places
//! the error inconsistently (at the opener, at the last statement or past
//! the end of the file).

use full_moon::tokenizer::Symbol;

use super::{Lexeme, LexemeKind};
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;

/// The innermost construct left open where Lua gives up, and where it was
/// opened (`line`, `column`), so that parser errors after it, which only
/// repeat the problem, can be dropped.
#[derive(Debug)]
pub(crate) struct Unclosed {
    pub diagnostic: Diagnostic,
    pub opened_at: (usize, usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Construct {
    Function,
    If,
    For,
    While,
    Do,
    Repeat,
    Parenthesis,
    Bracket,
    Brace,
}

impl Construct {
    fn opening(self) -> &'static str {
        match self {
            Construct::Function => "function",
            Construct::If => "if",
            Construct::For => "for",
            Construct::While => "while",
            Construct::Do => "do",
            Construct::Repeat => "repeat",
            Construct::Parenthesis => "(",
            Construct::Bracket => "[",
            Construct::Brace => "{",
        }
    }

    fn closing(self) -> &'static str {
        match self {
            Construct::Repeat => "until",
            Construct::Parenthesis => ")",
            Construct::Bracket => "]",
            Construct::Brace => "}",
            _ => "end",
        }
    }

    fn is_bracket(self) -> bool {
        matches!(
            self,
            Construct::Parenthesis | Construct::Bracket | Construct::Brace
        )
    }

    fn hint(self) -> String {
        match self {
            Construct::Repeat => "a `repeat` block ends with `until <condition>`".to_string(),
            construct if construct.is_bracket() => {
                format!("add the missing `{}`", construct.closing())
            }
            _ => "add the missing `end`; when blocks are nested, the one missing may belong to an inner block".to_string(),
        }
    }
}

#[derive(Debug)]
struct Open {
    construct: Construct,
    line: usize,
    column: usize,
    /// A `for` or `while` whose `do` has not been seen yet.
    awaiting_do: bool,
}

/// What one token does to the stack of open constructs.
enum Step {
    Continue,
    /// The token cannot close or continue the innermost open construct.
    Unclosed,
    /// Some other mistake, which the parser's own message describes.
    Unknown,
}

/// Walks the tokens keeping the stack of open blocks and brackets; `None`
/// when they are balanced or the mistake is of another kind.
pub(crate) fn find(lexemes: &[Lexeme]) -> Option<Unclosed> {
    let indents = Indents::of(lexemes);
    let mut open: Vec<Open> = Vec::new();
    // The block that the indentation says lacks its `end`: the first one
    // an `end` closed although it stands left of the block's own line, in
    // line with an enclosing block.
    let mut suspect: Option<(Construct, usize)> = None;
    for (index, lexeme) in lexemes.iter().enumerate() {
        if suspect.is_none() {
            suspect = indents.misplaced_end(&open, lexemes, index);
        }
        match step(&mut open, lexeme) {
            Step::Continue => {}
            Step::Unknown => return None,
            Step::Unclosed => {
                let innermost = open.last()?;
                let width = lexeme.end_column.saturating_sub(lexeme.column);
                let width = if lexeme.end_line == lexeme.line {
                    width
                } else {
                    1
                };
                let message = expected(innermost, "", suspect);
                let diagnostic =
                    Diagnostic::error(Code::Syntax, lexeme.line, lexeme.column, width, message)
                        .with_help(innermost.construct.hint());
                return Some(Unclosed {
                    diagnostic,
                    opened_at: (innermost.line, innermost.column),
                });
            }
        }
    }
    let innermost = open.last()?;
    if innermost.awaiting_do {
        return None;
    }
    // Just after the last token: where the closing word was expected.
    let (line, column) = lexemes
        .iter()
        .rev()
        .find(|lexeme| lexeme.kind != LexemeKind::Other)
        .map_or((1, 1), |last| (last.end_line, last.end_column));
    let diagnostic = Diagnostic::error(
        Code::Syntax,
        line,
        column,
        1,
        expected(innermost, " at the end of the file", suspect),
    )
    .with_help(innermost.construct.hint());
    Some(Unclosed {
        diagnostic,
        opened_at: (innermost.line, innermost.column),
    })
}

fn expected(innermost: &Open, place: &str, suspect: Option<(Construct, usize)>) -> String {
    let construct = innermost.construct;
    let lua = format!(
        "syntax error: `{}` expected (to close `{}` at line {}){place}",
        construct.closing(),
        construct.opening(),
        innermost.line
    );
    match suspect {
        Some((block, line)) if line != innermost.line => format!(
            "{lua}; by the indentation, the `{}` missing is that of `{}` at line {line}",
            block.closing(),
            block.opening()
        ),
        _ => lua,
    }
}

/// How far each line is indented: the column of its first token.
struct Indents(std::collections::HashMap<usize, usize>);

impl Indents {
    fn of(lexemes: &[Lexeme]) -> Self {
        let mut first = std::collections::HashMap::new();
        for lexeme in lexemes {
            first.entry(lexeme.line).or_insert(lexeme.column);
        }
        Self(first)
    }

    /// When `lexemes[index]` is an `end` (or `until`) first on its line,
    /// left of the line that opened the innermost block and in line with
    /// the line of an enclosing one, that innermost block is the one whose
    /// own closing word is missing.
    fn misplaced_end(
        &self,
        open: &[Open],
        lexemes: &[Lexeme],
        index: usize,
    ) -> Option<(Construct, usize)> {
        let lexeme = lexemes.get(index)?;
        let closes_block = matches!(lexeme.kind, LexemeKind::Symbol(Symbol::End | Symbol::Until));
        let first_on_line = index == 0
            || lexemes
                .get(index - 1)
                .is_some_and(|previous| previous.end_line < lexeme.line);
        if !closes_block || !first_on_line {
            return None;
        }
        let (innermost, enclosing) = open.split_last()?;
        let inner_indent = *self.0.get(&innermost.line)?;
        let aligned = enclosing.iter().any(|block| {
            !block.construct.is_bracket() && self.0.get(&block.line) == Some(&lexeme.column)
        });
        (lexeme.column < inner_indent && aligned && !innermost.construct.is_bracket())
            .then_some((innermost.construct, innermost.line))
    }
}

fn step(open: &mut Vec<Open>, lexeme: &Lexeme) -> Step {
    let LexemeKind::Symbol(symbol) = lexeme.kind else {
        return Step::Continue;
    };
    let top = open.last().map(|open| (open.construct, open.awaiting_do));
    let push = |open: &mut Vec<Open>, construct: Construct| {
        open.push(Open {
            construct,
            line: lexeme.line,
            column: lexeme.column,
            awaiting_do: matches!(construct, Construct::For | Construct::While),
        });
        Step::Continue
    };
    match symbol {
        Symbol::Function => push(open, Construct::Function),
        Symbol::If => push(open, Construct::If),
        Symbol::For => push(open, Construct::For),
        Symbol::While => push(open, Construct::While),
        Symbol::Repeat => push(open, Construct::Repeat),
        Symbol::LeftParen => push(open, Construct::Parenthesis),
        Symbol::LeftBracket => push(open, Construct::Bracket),
        Symbol::LeftBrace => push(open, Construct::Brace),
        Symbol::Do => match top {
            Some((_, true)) => {
                if let Some(innermost) = open.last_mut() {
                    innermost.awaiting_do = false;
                }
                Step::Continue
            }
            Some((construct, _)) if construct.is_bracket() => Step::Unclosed,
            _ => push(open, Construct::Do),
        },
        Symbol::Then => match top {
            Some((Construct::If, _)) => Step::Continue,
            Some((construct, _)) if construct.is_bracket() => Step::Unclosed,
            _ => Step::Unknown,
        },
        Symbol::Else | Symbol::ElseIf => match top {
            Some((Construct::If, _)) => Step::Continue,
            Some((_, true)) | None => Step::Unknown,
            Some(_) => Step::Unclosed,
        },
        Symbol::End => close(open, top, |construct| {
            matches!(
                construct,
                Construct::Function
                    | Construct::If
                    | Construct::For
                    | Construct::While
                    | Construct::Do
            )
        }),
        Symbol::Until => close(open, top, |construct| construct == Construct::Repeat),
        Symbol::RightParen => close(open, top, |construct| construct == Construct::Parenthesis),
        Symbol::RightBracket => close(open, top, |construct| construct == Construct::Bracket),
        Symbol::RightBrace => close(open, top, |construct| construct == Construct::Brace),
        _ => Step::Continue,
    }
}

/// A closing token: it closes the innermost construct if it is the right
/// one; otherwise that construct is what Lua reports as unclosed.
fn close(
    open: &mut Vec<Open>,
    top: Option<(Construct, bool)>,
    closes: impl Fn(Construct) -> bool,
) -> Step {
    match top {
        // A stray closing token, or a loop missing its `do`.
        None | Some((_, true)) => Step::Unknown,
        Some((construct, false)) if closes(construct) => {
            open.pop();
            Step::Continue
        }
        Some(_) => Step::Unclosed,
    }
}
