//! Diagnostics with positions inside the `.lua` file and their rendering,
//! shared by the attribute (inside a compiler error) and the command-line
//! checker (on their own).

use std::fmt::Write as _;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The build fails.
    Error,
    /// Worth telling the user; the build goes on.
    Note,
}

/// One finding, located in the Lua source (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub line: usize,
    pub column: usize,
    /// Number of characters to underline, at least 1.
    pub width: usize,
    /// Self-contained first line of the message.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The declared parameter the finding is about, so that a declaration
    /// with named parameters can point at the name rather than the script.
    pub parameter: Option<crate::Parameter>,
    /// In a library, the declared function the finding is about (its
    /// index among the declarations), so that the declaration can point
    /// at that function.
    pub function: Option<usize>,
    /// The class of a value finding (`always_true`, …), which opt-outs
    /// name: see [`FINDINGS`](crate::FINDINGS).
    pub finding: Option<&'static str>,
}

impl Diagnostic {
    /// An error at `line:column` underlining `width` characters.
    pub fn error(line: usize, column: usize, width: usize, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            line,
            column,
            width: width.max(1),
            message: message.into(),
            hint: None,
            parameter: None,
            function: None,
            finding: None,
        }
    }

    /// A note at `line:column` underlining `width` characters.
    pub fn note(line: usize, column: usize, width: usize, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Note,
            ..Self::error(line, column, width, message)
        }
    }

    /// Adds a hint shown under the source excerpt.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Marks the finding as being about a declared parameter.
    pub fn about(mut self, parameter: crate::Parameter) -> Self {
        self.parameter = Some(parameter);
        self
    }

    /// Renders the diagnostic as the message of a compiler error (rustc
    /// adds `error:` before it and its own `-->` to the Rust file after):
    /// `path:line:col: message`, the source line with a caret underline,
    /// and the hint.
    pub fn render(&self, path: &str, source: &str) -> String {
        let mut out = format!("{path}:{}:{}: {}", self.line, self.column, self.message);
        self.excerpt(source, &mut out);
        if let Some(hint) = &self.hint {
            let _ = write!(out, "\n = hint: {hint}");
        }
        out
    }

    /// Renders the diagnostic on its own, in rustc's layout: `error:` (or
    /// `warning:`) and the message, ` --> path:line:col`, the source line
    /// with a caret underline, and `= help:` with the hint.
    pub fn render_standalone(&self, path: &str, source: &str) -> String {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Note => "warning",
        };
        let gutter = self.gutter_width();
        let mut out = format!(
            "{label}: {}\n{:gutter$}--> {path}:{}:{}",
            self.message,
            "",
            self.line,
            self.column,
            gutter = gutter
        );
        self.excerpt(source, &mut out);
        if let Some(hint) = &self.hint {
            let _ = write!(out, "\n{:gutter$} |\n{:gutter$} = help: {hint}", "", "");
        }
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

    #[test]
    fn renders_location_source_line_caret_and_hint() {
        let source = "local a = 1\nreturn redis.call('GET', KEYS[2])\n";
        let rendered = Diagnostic::error(2, 26, 7, "KEYS[2] is out of range")
            .with_hint("declare keys = 2")
            .render("lua/x.lua", source);
        assert_eq!(
            rendered,
            "lua/x.lua:2:26: KEYS[2] is out of range\n  |\n2 | return redis.call('GET', KEYS[2])\n  |                          ^^^^^^^\n = hint: declare keys = 2"
        );
    }

    #[test]
    fn renders_on_its_own_in_the_compiler_layout() {
        let source = "local a = 1\nreturn redis.call('GET', KEYS[2])\n";
        let diagnostic =
            Diagnostic::error(2, 26, 7, "KEYS[2] is out of range").with_hint("declare keys = 2");
        assert_eq!(
            diagnostic.render_standalone("lua/x.lua", source),
            "error: KEYS[2] is out of range\n --> lua/x.lua:2:26\n  |\n2 | return redis.call('GET', KEYS[2])\n  |                          ^^^^^^^\n  |\n  = help: declare keys = 2"
        );
        let note = Diagnostic::note(10, 1, 1, "careful").with_hint("look");
        let source = "\n".repeat(9) + "x\n";
        assert_eq!(
            note.render_standalone("a.lua", &source),
            "warning: careful\n  --> a.lua:10:1\n   |\n10 | x\n   | ^\n   |\n   = help: look"
        );
    }

    #[test]
    fn positions_past_the_end_move_to_the_last_line_with_text() {
        let source = "if x then\n  return 1\n\n";
        let mut diagnostic = Diagnostic::error(4, 1, 3, "`end` expected");
        diagnostic.keep_within(&SourceEnd::of(source));
        assert_eq!(
            (diagnostic.line, diagnostic.column, diagnostic.width),
            (2, 11, 1)
        );
        assert_eq!(
            diagnostic.render("x.lua", source),
            "x.lua:2:11: `end` expected\n  |\n2 |   return 1\n  |           ^"
        );
        let mut empty = Diagnostic::error(3, 1, 1, "empty");
        empty.keep_within(&SourceEnd::of(""));
        assert_eq!((empty.line, empty.column), (1, 1));
        assert_eq!(
            empty.render("e.lua", ""),
            "e.lua:1:1: empty\n  |\n1 | \n  | ^"
        );
    }
}
