//! Diagnostics with positions inside the `.lua` file and their rendering,
//! shared by the attribute (inside a compiler error) and the command-line
//! checker (on their own).

use std::fmt::Write as _;

pub use crate::source::code::Code;

/// The environment variable that makes warnings fail the build (`1`),
/// for a crate that wants every finding fixed or silenced.
pub const DENY_WARNINGS_VARIABLE: &str = "REDIS_SCRIPT_DENY_WARNINGS";

/// Whether a value of [`DENY_WARNINGS_VARIABLE`] turns warnings on:
/// `1`, `true` or `yes`.
pub fn denies_warnings(value: &str) -> bool {
    matches!(value.trim(), "1" | "true" | "yes")
}

/// A declared parameter, for diagnostics about the parameter itself
/// rather than a place in the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// `KEYS[n]`, 1-based.
    Key(usize),
    /// `ARGV[n]`, 1-based.
    Arg(usize),
    /// The declaration's split of its parameters into keys and arguments
    /// (the Rust function's `keys = N`).
    KeyCount,
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The build fails.
    Error,
    /// Worth telling the user; the build goes on (unless the crate denies
    /// warnings).
    Warning,
}

impl Severity {
    /// `error` or `warning`, as compilers write it.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One diagnostic, located in the Lua source (1-based line and column):
/// a short message that reads in one glance, the notes that explain it,
/// and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Its stable code (`RS103`), which names its class.
    pub code: Code,
    pub severity: Severity,
    pub line: usize,
    pub column: usize,
    /// Number of characters to underline, at least 1.
    pub width: usize,
    /// Self-contained first line of the message.
    pub message: String,
    /// What follows from it: the server's error, when it happens.
    pub notes: Vec<String>,
    /// What to do about it.
    pub help: Option<String>,
    /// The declared parameter the finding is about, so that a declaration
    /// with named parameters can point at the name rather than the script.
    pub parameter: Option<Parameter>,
    /// In a library, the declared function the finding is about (its
    /// index among the declarations), so that the declaration can point
    /// at that function.
    pub function: Option<usize>,
}

impl Diagnostic {
    /// An error of class `code` at `line:column` underlining `width`
    /// characters.
    pub fn error(
        code: Code,
        line: usize,
        column: usize,
        width: usize,
        message: impl Into<String>,
    ) -> Self {
        let (message, note) = first_line(message.into());
        Self {
            code,
            severity: Severity::Error,
            line,
            column,
            width: width.max(1),
            message,
            notes: note.into_iter().collect(),
            help: None,
            parameter: None,
            function: None,
        }
    }

    /// A warning of class `code` at `line:column` underlining `width`
    /// characters.
    pub fn warning(
        code: Code,
        line: usize,
        column: usize,
        width: usize,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, line, column, width, message)
        }
    }

    /// Adds what to do about it, shown last.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a note under the source excerpt.
    /// The same problem on a line that never runs (in a function nothing
    /// calls): a warning, with `why` after its notes.
    pub fn never_run(mut self, why: impl Into<String>) -> Self {
        self.severity = Severity::Warning;
        self.notes.push(why.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Marks the finding as being about a declared parameter.
    pub fn about(mut self, parameter: Parameter) -> Self {
        self.parameter = Some(parameter);
        self
    }

    /// The message with its notes, as one sentence: what a test or a
    /// one-line listing reads.
    pub fn text(&self) -> String {
        let mut text = self.message.clone();
        for note in &self.notes {
            text.push_str(": ");
            text.push_str(note);
        }
        text
    }

    /// The name of the finding it reports (`always_true`), which opt-outs
    /// take; `None` for the other classes.
    pub fn finding(&self) -> Option<&'static str> {
        self.code.is_finding().then(|| self.code.name())
    }

    /// Renders the diagnostic as the message of a compiler error (rustc
    /// writes `error:` before it and its own `-->` into the Rust file after
    /// it): `[RS103] path:line:col: message`, then the same excerpt, notes
    /// and help as [`Self::render_standalone`].
    pub fn render(&self, path: &str, source: &str) -> String {
        let mut out = format!(
            "[{}] {path}:{}:{}: {}",
            self.code, self.line, self.column, self.message
        );
        self.excerpt(source, &mut out);
        self.trailer(&mut out);
        out
    }

    /// Renders the diagnostic on its own, in rustc's layout: `error[RS103]:`
    /// (or `warning[…]:`) and the message, ` --> path:line:col`, the
    /// source line with a caret underline, then `= note:` and `= help:`.
    pub fn render_standalone(&self, path: &str, source: &str) -> String {
        let mut out = format!(
            "{}[{}]: {}\n{:gutter$}--> {path}:{}:{}",
            self.severity.label(),
            self.code,
            self.message,
            "",
            self.line,
            self.column,
            gutter = self.gutter_width()
        );
        self.excerpt(source, &mut out);
        self.trailer(&mut out);
        out
    }

    /// Renders the diagnostic without its place in the source, for a
    /// compiler error that points at the Rust code it is about (a declared
    /// parameter): `[RS012] message`, the notes and the help.
    pub fn render_detached(&self) -> String {
        let mut out = format!("[{}] {}", self.code, self.message);
        self.trailer(&mut out);
        out
    }

    /// Spaces taken by the line number in the excerpt's gutter.
    fn gutter_width(&self) -> usize {
        self.line.to_string().len()
    }

    /// The source line under a gutter, with the caret underline. A line
    /// past the end of the source (which [`Self::keep_within`] prevents)
    /// is shown empty rather than left out.
    fn excerpt(&self, source: &str, out: &mut String) {
        let text = source
            .lines()
            .nth(self.line.saturating_sub(1))
            .unwrap_or_default()
            .trim_end();
        let blank = " ".repeat(self.gutter_width());
        // Columns count characters; tabs are kept so the caret lines up
        // in terminals that expand them the same way for both lines.
        let indent: String = text
            .chars()
            .chain(std::iter::repeat(' '))
            .take(self.column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let _ = write!(
            out,
            "\n{blank} |\n{} | {text}\n{blank} | {indent}{}",
            self.line,
            "^".repeat(self.width)
        );
    }

    /// The notes and the help, each on a `= note:` or `= help:` line
    /// aligned with the excerpt's gutter.
    fn trailer(&self, out: &mut String) {
        let blank = " ".repeat(self.gutter_width());
        let lines = self
            .notes
            .iter()
            .map(|note| ("note", note))
            .chain(self.help.iter().map(|help| ("help", help)));
        for (index, (label, text)) in lines.enumerate() {
            if index == 0 {
                let _ = write!(out, "\n{blank} |");
            }
            let _ = write!(out, "\n{blank} = {label}: {text}");
        }
    }

    /// Moves a position past the end of the source (the parser's errors at
    /// the end of the file) to just after the last line with text, so that
    /// every diagnostic has a source line to show.
    pub(crate) fn keep_within(&mut self, end: &SourceEnd) {
        if self.line <= end.lines {
            return;
        }
        self.line = end.last_line;
        self.column = end.last_column;
        self.width = 1;
    }
}

/// Messages longer than this are split into a first line and a note.
const FIRST_LINE_CHARS: usize = 90;

/// Neither part of a split message is shorter than this, so that the first
/// line still says what is wrong and the note says something of its own.
const MIN_PART_CHARS: usize = 16;

/// Splits a long message where its statement ends and what follows from it
/// begins (`` `KEYS` is not defined in a function: Redis fails with … ``):
/// at the first `: ` or `; ` outside code, quotes and brackets that leaves
/// both parts long enough. A short message, or one without such a place,
/// stays whole.
fn first_line(message: String) -> (String, Option<String>) {
    if message.chars().count() <= FIRST_LINE_CHARS {
        return (message, None);
    }
    let mut in_code = false;
    let mut in_quote = false;
    let mut depth = 0usize;
    let mut split = None;
    for (index, character) in message.char_indices() {
        match character {
            '`' if !in_quote => in_code = !in_code,
            '"' if !in_code => in_quote = !in_quote,
            _ if in_code || in_quote => {}
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ':' | ';' if depth == 0 && message[index + 1..].starts_with(' ') => {
                let head = message[..index].chars().count();
                let tail = message[index + 2..].chars().count();
                if head >= MIN_PART_CHARS && tail >= MIN_PART_CHARS {
                    split = Some(index);
                    break;
                }
            }
            _ => {}
        }
    }
    match split {
        Some(index) => {
            let note = message[index + 2..].to_owned();
            let mut head = message;
            head.truncate(index);
            (head, Some(note))
        }
        None => (message, None),
    }
}

/// Where a source ends, measured once for all its diagnostics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SourceEnd {
    /// How many lines the source has.
    lines: usize,
    /// The last line with text (1 when there is none).
    last_line: usize,
    /// Just after that line's text.
    last_column: usize,
}

impl SourceEnd {
    pub fn of(source: &str) -> Self {
        let mut end = SourceEnd {
            lines: 0,
            last_line: 1,
            last_column: 1,
        };
        for (index, line) in source.lines().enumerate() {
            end.lines = index + 1;
            let text = line.trim_end();
            if !text.is_empty() {
                end.last_line = index + 1;
                end.last_column = text.chars().count() + 1;
            }
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "local a = 1\nreturn redis.call('GET', KEYS[2])\n";

    fn out_of_range() -> Diagnostic {
        Diagnostic::error(Code::IndexOutOfRange, 2, 26, 7, "`KEYS[2]` is out of range")
            .with_note("the Rust function declares 1 key")
            .with_help("declare keys = 2")
    }

    #[test]
    fn renders_in_a_compiler_error_with_the_code_location_and_trailer() {
        assert_eq!(
            out_of_range().render("lua/x.lua", SOURCE),
            "[RS011] lua/x.lua:2:26: `KEYS[2]` is out of range\n  |\n2 | return redis.call('GET', KEYS[2])\n  |                          ^^^^^^^\n  |\n  = note: the Rust function declares 1 key\n  = help: declare keys = 2"
        );
    }

    #[test]
    fn renders_on_its_own_in_the_compiler_layout() {
        assert_eq!(
            out_of_range().render_standalone("lua/x.lua", SOURCE),
            "error[RS011]: `KEYS[2]` is out of range\n --> lua/x.lua:2:26\n  |\n2 | return redis.call('GET', KEYS[2])\n  |                          ^^^^^^^\n  |\n  = note: the Rust function declares 1 key\n  = help: declare keys = 2"
        );
        let warning = Diagnostic::warning(Code::RiskyGlobal, 10, 1, 1, "careful").with_help("look");
        let source = "\n".repeat(9) + "x\n";
        assert_eq!(
            warning.render_standalone("a.lua", &source),
            "warning[RS034]: careful\n  --> a.lua:10:1\n   |\n10 | x\n   | ^\n   |\n   = help: look"
        );
        assert_eq!(
            out_of_range().render_detached(),
            "[RS011] `KEYS[2]` is out of range\n  |\n  = note: the Rust function declares 1 key\n  = help: declare keys = 2"
        );
    }

    #[test]
    fn long_messages_split_where_the_statement_ends() {
        let split = |message: &str| {
            let diagnostic = Diagnostic::error(Code::UndefinedGlobal, 1, 1, 1, message);
            (diagnostic.message, diagnostic.notes)
        };
        assert_eq!(
            split(
                "`KEYS` is not defined in a function: Redis fails with \"Script attempted to access nonexistent global variable 'KEYS'\""
            ),
            (
                "`KEYS` is not defined in a function".to_owned(),
                vec!["Redis fails with \"Script attempted to access nonexistent global variable 'KEYS'\"".to_owned()]
            )
        );
        // Separators in code, quotes and brackets do not count, nor one
        // that leaves a part too short.
        let kept =
            "`a: b` and \"c: d\" (e: f) are all kept in one line, since none of them ends it: ok";
        assert_eq!(split(kept), (kept.to_owned(), vec![]));
        let short = "`SELECT 16` is short";
        assert_eq!(split(short), (short.to_owned(), vec![]));
    }

    #[test]
    fn positions_past_the_end_move_to_the_last_line_with_text() {
        let source = "if x then\n  return 1\n\n";
        let mut diagnostic = Diagnostic::error(Code::Syntax, 4, 1, 3, "`end` expected");
        diagnostic.keep_within(&SourceEnd::of(source));
        assert_eq!(
            (diagnostic.line, diagnostic.column, diagnostic.width),
            (2, 11, 1)
        );
        assert_eq!(
            diagnostic.render("x.lua", source),
            "[RS001] x.lua:2:11: `end` expected\n  |\n2 |   return 1\n  |           ^"
        );
        let mut empty = Diagnostic::error(Code::Syntax, 3, 1, 1, "empty");
        empty.keep_within(&SourceEnd::of(""));
        assert_eq!((empty.line, empty.column), (1, 1));
        assert_eq!(
            empty.render("e.lua", ""),
            "[RS001] e.lua:1:1: empty\n  |\n1 | \n  | ^"
        );
    }
}
