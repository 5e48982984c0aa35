//! Source positions: from full_moon nodes to `line:column` + underline width.

use full_moon::ast::{Call, Expression, FunctionArgs, Index, Prefix, Suffix, Var};
use full_moon::tokenizer::{Position, TokenReference};

use crate::source::diagnostic::{Code, Diagnostic};

/// A 1-based `line:column` (in characters) with the number of characters to
/// underline, plus the byte offset that identifies the position uniquely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub line: usize,
    pub column: usize,
    pub width: usize,
    pub offset: usize,
}

impl Span {
    /// The top of the file, for findings that have no place in the source.
    pub const TOP: Span = Span {
        line: 1,
        column: 1,
        width: 1,
        offset: 0,
    };

    /// An error of class `code` here, with what to do about it.
    pub fn error(
        self,
        code: Code,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::error(code, self.line, self.column, self.width, message).with_help(help)
    }

    /// A warning of class `code` here, with what to do about it.
    pub fn warning(
        self,
        code: Code,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::warning(code, self.line, self.column, self.width, message).with_help(help)
    }
}

// Positions are computed here from the tokens that start and end each
// construct. full_moon's derived `Node::start_position`/`end_position`
// compute both ends of every child at every level (exponential in the
// nesting), and the derived end of `x[i]` stops before the `]`.

fn token_start(token: &TokenReference) -> Option<Position> {
    Some(token.token().start_position())
}

fn token_end(token: &TokenReference) -> Option<Position> {
    Some(token.token().end_position())
}

pub(crate) fn expression_start(expression: &Expression) -> Option<Position> {
    match expression {
        Expression::BinaryOperator { lhs, .. } => expression_start(lhs),
        Expression::UnaryOperator { unop, .. } => token_start(unop.token()),
        Expression::Parentheses { contained, .. } => token_start(contained.tokens().0),
        Expression::Function(function) => token_start(function.function_token()),
        Expression::FunctionCall(call) => prefix_start(call.prefix()),
        Expression::TableConstructor(table) => token_start(table.braces().tokens().0),
        Expression::Number(token) | Expression::String(token) | Expression::Symbol(token) => {
            token_start(token)
        }
        Expression::Var(Var::Name(token)) => token_start(token),
        Expression::Var(Var::Expression(variable)) => prefix_start(variable.prefix()),
        _ => None,
    }
}

pub(crate) fn expression_end(expression: &Expression) -> Option<Position> {
    match expression {
        Expression::BinaryOperator { rhs, .. } => expression_end(rhs),
        Expression::UnaryOperator { expression, .. } => expression_end(expression),
        Expression::Parentheses { contained, .. } => token_end(contained.tokens().1),
        Expression::Function(function) => token_end(function.body().end_token()),
        Expression::FunctionCall(call) => call.suffixes().last().and_then(suffix_end),
        Expression::TableConstructor(table) => token_end(table.braces().tokens().1),
        Expression::Number(token) | Expression::String(token) | Expression::Symbol(token) => {
            token_end(token)
        }
        Expression::Var(Var::Name(token)) => token_end(token),
        Expression::Var(Var::Expression(variable)) => {
            variable.suffixes().last().and_then(suffix_end)
        }
        _ => None,
    }
}

pub(crate) fn prefix_start(prefix: &Prefix) -> Option<Position> {
    match prefix {
        Prefix::Name(token) => token_start(token),
        Prefix::Expression(expression) => expression_start(expression),
        _ => None,
    }
}

pub(crate) fn suffix_end(suffix: &Suffix) -> Option<Position> {
    match suffix {
        Suffix::Index(Index::Brackets { brackets, .. }) => token_end(brackets.tokens().1),
        Suffix::Index(Index::Dot { name, .. }) => token_end(name),
        Suffix::Call(Call::AnonymousCall(arguments)) => arguments_end(arguments),
        Suffix::Call(Call::MethodCall(method)) => arguments_end(method.args()),
        _ => None,
    }
}

fn arguments_end(arguments: &FunctionArgs) -> Option<Position> {
    match arguments {
        FunctionArgs::Parentheses { parentheses, .. } => token_end(parentheses.tokens().1),
        FunctionArgs::String(token) => token_end(token),
        FunctionArgs::TableConstructor(table) => token_end(table.braces().tokens().1),
        _ => None,
    }
}

/// The script text, to turn positions into spans and spans into snippets.
#[derive(Debug)]
pub(crate) struct SourceMap<'a> {
    source: &'a str,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
}

/// Snippets longer than this are described instead of quoted.
const MAX_SNIPPET_CHARS: usize = 40;

impl<'a> SourceMap<'a> {
    pub fn new(source: &'a str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Self {
            source,
            line_starts,
        }
    }

    /// The span of one token.
    pub fn token(&self, token: &TokenReference) -> Span {
        self.span_between(token_start(token), token_end(token))
    }

    /// The span of an expression.
    pub fn expression(&self, expression: &Expression) -> Span {
        self.span_between(expression_start(expression), expression_end(expression))
    }

    /// The span from the start of `first` to the end of `last`.
    pub fn tokens(&self, first: &TokenReference, last: &TokenReference) -> Span {
        self.span_between(token_start(first), token_end(last))
    }

    /// The span from the start of `prefix` to the end of one of its suffixes.
    pub fn chain(&self, prefix: &Prefix, suffix: &Suffix) -> Span {
        self.span_between(prefix_start(prefix), suffix_end(suffix))
    }

    pub fn span_between(&self, start: Option<Position>, end: Option<Position>) -> Span {
        match (start, end) {
            (Some(start), Some(end)) => self.between(start, end),
            (Some(start), None) => self.between(start, start),
            _ => Span::TOP,
        }
    }

    /// The span of `chars` characters from the byte `offset` (where a
    /// declaration's name starts), on its line.
    pub fn at_offset(&self, offset: usize, chars: usize) -> Span {
        let index = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1);
        let start = self.line_starts.get(index).copied().unwrap_or(0);
        let column = self
            .source
            .get(start..offset)
            .map_or(1, |text| text.chars().count() + 1);
        Span {
            line: index + 1,
            column,
            width: chars.max(1),
            offset,
        }
    }

    /// A span from two positions; a multi-line range underlines the rest
    /// of its first line.
    pub fn between(&self, start: Position, end: Position) -> Span {
        let width = if end.line() == start.line() {
            end.character().saturating_sub(start.character())
        } else {
            self.line_text(start.line())
                .chars()
                .count()
                .saturating_sub(start.character().saturating_sub(1))
        };
        Span {
            line: start.line().max(1),
            column: start.character().max(1),
            width: width.max(1),
            offset: start.bytes(),
        }
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &'a str {
        let index = line.saturating_sub(1);
        let start = self.line_starts.get(index).copied();
        let end = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.source.len());
        start
            .and_then(|start| self.source.get(start..end))
            .map(|text| text.trim_end_matches(['\n', '\r']))
            .unwrap_or_default()
    }

    /// The source text between two byte offsets.
    pub fn text(&self, start: usize, end: usize) -> Option<&'a str> {
        self.source.get(start..end)
    }

    /// The source text under `span`, if it is short enough to quote.
    pub fn snippet(&self, span: Span) -> Option<String> {
        self.snippet_up_to(span, MAX_SNIPPET_CHARS)
    }

    /// The text under `span` when it is at most `max` characters long.
    pub fn snippet_up_to(&self, span: Span, max: usize) -> Option<String> {
        let text: String = self
            .line_text(span.line)
            .chars()
            .skip(span.column.saturating_sub(1))
            .take(span.width)
            .collect();
        (!text.is_empty() && text.chars().count() <= max).then_some(text)
    }
}
