//! Static analysis of Redis Lua scripts, for `redis-script`'s attribute and
//! its command-line checker.
//!
//! **This crate is internal.** It is published because `redis-script`'s
//! macros and `redis-script-check` depend on it, and its API follows what
//! they need: any release may change or remove any item, whatever its
//! version number says. Check scripts with `#[redis_script]` or with the
//! `redis-script-check` command instead; both carry the semver promise.
//!
//! The crate knows nothing about `proc_macro`: [`analyze`] takes the script
//! source and what the caller declares about its inputs ([`Signature`]), and
//! returns diagnostics (with `line:column` positions inside the `.lua` file)
//! plus the facts a code generator needs (read-only, return shapes, header
//! docs, error codes).
//!
//! ```
//! use redis_script_analysis::{Signature, analyze};
//!
//! let signature = Signature { keys: 1, ..Signature::default() };
//! let analysis = analyze("return redis.call('GET', KEYS[2])", &signature);
//! for error in analysis.errors() {
//!     println!("{}:{}: {}", error.line, error.column, error.message);
//! }
//! assert!(analysis.errors().any(|error| error.message.contains("KEYS[2]")));
//! ```

// The analysis runs inside the compiler on user input: it reports problems
// as diagnostics, it never panics.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

// The layers, each in its folder, each naming only the layers before it
// (`tests::layers` reads the module graph and keeps it so): `source` is the
// text, `model` the servers, `domain` what the walk computes with and what
// the analysis reports, `interp` walks, `findings` observe the walk through
// its hooks, `emit` writes what is sent and reviewed, and `pipeline` runs
// the phases in order. This file only declares them and re-exports.
mod domain;
mod emit;
mod findings;
mod interp;
mod model;
mod pipeline;
mod source;
#[cfg(test)]
mod tests;

// The modules the macros, the command-line checker and the tests use by
// name, at the paths they have always had.
pub use emit::{acl, exactly_once, sent};
pub use model::{commands, sandbox, target};
pub use source::{suggest, text};

pub use domain::analysis::{Analysis, ErrorCodes, ReplyForm, ReturnShape, ReturnSite, ValueKind};
pub use domain::json::{
    EncodedField, EncodedKind, JsonEncoded, JsonPath, JsonRead, JsonStep, JsonUse, LiteralKind,
};
pub use domain::keys::KeyPrefixes;
pub use domain::library::{
    DeclaredFunction, LibraryAnalysis, LibrarySignature, RegisteredFunction,
};
pub use domain::replies::reply_lua_types;
pub use domain::review::{CommandUse, KeyTaken, LoopBound, LoopSite, ReadSite, Review, TakenKey};
pub use domain::signature::{ArgType, DeclaredBy, SentAs, Signature};
pub use model::declared::{COMMANDS_VARIABLE, DeclarationError, DeclaredCommands};
pub use model::target::{TARGET_VARIABLE, Target, TargetError, TargetScope};
pub use pipeline::library::analyze_library;
pub use pipeline::{INTERNAL_ERROR, analyze, parses_as_lua};
pub use source::code::{Code, Level};
pub use source::diagnostic::{
    DENY_WARNINGS_VARIABLE, Diagnostic, Parameter, Severity, denies_warnings,
};
pub use source::header::{Header, ParamDoc};
pub use source::shebang::{ScriptFlags, is_library};
