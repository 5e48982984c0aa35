//! The findings about values and operational safety: bugs the value
//! analysis proves (a comparison the types decide, a missing key's `false`
//! in arithmetic) and scripts that block the server (a loop nothing ends,
//! a read that grows with the data), each class with a stable code and
//! name (see [`Code`]) that messages show, `--format json` reports, and an
//! opt-out takes.
//!
//! A finding is an error when the bug happens on every execution that
//! reaches the line, and a warning when it depends on data or input (the
//! message says when). What the analysis cannot prove is unknown and says
//! nothing. One module per class; the walk calls them where the values
//! meet the operators, calls and returns they are about. The checks of
//! values (`truth`, `nils`, `comparisons`, `arguments`, `replies`) get the
//! values and a [`Sink`]; those that need the walk's state (the loops
//! around a call, the reads already reported, the statements around an
//! `if`) are methods of the analyzer and report through it.
//!
//! Any finding can be silenced, for one line or a whole script:
//!
//! ```lua
//! -- redis-script: allow(always_true)          -- in the header: the whole script
//! local n = redis.call('INCR', KEYS[1]) -- redis-script: allow(always_true)
//! -- redis-script: allow(nil_value)            -- on its own line: the next line
//! ```
//!
//! and for a whole declaration with the attribute's `allow(…)` or the
//! command line's `--allow`.

use crate::interp::Analyzer;
use crate::source::diagnostic::{Code, Diagnostic};
use crate::source::span::{SourceMap, Span};

mod arguments;
mod bounds;
pub(crate) mod comparisons;
pub(crate) mod loops;
mod nils;
mod replies;
mod server_wide;
mod single_command;
#[cfg(test)]
mod tests;
mod truth;

/// How a finding names the expression it is about: quoted when it is short
/// enough to read in a message, described otherwise.
pub(crate) struct Shown {
    text: Option<String>,
    description: &'static str,
}

/// Expressions longer than this are described instead of quoted.
const MAX_SHOWN_CHARS: usize = 72;

impl Shown {
    /// For a message: `` `x > 1` ``, or "this comparison".
    pub fn named(&self) -> String {
        self.text
            .as_ref()
            .map_or_else(|| self.description.to_owned(), |text| format!("`{text}`"))
    }

    /// For code in a hint: the expression, or `v` standing for it.
    pub fn code(&self) -> &str {
        self.text.as_deref().unwrap_or("v")
    }
}

/// What the checks of values report with: the source, to name the
/// expressions they are about, and the diagnostics they add to. They get
/// this and the values, not the analyzer, so a check can neither read the
/// walk's state nor change it.
pub(crate) struct Sink<'a> {
    map: &'a SourceMap<'a>,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    pub fn new(map: &'a SourceMap<'a>, diagnostics: &'a mut Vec<Diagnostic>) -> Self {
        Self { map, diagnostics }
    }

    /// The expression under `span`, to name in a finding.
    pub fn shown(&self, span: Span, description: &'static str) -> Shown {
        Shown {
            text: self.map.snippet_up_to(span, MAX_SHOWN_CHARS),
            description,
        }
    }

    /// Reports a finding of class `code` at `span`: an error when it is
    /// certain, a warning otherwise, with a note naming its opt-out.
    pub fn report(
        &mut self,
        code: Code,
        certainty: Certainty,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        let diagnostic = match certainty {
            Certainty::Always => span.error(code, message, help),
            Certainty::Sometimes => span.warning(code, message, help),
        };
        self.diagnostics.push(diagnostic.with_note(format!(
            "if this is intended, add `-- redis-script: allow({})` to the line",
            code.name()
        )));
    }
}

impl Analyzer<'_> {
    /// The sink the checks of values report to.
    pub(crate) fn sink(&mut self) -> Sink<'_> {
        Sink::new(self.context.map, &mut self.facts.diagnostics)
    }

    /// Reports a finding that depends on the walk's state (loops, reads
    /// already reported, the statements around it).
    pub(crate) fn report(
        &mut self,
        code: Code,
        certainty: Certainty,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.sink().report(code, certainty, span, message, help);
    }
}

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Certainty {
    /// On every execution that reaches the line: an error.
    Always,
    /// Depending on data or input: a warning.
    Sometimes,
}
