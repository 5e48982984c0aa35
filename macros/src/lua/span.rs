//! Source positions: from full_moon nodes to `line:column` + underline width.

use full_moon::node::Node;
use full_moon::tokenizer::Position;

use super::diagnostic::Diagnostic;

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

    pub fn error(self, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.line, self.column, self.width, message).with_hint(hint)
    }

    pub fn note(self, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        Diagnostic::note(self.line, self.column, self.width, message).with_hint(hint)
    }
}

// Positions come from the node's tokens: the derived `Node::end_position`
// of `x[i]` stops before the closing bracket, and `Node::tokens` lists the
// brackets of a `ContainedSpan` before what they contain.
fn first_position(node: &impl Node) -> Option<Position> {
    node.tokens()
        .map(|token| token.token().start_position())
        .min_by_key(|position| position.bytes())
}

fn last_position(node: &impl Node) -> Option<Position> {
    node.tokens()
        .map(|token| token.token().end_position())
        .max_by_key(|position| position.bytes())
}

/// The script text, to turn positions into spans and spans into snippets.
#[derive(Debug)]
pub(crate) struct SourceMap<'a> {
    source: &'a str,
}

/// Snippets longer than this are described instead of quoted.
const MAX_SNIPPET_CHARS: usize = 40;

impl<'a> SourceMap<'a> {
    pub fn new(source: &'a str) -> Self {
        Self { source }
    }

    /// The span of a whole node; the top of the file if it has no position.
    pub fn of(&self, node: &impl Node) -> Span {
        match (first_position(node), last_position(node)) {
            (Some(start), Some(end)) => self.between(start, end),
            _ => Span::TOP,
        }
    }

    /// The span from the start of `first` to the end of `last`.
    pub fn joined(&self, first: &impl Node, last: &impl Node) -> Span {
        match (first_position(first), last_position(last)) {
            (Some(start), Some(end)) => self.between(start, end),
            _ => self.of(first),
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
        self.source
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or_default()
    }

    /// The source text between two byte offsets.
    pub fn text(&self, start: usize, end: usize) -> Option<&'a str> {
        self.source.get(start..end)
    }

    /// The source text under `span`, if it is short enough to quote.
    pub fn snippet(&self, span: Span) -> Option<String> {
        let text: String = self
            .line_text(span.line)
            .chars()
            .skip(span.column.saturating_sub(1))
            .take(span.width)
            .collect();
        (!text.is_empty() && text.chars().count() <= MAX_SNIPPET_CHARS).then_some(text)
    }
}
