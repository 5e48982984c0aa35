//! The hooks the findings observe the walk through.
//!
//! The walk names no finding. Where its values meet what a finding can be
//! about (an operator, a tested condition, a loop, a command call, a call
//! of a sandbox function, a value used whole, the reply, an undefined
//! global read inside a protected function, an `if` statement, where the
//! elements of KEYS went), it describes the moment as an event and
//! hands it to every registered [`Finding`], with a [`Site`]: a read-only
//! view of the walk's state there, and the report the finding writes to.
//! A finding implements the hooks it needs; the others do nothing.
//!
//! The walk passes over a loop's body several times, silently, until the
//! values at its head settle; what a finding reports during a silent pass
//! is forgotten, so a finding reports every time it sees a bug and holds
//! no state of its own.

use full_moon::ast::{BinOp, Expression, If, Stmt, UnOp};
use full_moon::tokenizer::TokenReference;

use crate::domain::keys::KeyElements;
use crate::domain::operand::Operand;
use crate::domain::scope::{Binding, Scopes};
use crate::domain::signature::Signature;
use crate::domain::value::Value;
use crate::model::target::ReleaseSet;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::span::{SourceMap, Span};

/// A class of bug or risk the analysis proves from what the walk sees.
///
/// Each is one file of `findings/`, registered in the list there with its
/// code, which its reports carry.
pub(crate) trait Finding: Sync {
    /// An operator applied to values: arithmetic, concatenation, a
    /// comparison, a length, indexing or calling.
    fn operation(&self, _site: &mut Site<'_>, _operation: &Operation<'_>) {}

    /// A value tested for truth.
    fn condition(&self, _site: &mut Site<'_>, _condition: &Condition<'_>) {}

    /// A loop, once walked.
    fn loop_walked(&self, _site: &mut Site<'_>, _walked: &LoopWalked<'_>) {}

    /// A `redis.call` or `redis.pcall`, once the walk has checked it.
    fn command(&self, _site: &mut Site<'_>, _call: &CommandCall<'_>) {}

    /// A call of a function of the sandbox's libraries other than
    /// `redis.call` (`tonumber(v)`, `bit.band(a, b)`, `table.insert(t, v)`).
    fn sandbox_call(&self, _site: &mut Site<'_>, _call: &SandboxCall<'_>) {}

    /// A value used whole: iterated, its length a loop's bound, unpacked.
    fn whole_use(&self, _site: &mut Site<'_>, _used: &WholeUse<'_>) {}

    /// The script's reply: the first value a `return` of the main chunk
    /// (or of a library function's callback) gives.
    fn reply(&self, _site: &mut Site<'_>, _reply: &ReplyValue<'_>) {}

    /// A global the sandbox does not define, read inside a function that
    /// runs protected or as a metamethod.
    fn guarded_global_read(&self, _site: &mut Site<'_>, _read: &GuardedGlobalRead<'_>) {}

    /// An `if` statement, before it is walked.
    fn branch(&self, _site: &mut Site<'_>, _branch: &Branch<'_>) {}

    /// The code behind one reply (the script, or a library function's
    /// callback), walked to its end: where the elements of KEYS went.
    fn key_elements(&self, _site: &mut Site<'_>, _elements: &KeyElements) {}
}

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Certainty {
    /// On every execution that reaches the line: an error.
    Always,
    /// Depending on data or input: a warning.
    Sometimes,
}

/// The call whose arguments may hold a function that is not simply run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guard {
    /// `pcall`/`xpcall`: the function runs protected.
    Pcall,
    /// `setmetatable`: the function is a metamethod.
    Metamethod,
}

/// One value with the source that computes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'v> {
    pub value: &'v Value,
    pub span: Span,
}

/// An operator applied to values.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Operation<'e> {
    /// `left <operator> right`, written at `span`.
    Binary {
        operator: &'e BinOp,
        left: Side<'e>,
        right: Side<'e>,
        span: Span,
    },
    /// `<operator> operand`, written at `span` (`not` is a
    /// [`Condition`]).
    Unary {
        operator: &'e UnOp,
        operand: Side<'e>,
        span: Span,
    },
    /// `value[…]`, `value.member` or `value(…)`, written at `span`.
    Suffix {
        value: Side<'e>,
        called: bool,
        span: Span,
    },
}

/// What tests a value for truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Test {
    /// The condition of an `if`, `elseif` or `while`.
    Branch,
    /// A `repeat`'s `until`.
    Until,
    /// `not value`.
    Not,
    /// The left side of `value and …`.
    And,
    /// `not name` as the whole condition of an `if` without `else` whose
    /// block only assigns `name` (`if not ttl then ttl = 0 end`): a
    /// default, which is harmless when never needed.
    DefaultGuard,
}

/// A value tested for truth.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Condition<'e> {
    pub value: &'e Value,
    pub expression: &'e Expression,
    pub span: Span,
    pub test: Test,
    /// For the left side of `and`, its right side: what the test guards.
    pub guarded: Option<&'e Expression>,
}

/// What keeps a loop going, when nothing else does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forever {
    /// A `while` whose condition is never false or nil.
    While,
    /// A `repeat` whose `until` is never true.
    Repeat,
    /// A numeric `for` to an infinite bound, or with a step of 0.
    For,
}

/// A loop, walked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoopWalked<'e> {
    /// `for`, `while` or `repeat`.
    pub keyword: &'e TokenReference,
    /// Set when the loop never ends: what keeps it going, while nothing
    /// in its body breaks, returns or raises.
    pub endless: Option<Forever>,
}

/// How a value is used whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Whole {
    /// A generic `for` iterates it.
    Iterated,
    /// A numeric `for` runs to it (the length of a table).
    LoopBound,
    /// `unpack(t)` passes its elements as arguments.
    Unpacked,
    /// `unpack(t, from, to)`, in ranges.
    UnpackedInRanges,
}

/// A value used whole.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WholeUse<'e> {
    pub value: &'e Value,
    pub how: Whole,
    /// Where: the `unpack(…)` call, or the expression the loop runs over.
    pub span: Span,
}

/// The script's reply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplyValue<'e> {
    /// The first value returned (`nil` for a bare `return`).
    pub value: &'e Value,
    /// Where the first returned expression is written.
    pub span: Span,
}

/// A global the sandbox lacks, read inside a guarded function.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardedGlobalRead<'e> {
    pub name: &'e str,
    pub span: Span,
    pub guard: Guard,
}

/// An `if` statement and the statement before it in its block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Branch<'e> {
    pub statement: &'e If,
    pub previous: Option<&'e Stmt>,
}

/// A call of a sandbox function.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SandboxCall<'e> {
    /// The global called, or whose member is called (`tonumber`, `bit`);
    /// Valkey's `server` is `redis`.
    pub global: &'e str,
    /// The member called (`band`), if any.
    pub member: Option<&'e str>,
    pub operands: &'e [Operand],
    /// The whole call.
    pub span: Span,
}

/// A checked `redis.call` or `redis.pcall`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandCall<'e> {
    /// The command's name as messages show it (`GET`, `CONFIG GET`), or
    /// "the command" when it is not a literal.
    pub shown: &'e str,
    /// Every argument, the command's name first.
    pub operands: &'e [Operand],
    /// The literal text of each operand, where it is one.
    pub words: &'e [Option<&'e str>],
    /// The command as the server model knows it (`get`, `config|get`),
    /// with the releases of the target it runs on: `None` for a command
    /// the model does not know, one the project declares, or a name
    /// computed at run time.
    pub known: Option<KnownCommand>,
    /// The forms the call may run as, where scripts may call it: `None`
    /// when every server refuses it in scripts, or it was not resolved.
    pub runnable: Option<&'e Runnable>,
}

/// A command the server model knows (`get`, `config|get`), with the
/// releases of the target it runs on.
pub(crate) type KnownCommand = (&'static str, ReleaseSet);

/// The forms a command call may run as.
#[derive(Debug, Clone)]
pub(crate) struct Runnable {
    /// The name messages show (`GET`).
    pub name: String,
    /// The fewest arguments any of them takes, its name included.
    pub min_args: usize,
}

/// Where the walk is when a finding observes it: what it may read of the
/// walk's state, and the report it writes to.
pub(crate) struct Site<'s> {
    pub(super) map: &'s SourceMap<'s>,
    pub(super) signature: &'s Signature,
    pub(super) tables: [&'s str; 2],
    pub(super) scopes: &'s Scopes,
    pub(super) functions: usize,
    pub(super) loops: usize,
    pub(super) diagnostics: &'s mut Vec<Diagnostic>,
    /// The code of the finding being shown the event.
    pub(super) code: Code,
}

impl Site<'_> {
    /// The source, to quote the expressions a finding is about.
    pub fn map(&self) -> &SourceMap<'_> {
        self.map
    }

    /// What the caller declares about the script (or about the library
    /// function whose callback is being walked).
    pub fn signature(&self) -> &Signature {
        self.signature
    }

    /// What the code calls its keys and arguments: `KEYS` and `ARGV`, or
    /// a library function's parameters (`keys`, `args`).
    pub fn tables(&self) -> [&str; 2] {
        self.tables
    }

    /// Whether the code being walked runs in a loop of its function.
    pub fn in_loop(&self) -> bool {
        self.loops > 0
    }

    /// What `name` means here: a local (with its value) or a global.
    pub fn resolve(&self, name: &str) -> Binding {
        self.scopes.resolve(name, self.functions)
    }

    /// Where the local `name` visible here is declared: its name in the
    /// declaration. `None` for a global.
    pub fn declaration(&self, name: &str) -> Option<Span> {
        match self.resolve(name) {
            Binding::Local { declared_at, .. } => {
                Some(self.map.at_offset(declared_at, name.chars().count()))
            }
            Binding::Global => None,
        }
    }

    /// Whether this finding has already reported at `span` (where the
    /// walk now is, or anywhere before).
    pub fn reported_at(&self, span: Span) -> bool {
        self.diagnostics.iter().any(|diagnostic| {
            diagnostic.code == self.code
                && diagnostic.line == span.line
                && diagnostic.column == span.column
        })
    }

    /// Reports the finding at `span`: an error when it is certain, a
    /// warning otherwise, with a note naming its opt-out.
    pub fn report(
        &mut self,
        certainty: Certainty,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        let diagnostic = match certainty {
            Certainty::Always => span.error(self.code, message, help),
            Certainty::Sometimes => span.warning(self.code, message, help),
        };
        self.diagnostics.push(diagnostic.with_note(format!(
            "if this is intended, add `-- redis-script: allow({})` to the line",
            self.code.name()
        )));
    }

    /// Reports like [`Site::report`], with `note` first among the notes.
    pub fn report_with_note(
        &mut self,
        certainty: Certainty,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
        note: impl Into<String>,
    ) {
        self.report(certainty, span, message, help);
        if let Some(diagnostic) = self.diagnostics.last_mut() {
            diagnostic.notes.insert(0, note.into());
        }
    }
}
