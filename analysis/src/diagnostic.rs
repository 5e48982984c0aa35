//! Diagnostics with positions inside the `.lua` file and their rendering.

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

    /// Renders `path:line:col: message`, the source line with a caret
    /// underline, and the hint, in the layout rustc users already read.
    pub fn render(&self, path: &str, source: &str) -> String {
        let mut out = format!("{path}:{}:{}: {}", self.line, self.column, self.message);
        if let Some(text) = source.lines().nth(self.line.saturating_sub(1)) {
            let text = text.trim_end();
            let gutter = self.line.to_string().len();
            let blank = " ".repeat(gutter);
            // Columns count characters; tabs are kept so the caret lines up
            // in terminals that expand them the same way for both lines.
            let indent: String = text
                .chars()
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
        if let Some(hint) = &self.hint {
            let _ = write!(out, "\n = hint: {hint}");
        }
        out
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
}
