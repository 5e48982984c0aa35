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
    pub(crate) fn keep_within(&mut self, source: &str) {
        let lines: Vec<&str> = source.lines().map(str::trim_end).collect();
        if self.line <= lines.len() {
            return;
        }
        let last = lines
            .iter()
            .rposition(|line| !line.trim().is_empty())
            .unwrap_or(0);
        self.line = last + 1;
        self.column = lines.get(last).map_or(0, |line| line.chars().count()) + 1;
        self.width = 1;
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
        diagnostic.keep_within(source);
        assert_eq!(
            (diagnostic.line, diagnostic.column, diagnostic.width),
            (2, 11, 1)
        );
        assert_eq!(
            diagnostic.render("x.lua", source),
            "x.lua:2:11: `end` expected\n  |\n2 |   return 1\n  |           ^"
        );
        let mut empty = Diagnostic::error(3, 1, 1, "empty");
        empty.keep_within("");
        assert_eq!((empty.line, empty.column), (1, 1));
        assert_eq!(
            empty.render("e.lua", ""),
            "e.lua:1:1: empty\n  |\n1 | \n  | ^"
        );
    }
}
