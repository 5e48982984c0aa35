//! Static analysis of Redis Lua scripts.
//!
//! This module knows nothing about `proc_macro`: it takes the script source
//! and what the Rust signature declares, and returns diagnostics (with
//! `line:column` positions inside the `.lua` file) plus the facts the code
//! generator needs (read-only, return shapes, header docs). That keeps it
//! unit-testable on its own and reusable by a command-line checker.

mod commands;
mod diagnostic;
mod sandbox;

pub use diagnostic::{Diagnostic, Severity};

/// What the Rust signature declares about the script's inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signature {
    /// Number of fixed key parameters (`KEYS[1]..=KEYS[keys]`).
    pub keys: usize,
    /// Number of fixed non-key parameters (`ARGV[1]..=ARGV[args]`).
    pub args: usize,
    /// The last key parameter is a slice sent as the remaining KEYS.
    pub variadic_keys: bool,
    /// The last argument parameter is a slice sent as the remaining ARGV.
    pub variadic_args: bool,
    /// Attribute opt-out: declared keys/arguments may go unused by the script.
    pub allow_unused: bool,
    /// Attribute opt-out: key positions may hold values that do not come from KEYS.
    pub dynamic_keys: bool,
}

/// Everything the analysis found out about one script.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Errors and notes, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// No write command is reachable, or the script declares `no-writes`.
    pub read_only: bool,
}

impl Analysis {
    /// True when at least one diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|diagnostic| diagnostic.severity == Severity::Error)
    }
}

/// Parses `source` as Lua 5.1 and checks it against `signature`.
pub fn analyze(source: &str, _signature: &Signature) -> Analysis {
    let parsed = full_moon::parse_fallible(source, full_moon::LuaVersion::lua51());
    let diagnostics = parsed
        .errors()
        .iter()
        .map(|error| {
            let (start, end) = error.range();
            let width = if end.line() == start.line() {
                end.character().saturating_sub(start.character()).max(1)
            } else {
                1
            };
            Diagnostic::error(
                start.line(),
                start.character(),
                width,
                format!("syntax error: {}", error.error_message()),
            )
        })
        .collect();
    Analysis {
        diagnostics,
        read_only: false,
    }
}
