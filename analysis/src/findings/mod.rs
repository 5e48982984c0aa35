//! The findings about values and operational safety: bugs the value
//! analysis proves (a comparison the types decide, a missing key's `false`
//! in arithmetic) and scripts that block the server (a loop nothing ends,
//! a read that grows with the data), each class with a stable name that
//! messages show, `--format json` reports, and an opt-out takes.
//!
//! A finding is an error when the bug happens on every execution that
//! reaches the line, and a warning when it depends on data or input (the
//! message says when). What the analysis cannot prove is unknown and says
//! nothing. One module per class; the walk calls them where the values
//! meet the operators, calls and returns they are about.
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

use std::collections::{BTreeSet, HashMap};

use crate::interp::Analyzer;
use crate::source::diagnostic::Diagnostic;
use crate::source::span::Span;

pub(crate) mod allow;
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

impl Analyzer<'_> {
    /// The expression under `span`, to name in a finding.
    pub(crate) fn shown(&self, span: Span, description: &'static str) -> Shown {
        Shown {
            text: self.context.map.snippet_up_to(span, MAX_SHOWN_CHARS),
            description,
        }
    }
}

/// One class of findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FindingClass {
    /// The stable name: in messages, JSON and opt-outs.
    pub name: &'static str,
    /// What it finds, for documentation and `--explain`.
    pub summary: &'static str,
}

/// Every class of findings.
pub const FINDINGS: &[FindingClass] = &[
    FindingClass {
        name: MISMATCHED_COMPARISON,
        summary: "`<`, `<=`, `>`, `>=` between a number and a string (or a boolean, nil, a table): Lua raises on every call",
    },
    FindingClass {
        name: CONSTANT_EQUALITY,
        summary: "`==` or `~=` whose result the types fix: a string against a number, a reply that is never nil against `nil`",
    },
    FindingClass {
        name: ALWAYS_TRUE,
        summary: "a number tested for truth (`if`, `while`, `not`, `and`): 0 is true in Lua",
    },
    FindingClass {
        name: REFUSED_ARGUMENT,
        summary: "a `redis.call` argument that is a boolean, nil or a table: Redis refuses it",
    },
    FindingClass {
        name: FRACTIONAL_ARGUMENT,
        summary: "a number that may have a fraction passed where the command takes an integer",
    },
    FindingClass {
        name: EMPTY_UNPACK,
        summary: "`unpack(t)` supplying a command's required arguments when `t` may be empty",
    },
    FindingClass {
        name: NIL_VALUE,
        summary: "arithmetic, concatenation, comparison, indexing or calling a value that may be nil or false",
    },
    FindingClass {
        name: REPLY_HOLE,
        summary: "a returned table whose element may be nil: the reply stops there",
    },
    FindingClass {
        name: FRACTIONAL_REPLY,
        summary: "a returned number that may have a fraction: Redis truncates it to an integer",
    },
    FindingClass {
        name: UNBOUNDED_READ,
        summary: "a loop, `unpack` or `return` over a read that grows with the data (`SMEMBERS`, `LRANGE … 0 -1`, `ZRANGEBYSCORE` without `LIMIT`)",
    },
    FindingClass {
        name: KEYSPACE_WALK,
        summary: "`KEYS`, or `SCAN`/`HSCAN`/`SSCAN`/`ZSCAN` in a loop: the whole keyspace or collection in one atomic step",
    },
    FindingClass {
        name: DANGEROUS_COMMAND,
        summary: "a command the servers' ACL categories mark @dangerous (`FLUSHALL`, `SWAPDB`, `SORT`, `INFO`, …)",
    },
    FindingClass {
        name: PROTECTED_GLOBAL_READ,
        summary: "a read of an undefined global inside a function called through `pcall` (it raises, and the `pcall` catches it: a feature probe does this on purpose) or inside a metamethod (it raises only when the metamethod runs)",
    },
    FindingClass {
        name: SINGLE_COMMAND,
        summary: "a compare-and-delete or compare-and-set script that one command does on every server of the target (`DELIFEQ`, `SET … IFEQ`)",
    },
    FindingClass {
        name: ENDLESS_LOOP,
        summary: "a loop that nothing ends (`while true` with no `break`, `return` or raise): the server answers BUSY to everyone",
    },
];

pub(crate) const MISMATCHED_COMPARISON: &str = "mismatched_comparison";
pub(crate) const CONSTANT_EQUALITY: &str = "constant_equality";
pub(crate) const ALWAYS_TRUE: &str = "always_true";
pub(crate) const REFUSED_ARGUMENT: &str = "refused_argument";
pub(crate) const FRACTIONAL_ARGUMENT: &str = "fractional_argument";
pub(crate) const EMPTY_UNPACK: &str = "empty_unpack";
pub(crate) const NIL_VALUE: &str = "nil_value";
pub(crate) const REPLY_HOLE: &str = "reply_hole";
pub(crate) const FRACTIONAL_REPLY: &str = "fractional_reply";
pub(crate) const ENDLESS_LOOP: &str = "endless_loop";
pub(crate) const KEYSPACE_WALK: &str = "keyspace_walk";
pub(crate) const UNBOUNDED_READ: &str = "unbounded_read";
pub(crate) const DANGEROUS_COMMAND: &str = "dangerous_command";
pub(crate) const PROTECTED_GLOBAL_READ: &str = "protected_global_read";
pub(crate) const SINGLE_COMMAND: &str = "single_command";

/// The class named `name`, if there is one.
pub fn finding(name: &str) -> Option<&'static FindingClass> {
    FINDINGS.iter().find(|class| class.name == name)
}

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Certainty {
    /// On every execution that reaches the line: an error.
    Always,
    /// Depending on data or input: a warning.
    Sometimes,
}

impl Analyzer<'_> {
    /// Reports a finding of class `name` at `span`. The message starts
    /// with the class's name; the hint ends with the opt-out.
    pub(crate) fn report(
        &mut self,
        name: &'static str,
        certainty: Certainty,
        span: Span,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let message = format!("[{name}] {}", message.into());
        let hint = format!(
            "{}; if this is intended, add `-- redis-script: allow({name})` to the line",
            hint.into()
        );
        let mut diagnostic = match certainty {
            Certainty::Always => span.error(message, hint),
            Certainty::Sometimes => span.note(message, hint),
        };
        diagnostic.finding = Some(name);
        self.diagnostics.push(diagnostic);
    }
}

/// The findings silenced for a script: by name for the whole script, and
/// by line.
#[derive(Debug, Default, Clone)]
pub(crate) struct Silenced {
    everywhere: BTreeSet<String>,
    lines: HashMap<usize, BTreeSet<String>>,
}

impl Silenced {
    /// Whether `diagnostic` is a finding silenced where it is.
    pub fn covers(&self, diagnostic: &Diagnostic) -> bool {
        let Some(name) = diagnostic.finding else {
            return false;
        };
        self.everywhere.contains(name)
            || self
                .lines
                .get(&diagnostic.line)
                .is_some_and(|names| names.contains(name))
    }
}
