//! A function library as the caller declares it, and what the analysis
//! reports about it and each function it registers.

use crate::domain::analysis::{ErrorCodes, ReturnSite};
use crate::domain::keys::KeyPrefixes;
use crate::domain::review::Review;
use crate::domain::signature::Signature;
use crate::source::diagnostic::{Diagnostic, Severity};
use crate::source::header::Header;
use crate::source::shebang::ScriptFlags;

/// What the Rust declaration says about a library and its functions.
#[derive(Debug, Clone, Default)]
pub struct LibrarySignature {
    /// The target and the declared commands for the whole file (its key
    /// and argument counts are not used).
    pub library: Signature,
    /// The functions the Rust side declares, each with its keys and
    /// arguments (and the same target as `library`).
    pub functions: Vec<DeclaredFunction>,
}

/// One function of the library, as the Rust side declares it.
#[derive(Debug, Clone, Default)]
pub struct DeclaredFunction {
    /// The name the library registers it under.
    pub name: String,
    /// Its keys and arguments, read by the callback through its first and
    /// second parameters.
    pub signature: Signature,
}

/// Everything the analysis found out about a library.
#[derive(Debug, Clone, Default)]
pub struct LibraryAnalysis {
    /// Errors and notes, sorted by position. A diagnostic about one
    /// declared function (a parameter it never reads, a name the library
    /// does not register) carries that function's index in
    /// [`Diagnostic::function`].
    pub diagnostics: Vec<Diagnostic>,
    /// The library's name, from `#!lua name=…`.
    pub name: Option<String>,
    /// The leading comment block.
    pub header: Header,
    /// The functions the file registers, in source order.
    pub functions: Vec<RegisteredFunction>,
}

impl LibraryAnalysis {
    /// The diagnostics that fail the build.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == Severity::Error)
    }

    /// The registered function a declaration names.
    pub fn function(&self, name: &str) -> Option<&RegisteredFunction> {
        self.functions.iter().find(|function| function.name == name)
    }
}

/// One `redis.register_function` of the file.
#[derive(Debug, Clone, Default)]
pub struct RegisteredFunction {
    /// The function's name, as `FCALL` takes it.
    pub name: String,
    /// Where the name is written.
    pub line: usize,
    pub column: usize,
    /// The flags of the table form (`flags = {'no-writes'}`).
    pub flags: ScriptFlags,
    /// The table form's `description`, when it is a literal.
    pub description: Option<String>,
    /// The index of the declaration that covers it, if any.
    pub declaration: Option<usize>,
    /// The function is registered with `no-writes`: it runs with
    /// `FCALL_RO` (which refuses any other function, even one that writes
    /// nothing).
    pub read_only: bool,
    /// Every way the callback can end.
    pub returns: Vec<ReturnSite>,
    /// What the callback does, for its review and its ACL rules.
    pub review: Review,
    /// The error replies the callback can return.
    pub error_codes: ErrorCodes,
    /// The prefixes the callback builds keys from, which each call checks.
    pub key_prefixes: KeyPrefixes,
    /// Where the callback expression is written in the source (bytes), so
    /// that the source sent can wrap it ([`sent::library`](crate::emit::sent::library)).
    pub callback: std::ops::Range<usize>,
}
