//! Parsing as Lua 5.1, with errors that explain Lua 5.2+ syntax.
//!
//! A token pre-scan runs before the parser: it bounds how deeply the source
//! nests (the parser, the analysis and dropping the tree all recurse), and
//! recognises constructs of later Lua versions so their errors can say what
//! to write instead.

use std::collections::BTreeSet;

use full_moon::LuaVersion;
use full_moon::ast::Ast;
use full_moon::tokenizer::{Lexer, LexerResult, Symbol, Token, TokenType, TokenizerErrorType};

use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;

pub(crate) mod quick_scan;
mod unclosed;

/// Lua 5.1 refuses chunks nesting more than 200 "C levels" (LUAI_MAXCCALLS);
/// the estimate below counts at least as many levels as Lua does.
pub(crate) const MAX_NESTING: usize = 200;

/// The source as the parser sees it, with its nesting measured once: the
/// depth decides where the parse may run (see `analyze`), and a script
/// nested too deeply is refused before the parser recurses into it.
pub(crate) struct Prepared {
    lexable: String,
    depth: usize,
    too_deep: Option<Diagnostic>,
}

impl Prepared {
    pub(crate) fn new(source: &str) -> Self {
        let lexable = lexable(source);
        let lexemes = quick_scan::lexemes(&lexable);
        let (depth, too_deep) = deepest(&lexemes);
        let too_deep = too_deep.map(nesting_error);
        Self {
            lexable,
            depth,
            too_deep,
        }
    }

    /// How deeply the source nests blocks, brackets and operator chains (an
    /// over-estimate of the parser's recursion), capped just above
    /// [`MAX_NESTING`].
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The parsed chunk, or every syntax error found.
    pub(crate) fn parse(&self) -> Result<Ast, Vec<Diagnostic>> {
        match &self.too_deep {
            Some(too_deep) => Err(vec![too_deep.clone()]),
            None => parse_lexable(&self.lexable),
        }
    }
}

/// `source` as full_moon's lexer can take it, every position kept: its
/// lexer panics on a backtick (a string quote only in dialects not compiled
/// in), so that becomes `$`, as invalid in Lua 5.1; and a shebang line is
/// blanked. String literals are read back from the original source.
pub(crate) fn lexable(source: &str) -> String {
    let mut lexable = source.replace('`', "$");
    blank_shebang(&mut lexable);
    lexable
}

fn parse_lexable(source: &str) -> Result<Ast, Vec<Diagnostic>> {
    let parsed = full_moon::parse_fallible(source, LuaVersion::lua51());
    if parsed.errors().is_empty() {
        return Ok(parsed.into_ast());
    }
    let lexemes = tokenize(source);
    let newer_syntax = newer_lua_syntax(&lexemes);
    let explained_lines: BTreeSet<usize> = newer_syntax.iter().map(|d| d.line).collect();
    let mut seen_lines = explained_lines.clone();
    let mut diagnostics = newer_syntax;
    let unclosed = unclosed::find(&lexemes);
    for error in parsed.errors() {
        let (start, end) = error.range();
        // Past the opening of the construct left unclosed, the parser's
        // errors describe that same mistake, less precisely.
        let after_unclosed = unclosed
            .as_ref()
            .is_some_and(|unclosed| (start.line(), start.character()) >= unclosed.opened_at);
        if after_unclosed || !seen_lines.insert(start.line()) {
            // One error per line: the parser's recovery produces follow-up
            // errors that only repeat the first one.
            continue;
        }
        let width = if end.line() == start.line() {
            end.character().saturating_sub(start.character())
        } else {
            1
        };
        diagnostics.push(
            Diagnostic::error(
                Code::Syntax,
                start.line().max(1),
                start.character().max(1),
                width,
                format!("syntax error: {}", clean_message(&error.error_message()))
                    .replace("unexpected character $", "unexpected character"),
            )
            .with_help("Redis compiles scripts with Lua 5.1 and would refuse this one"),
        );
    }
    diagnostics.extend(unclosed.map(|unclosed| unclosed.diagnostic));
    Err(diagnostics)
}

/// Redis strips the `#!lua …` line before compiling, so the parser must
/// not see it either; spaces keep every position after it. (full_moon also panics
/// on a shebang followed only by an unterminated `--[[` comment.)
fn blank_shebang(source: &mut String) {
    if source.starts_with("#!") {
        let end = source.find('\n').unwrap_or(source.len());
        // As many spaces as bytes: byte offsets into the source stay valid
        // (the source sent for a library is edited at them).
        let blanks = " ".repeat(end);
        source.replace_range(..end, &blanks);
    }
}

/// Tokens without trivia (full_moon's lexer: exact, but slow, so only used
/// to explain errors). Characters the Lua 5.1 lexer refuses (`&`, `|`,
/// a lone `~`) are kept as one-character symbols so the scans see them.
fn tokenize(source: &str) -> Vec<Lexeme> {
    let mut lexer = Lexer::new(source, LuaVersion::lua51());
    let mut lexemes = Vec::new();
    while let Some(result) = lexer.consume() {
        match result {
            LexerResult::Ok(token) => lexemes.push(Lexeme::from_token(token.token())),
            LexerResult::Recovered(token, errors) => {
                lexemes.extend(errors.iter().filter_map(Lexeme::from_error));
                lexemes.push(Lexeme::from_token(token.token()));
            }
            LexerResult::Fatal(errors) => {
                lexemes.extend(errors.iter().filter_map(Lexeme::from_error));
            }
        }
    }
    lexemes
}

/// One significant token, reduced to what the scans need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lexeme {
    kind: LexemeKind,
    pub(crate) line: usize,
    /// In bytes from the line's start, 1-based.
    pub(crate) column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LexemeKind {
    Symbol(Symbol),
    /// A character Lua 5.1 does not know as an operator.
    Foreign(char),
    Name(String),
    Literal,
    Other,
}

impl Lexeme {
    fn from_token(token: &Token) -> Self {
        let kind = match token.token_type() {
            TokenType::Symbol { symbol } => LexemeKind::Symbol(*symbol),
            TokenType::Identifier { identifier } => LexemeKind::Name(identifier.to_string()),
            TokenType::Number { .. } | TokenType::StringLiteral { .. } => LexemeKind::Literal,
            _ => LexemeKind::Other,
        };
        let (start, end) = (token.start_position(), token.end_position());
        Self {
            kind,
            line: start.line(),
            column: start.character(),
            end_line: end.line(),
            end_column: end.character(),
        }
    }

    fn from_error(error: &full_moon::tokenizer::TokenizerError) -> Option<Self> {
        let character = match error.error() {
            TokenizerErrorType::UnexpectedToken(character) => *character,
            TokenizerErrorType::InvalidSymbol(symbol) if symbol == "~" => '~',
            _ => return None,
        };
        let (start, end) = error.range();
        Some(Self {
            kind: LexemeKind::Foreign(character),
            line: start.line(),
            column: start.character(),
            end_line: end.line(),
            end_column: end.character(),
        })
    }

    fn is(&self, symbol: Symbol) -> bool {
        self.kind == LexemeKind::Symbol(symbol)
    }

    fn is_foreign(&self, character: char) -> bool {
        self.kind == LexemeKind::Foreign(character)
    }

    /// True when `next` starts exactly where this lexeme ends (`//`, `<<`).
    fn touches(&self, next: &Lexeme) -> bool {
        self.end_line == next.line && self.end_column == next.column
    }

    /// Can end an operand, so that a following `~` is binary.
    fn ends_operand(&self) -> bool {
        matches!(self.kind, LexemeKind::Name(_) | LexemeKind::Literal)
            || self.is(Symbol::RightParen)
            || self.is(Symbol::RightBracket)
            || self.is(Symbol::RightBrace)
    }

    fn opens(&self) -> bool {
        [
            Symbol::LeftParen,
            Symbol::LeftBracket,
            Symbol::LeftBrace,
            Symbol::Function,
            Symbol::Do,
            Symbol::If,
            Symbol::Repeat,
        ]
        .into_iter()
        .any(|symbol| self.is(symbol))
    }

    fn closes(&self) -> bool {
        [
            Symbol::RightParen,
            Symbol::RightBracket,
            Symbol::RightBrace,
            Symbol::End,
            Symbol::Until,
        ]
        .into_iter()
        .any(|symbol| self.is(symbol))
    }

    fn is_operator(&self) -> bool {
        matches!(self.kind, LexemeKind::Foreign(_))
            || [
                Symbol::Plus,
                Symbol::Minus,
                Symbol::Star,
                Symbol::Slash,
                Symbol::Percent,
                Symbol::Caret,
                Symbol::TwoDots,
                Symbol::Hash,
                Symbol::Not,
                Symbol::And,
                Symbol::Or,
                Symbol::TwoEqual,
                Symbol::TildeEqual,
                Symbol::LessThan,
                Symbol::LessThanEqual,
                Symbol::GreaterThan,
                Symbol::GreaterThanEqual,
            ]
            .into_iter()
            .any(|symbol| self.is(symbol))
    }

    /// Ends the operator run of an expression: a separator or a keyword.
    fn separates(&self) -> bool {
        [
            Symbol::Comma,
            Symbol::Semicolon,
            Symbol::Equal,
            Symbol::Local,
            Symbol::Return,
            Symbol::Then,
            Symbol::Else,
            Symbol::ElseIf,
            Symbol::Do,
            Symbol::End,
            Symbol::In,
            Symbol::Until,
            Symbol::Break,
        ]
        .into_iter()
        .any(|symbol| self.is(symbol))
    }

    fn error(&self, width: usize, message: &str, hint: &str) -> Diagnostic {
        Diagnostic::error(Code::Syntax, self.line, self.column, width, message).with_help(hint)
    }
}

/// An over-estimate of the nesting the parser will recurse through: open
/// brackets and blocks plus the operators of the expression being read.
fn nesting_error(too_deep: &Lexeme) -> Diagnostic {
    too_deep.error(
        1,
        "the script nests blocks, brackets and operators more than 200 levels deep",
        "Lua 5.1 refuses chunks with more than 200 syntax levels; split the expression into locals",
    )
}

/// The deepest nesting level, and the first token beyond [`MAX_NESTING`].
fn deepest(tokens: &[Lexeme]) -> (usize, Option<&Lexeme>) {
    let mut open = 0usize;
    let mut operators = 0usize;
    let mut deepest = 0usize;
    let mut previous: Option<&Lexeme> = None;
    for token in tokens {
        if token.opens() {
            open += 1;
        } else if token.closes() {
            open = open.saturating_sub(1);
        }
        let new_statement = previous.is_some_and(|previous| {
            previous.ends_operand()
                && matches!(token.kind, LexemeKind::Name(_) | LexemeKind::Literal)
        });
        if token.separates() || new_statement {
            operators = 0;
        } else if token.is_operator() {
            operators += 1;
        }
        deepest = deepest.max(open + operators);
        if open + operators > MAX_NESTING {
            return (deepest, Some(token));
        }
        previous = Some(token);
    }
    (deepest, None)
}

/// Errors for syntax of Lua 5.2 and later, each with the Lua 5.1 spelling.
fn newer_lua_syntax(tokens: &[Lexeme]) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut index = 0;
    while let Some(token) = tokens.get(index) {
        let previous = index.checked_sub(1).and_then(|i| tokens.get(i));
        let next = tokens.get(index + 1);
        let after_next = tokens.get(index + 2);
        let (found, consumed) = newer_construct(previous, token, next, after_next);
        diagnostics.extend(found);
        index += consumed.max(1);
    }
    diagnostics
}

const FIVE_ONE: &str = "Redis runs Lua 5.1";

fn newer_construct(
    previous: Option<&Lexeme>,
    token: &Lexeme,
    next: Option<&Lexeme>,
    after_next: Option<&Lexeme>,
) -> (Option<Diagnostic>, usize) {
    let touching = |symbol: Symbol| next.is_some_and(|n| n.is(symbol) && token.touches(n));
    if token.is(Symbol::Slash) && touching(Symbol::Slash) {
        let message = format!("`//` (floor division) is Lua 5.3 syntax; {FIVE_ONE}");
        return (
            Some(token.error(2, &message, "write `math.floor(a / b)`")),
            2,
        );
    }
    if token.is(Symbol::LessThan) && touching(Symbol::LessThan) {
        return (Some(bitwise(token, "<<", "bit.lshift(a, n)")), 2);
    }
    if token.is(Symbol::GreaterThan) && touching(Symbol::GreaterThan) {
        return (
            Some(bitwise(
                token,
                ">>",
                "bit.rshift(a, n) (or bit.arshift for a signed shift)",
            )),
            2,
        );
    }
    if token.is_foreign('&') {
        return (Some(bitwise(token, "&", "bit.band(a, b)")), 1);
    }
    if token.is_foreign('|') {
        return (Some(bitwise(token, "|", "bit.bor(a, b)")), 1);
    }
    if token.is_foreign('~') {
        let binary = previous.is_some_and(Lexeme::ends_operand);
        let replacement = if binary {
            "bit.bxor(a, b)"
        } else {
            "bit.bnot(a)"
        };
        return (Some(bitwise(token, "~", replacement)), 1);
    }
    if let Some(found) = label(token, next, after_next) {
        return (Some(found), 3);
    }
    if let Some(found) = goto(token, next) {
        return (Some(found), 2);
    }
    if let Some(found) = attribute(previous, token, next, after_next) {
        return (Some(found), 3);
    }
    (None, 1)
}

fn bitwise(token: &Lexeme, operator: &str, replacement: &str) -> Diagnostic {
    token.error(
        operator.len(),
        &format!("bitwise operator `{operator}` is Lua 5.3 syntax; {FIVE_ONE}"),
        &format!("use the `bit` library: {replacement}"),
    )
}

/// `::name::`
fn label(token: &Lexeme, next: Option<&Lexeme>, after_next: Option<&Lexeme>) -> Option<Diagnostic> {
    let is_double_colon = |lexeme: &Lexeme, following: Option<&Lexeme>| {
        lexeme.is(Symbol::Colon)
            && following.is_some_and(|f| f.is(Symbol::Colon) && lexeme.touches(f))
    };
    let name = after_next.filter(|lexeme| matches!(lexeme.kind, LexemeKind::Name(_)))?;
    if !is_double_colon(token, next) {
        return None;
    }
    let width = name.end_column.saturating_sub(token.column) + 2;
    Some(token.error(
        width,
        &format!("labels (`::name::`) are Lua 5.2 syntax; {FIVE_ONE}"),
        "restructure the jump with if/else, a loop with `break`, or a local function",
    ))
}

/// `goto name` (in Lua 5.1 `goto` is an ordinary name, so only this shape).
fn goto(token: &Lexeme, next: Option<&Lexeme>) -> Option<Diagnostic> {
    let is_goto = token.kind == LexemeKind::Name("goto".to_string());
    let target = next.filter(|lexeme| matches!(lexeme.kind, LexemeKind::Name(_)))?;
    if !is_goto || target.line != token.line {
        return None;
    }
    Some(token.error(
        target.end_column.saturating_sub(token.column),
        &format!("`goto` is Lua 5.2 syntax; {FIVE_ONE}"),
        "restructure the jump with if/else, a loop with `break`, or a local function",
    ))
}

/// `local x <const> = ...` / `<close>`
fn attribute(
    previous: Option<&Lexeme>,
    token: &Lexeme,
    next: Option<&Lexeme>,
    after_next: Option<&Lexeme>,
) -> Option<Diagnostic> {
    let after_name = previous.is_some_and(|p| matches!(p.kind, LexemeKind::Name(_)));
    let LexemeKind::Name(attribute) = &next?.kind else {
        return None;
    };
    let closed = after_next.is_some_and(|lexeme| lexeme.is(Symbol::GreaterThan));
    let known = attribute == "const" || attribute == "close";
    if !(token.is(Symbol::LessThan) && after_name && closed && known) {
        return None;
    }
    let hint = if attribute == "const" {
        "remove `<const>`; a plain `local` works the same in Lua 5.1"
    } else {
        "remove `<close>` and release the value explicitly"
    };
    Some(token.error(
        attribute.len() + 2,
        &format!("variable attribute `<{attribute}>` is Lua 5.4 syntax; {FIVE_ONE}"),
        hint,
    ))
}

/// Drops the tokenizer's own `(1:2 to 1:3)` suffix; the diagnostic has a
/// position already.
fn clean_message(message: &str) -> String {
    let trimmed = match message.rfind(" (") {
        Some(at)
            if message.ends_with(')')
                && message.get(at..).is_some_and(|tail| tail.contains(" to ")) =>
        {
            message.get(..at).unwrap_or(message)
        }
        _ => message,
    };
    trimmed.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses on a thread with the stack `analyze` gives the parser.
    fn messages(source: &str) -> Vec<String> {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(scope, || match Prepared::new(source).parse() {
                    Ok(_) => Vec::new(),
                    Err(diagnostics) => diagnostics
                        .iter()
                        .map(|d| format!("{}:{}+{} {}", d.line, d.column, d.width, d.text()))
                        .collect(),
                })
                .expect("spawn")
                .join()
                .expect("no panic")
        })
    }

    #[test]
    fn explains_newer_lua_syntax() {
        let cases = [
            (
                "local a = 7 // 2",
                "1:13+2 `//` (floor division) is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "local a = x & 1",
                "1:13+1 bitwise operator `&` is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "local a = x | 1",
                "1:13+1 bitwise operator `|` is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "local a = x ~ 1",
                "1:13+1 bitwise operator `~` is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "local a = ~x",
                "1:11+1 bitwise operator `~` is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "local a = x << 1",
                "1:13+2 bitwise operator `<<` is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "local a = x >> 1",
                "1:13+2 bitwise operator `>>` is Lua 5.3 syntax; Redis runs Lua 5.1",
            ),
            (
                "goto done",
                "1:1+9 `goto` is Lua 5.2 syntax; Redis runs Lua 5.1",
            ),
            (
                "::done::",
                "1:1+8 labels (`::name::`) are Lua 5.2 syntax; Redis runs Lua 5.1",
            ),
            (
                "local x <const> = 5",
                "1:9+7 variable attribute `<const>` is Lua 5.4 syntax; Redis runs Lua 5.1",
            ),
            (
                "local x <close> = f()",
                "1:9+7 variable attribute `<close>` is Lua 5.4 syntax; Redis runs Lua 5.1",
            ),
        ];
        for (source, expected) in cases {
            assert_eq!(messages(source), [expected], "{source}");
        }
    }

    #[test]
    fn ordinary_errors_keep_the_parser_message_once_per_line() {
        assert_eq!(
            messages("x = 'abc"),
            ["1:5+4 syntax error: unclosed string"]
        );
        assert_eq!(
            messages("return 1\nx = 2"),
            ["2:1+1 syntax error: unexpected statement after last statement"]
        );
        assert_eq!(messages("if x then\n").len(), 1);
    }

    #[test]
    fn unclosed_constructs_name_the_line_they_open_on() {
        let cases = [
            (
                "if x then\n  return 1\n",
                "2:11+1 syntax error: `end` expected (to close `if` at line 1) at the end of the file",
            ),
            (
                "local function f()\n  if x then\n    return 1\nend\nreturn f()\n",
                "5:11+1 syntax error: `end` expected (to close `function` at line 1) at the end of the file: by the indentation, the `end` missing is that of `if` at line 2",
            ),
            (
                "local function f(x)\n  if x then\n    for i = 1, 3 do\n      g(i)\n  end\n  return 1\nend\n",
                "7:4+1 syntax error: `end` expected (to close `function` at line 1) at the end of the file: by the indentation, the `end` missing is that of `for` at line 3",
            ),
            (
                // Without indentation, only Lua's own words.
                "local function f()\nif x then\nreturn 1\nend\nreturn f()\n",
                "5:11+1 syntax error: `end` expected (to close `function` at line 1) at the end of the file",
            ),
            (
                "for i = 1, 2 do\n  x()\n-- trailing comment\n\n",
                "2:6+1 syntax error: `end` expected (to close `for` at line 1) at the end of the file",
            ),
            (
                "while true do\n",
                "1:14+1 syntax error: `end` expected (to close `while` at line 1) at the end of the file",
            ),
            (
                "do\n  local a = 1",
                "2:14+1 syntax error: `end` expected (to close `do` at line 1) at the end of the file",
            ),
            (
                "repeat\n  local x = 1\nend\n",
                "3:1+3 syntax error: `until` expected (to close `repeat` at line 1)",
            ),
            (
                "repeat\n  if x then\nuntil y\n",
                "3:1+5 syntax error: `end` expected (to close `if` at line 2)",
            ),
            (
                "if x then\n  for i = 1, 3 do\n    y()\n  else\nend\n",
                "4:3+4 syntax error: `end` expected (to close `for` at line 2)",
            ),
            (
                "return f(function() return 1)\n",
                "1:29+1 syntax error: `end` expected (to close `function` at line 1)",
            ),
            (
                "return f(1,\n  2\n",
                "2:4+1 syntax error: `)` expected (to close `(` at line 1) at the end of the file",
            ),
            (
                "if a then local b = (1 end",
                "1:24+3 syntax error: `)` expected (to close `(` at line 1)",
            ),
            (
                "local t = {\n  a = 1,\nreturn t",
                "3:9+1 syntax error: `}` expected (to close `{` at line 1) at the end of the file",
            ),
            (
                "return t[f(1]",
                "1:13+1 syntax error: `)` expected (to close `(` at line 1)",
            ),
        ];
        for (source, expected) in cases {
            assert_eq!(messages(source), [expected], "{source}");
        }
    }

    #[test]
    fn other_mistakes_keep_the_parser_message() {
        // A stray `end`, a loop without `do` and a missing `then` are not
        // unclosed constructs.
        for (source, expected) in [
            (
                "return 1\nend",
                "syntax error: unexpected token, this needs to be a statement",
            ),
            (
                "while x\n  y()\nend",
                "syntax error: expected `do` after condition",
            ),
            (
                "if x\n  return 1\nend",
                "syntax error: expected `then` after condition",
            ),
        ] {
            let found = messages(source);
            assert!(
                found.iter().any(|message| message.ends_with(expected)),
                "{source}: {found:?}"
            );
            assert!(
                !found.iter().any(|message| message.contains("to close")),
                "{source}: {found:?}"
            );
        }
    }

    #[test]
    fn errors_before_the_unclosed_construct_are_kept() {
        assert_eq!(
            messages("local a = 1 +\nlocal b = 2\nif b then\n  return a\n"),
            [
                "1:13+1 syntax error: expected expression after binary operator",
                "4:11+1 syntax error: `end` expected (to close `if` at line 3) at the end of the file",
            ]
        );
    }

    #[test]
    fn goto_as_a_name_is_fine_in_lua_5_1() {
        assert!(messages("local goto = 1\nreturn goto").is_empty());
        assert!(messages("local a = b < c\nlocal d = e > f").is_empty());
    }

    #[test]
    fn refuses_absurd_nesting_without_recursing() {
        let deep = format!("return {}1{}", "(".repeat(100_000), ")".repeat(100_000));
        let errors = messages(&deep);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("more than 200 levels deep"),
            "{errors:?}"
        );
        let chain = format!("return {}", vec!["a"; 50_000].join(" .. "));
        assert_eq!(messages(&chain).len(), 1);
        let fine = format!("return {}1{}", "(".repeat(150), ")".repeat(150));
        assert!(messages(&fine).is_empty());
    }
}
