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

// The phases, each in its folder; a lower layer never imports a higher one
// (`tests::layers` keeps it so): `source` and `model` know nothing of the
// walk, `domain` is what the walk computes with, `interp` walks, `findings`
// read what it proves, `emit` writes what is sent and reviewed.
mod domain;
mod emit;
mod findings;
mod interp;
mod model;
mod source;
#[cfg(test)]
mod tests;

// The modules the macros, the command-line checker and the tests use by
// name, at the paths they have always had.
pub use emit::{acl, exactly_once, sent};
pub use model::{commands, sandbox, target};
pub use source::{suggest, text};

pub use domain::keys::KeyPrefixes;
pub use emit::review::{CommandUse, KeyTaken, LoopBound, LoopSite, ReadSite, Review, TakenKey};
pub use model::command_replies::reply_lua_types;
pub use model::declared::{COMMANDS_VARIABLE, DeclarationError, DeclaredCommands};
pub use source::code::{Code, Level};
pub use source::diagnostic::{Diagnostic, Severity};

/// The environment variable that makes warnings fail the build (`1`),
/// for a crate that wants every finding fixed or silenced.
pub const DENY_WARNINGS_VARIABLE: &str = "REDIS_SCRIPT_DENY_WARNINGS";

/// Whether a value of [`DENY_WARNINGS_VARIABLE`] turns warnings on:
/// `1`, `true` or `yes`.
pub fn denies_warnings(value: &str) -> bool {
    matches!(value.trim(), "1" | "true" | "yes")
}
pub use interp::library::{
    DeclaredFunction, LibraryAnalysis, LibrarySignature, RegisteredFunction, analyze_library,
    is_library,
};
pub use model::target::TARGET_VARIABLE;
pub use model::target::{Target, TargetError, TargetScope};
pub use source::header::{Header, ParamDoc};
pub use source::shebang::ScriptFlags;

/// Whether `source` parses as Lua 5.1, the language Redis compiles
/// scripts with: for tools deciding whether a text is a script at all.
pub fn parses_as_lua(source: &str) -> bool {
    source::syntax::Prepared::new(source).parse().is_ok()
}

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
    /// The arguments (1-based ARGV positions) declared key prefixes: a
    /// key built by appending to one is checked like a key built from a
    /// KEYS element, and each call checks the prefix's hash tag.
    pub key_prefix_args: std::collections::BTreeSet<usize>,
    /// The script runs with `EVAL_RO`/`EVALSHA_RO` (the command line's
    /// `--read-only`), which refuses writes as `#!lua flags=no-writes` does.
    pub read_only: bool,
    /// Where the counts come from, so that messages say what to change.
    pub declared_by: DeclaredBy,
    /// The servers the script must run on (default: any supported server).
    pub target: Target,
    /// Commands the project declares (the escape hatch for commands the
    /// model does not know).
    pub declared_commands: DeclaredCommands,
    /// The names of the fixed key parameters, in order, when the
    /// declaration has names (the Rust function's parameters). A name
    /// starting with `_` may go unread, as in Rust.
    pub key_names: Vec<String>,
    /// The names of the fixed argument parameters, in order.
    pub arg_names: Vec<String>,
    /// Value findings silenced for the whole script (the attribute's
    /// `allow(…)`, the command line's `--allow`): see [`Code::findings`].
    pub allow: Vec<String>,
}

/// A declared parameter, for diagnostics about the parameter itself
/// rather than a place in the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// `KEYS[n]`, 1-based.
    Key(usize),
    /// `ARGV[n]`, 1-based.
    Arg(usize),
}

/// Who declares a script's keys and arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeclaredBy {
    /// The parameters of the `#[redis_script]` function.
    #[default]
    RustFunction,
    /// The script's header comment: `-- KEYS[1] = …`, `-- ARGV[2..] = …`.
    Header,
    /// The command-line checker's `--keys` and `--args` options.
    CommandLine,
    /// The command-line checker's configuration file, `redis-script.toml`
    /// (a section's `keys` and `args`).
    Configuration,
    /// A script embedded in another language's source: the counts its
    /// call passes (`redis.NewScript(1, …)`, `eval(src, 2, …)`), and where
    /// the call states none, the indices the script reads.
    HostCall,
}

impl DeclaredBy {
    /// The subject of "… declares 2 keys".
    pub(crate) fn subject(self) -> &'static str {
        match self {
            DeclaredBy::RustFunction => "the Rust function",
            DeclaredBy::Header => "the script's header",
            DeclaredBy::CommandLine => "the command line",
            DeclaredBy::Configuration => "the configuration",
            DeclaredBy::HostCall => "the call in the host file",
        }
    }
}

/// Everything the analysis found out about one script.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Errors and notes, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
    /// No write command is reachable, or the script declares `no-writes`.
    pub read_only: bool,
    /// The `#!lua flags=...` first line, if any.
    pub flags: ScriptFlags,
    /// The leading comment block.
    pub header: Header,
    /// The prefixes the script builds keys from (`KEYS[1] .. id`): each
    /// call checks that they hold a `{hash tag}` in the slot of its keys.
    pub key_prefixes: KeyPrefixes,
    /// Every way the script can end: each `return`, each `error(...)`
    /// raising a reply table, and falling off the end of the chunk.
    pub returns: Vec<ReturnSite>,
    /// The codes of the error replies the script can end with.
    pub error_codes: ErrorCodes,
    /// The main chunk uses `...` outside any function (always empty in a
    /// script, but the wrapper of [`exactly_once`] must keep it legal).
    pub chunk_varargs: bool,
    /// What a reviewer checks: commands, loops and their bounds, reads
    /// that grow with the data.
    pub review: Review,
}

/// The codes of the error replies a script can end with (returned, or
/// raised as a table), found from every way a table gets a string `err`
/// field: literal and computed table keys, field assignments, `rawset`,
/// `redis.error_reply`, caught command errors, decoded data, RESP3 maps.
/// The contract checks compare them with a declared error type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorCodes {
    /// Codes of literal messages: `redis.error_reply('CONFLICT …')`.
    pub codes: std::collections::BTreeSet<String>,
    /// `redis.pcall` results may be returned: any error of a command the
    /// script calls (never `NOSCRIPT`: scripts cannot call scripts).
    pub forwards_command_errors: bool,
    /// Some error reply's text is built at run time: it may have any code.
    pub unknown: bool,
}

impl ErrorCodes {
    /// Whether the script may end with an error reply of this code.
    pub fn may_return(&self, code: &str) -> bool {
        self.unknown
            || self.codes.contains(code)
            || (self.forwards_command_errors && code != redis_script_codes::NOSCRIPT)
    }
}

impl Analysis {
    /// The diagnostics that fail the build.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == Severity::Error)
    }
}

/// One place where the script produces its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnSite {
    pub line: usize,
    pub column: usize,
    /// Characters to underline when pointing at this site.
    pub width: usize,
    pub shape: ReturnShape,
    /// For `redis.error_reply('WORD')` with a one-word message: the word,
    /// which the server sends as `ERR WORD` (its code is then `ERR`).
    pub lone_error_word: Option<String>,
}

/// What a reply looks like, as far as the source tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReturnShape {
    /// A table constructor whose first element is a string literal:
    /// `{'DENIED', count, retry}`. `elements` are the ones after the tag;
    /// `open_ended` when the last one is a call or `...` (count unknown).
    Tagged {
        tag: String,
        elements: Vec<ValueKind>,
        open_ended: bool,
    },
    /// Any other array-style table constructor.
    Array {
        elements: Vec<ValueKind>,
        open_ended: bool,
    },
    /// `redis.status_reply('X')` or `{ok = 'X'}`; `None` if not a literal.
    Status(Option<String>),
    /// `redis.error_reply('CODE msg')`, `{err = 'CODE msg'}` or
    /// `error(...)`: the leading upper-case word of a literal message.
    Error(Option<String>),
    /// `return nil` or a bare `return`.
    Nil,
    /// The end of the chunk is reachable without a `return` (a nil reply).
    FallsOffEnd,
    /// A scalar literal or an expression of unknown shape.
    Value(ValueKind),
}

/// The kind of one Lua value, as far as the source tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    Integer,
    Float,
    /// The literal text, when known.
    String(Option<String>),
    Boolean(bool),
    Nil,
    Table,
    /// Some value, or nil or false (which arrives as nil): a missing
    /// key's reply, `tonumber` of an input.
    MaybeNil,
    Unknown,
}

/// Parses `source` as Lua 5.1 and checks it against `signature`.
///
/// Never panics; every problem becomes a [`Diagnostic`].
pub fn analyze(source: &str, signature: &Signature) -> Analysis {
    let prepared = source::syntax::Prepared::new(source);
    guarded(&prepared, internal_error, || {
        analyze_here(source, &prepared, signature)
    })
}

/// Runs an analysis so that it never takes the compiler down. The parser
/// recurses once per nesting level and, in the unoptimised builds proc
/// macros get, needs far more stack per level than a compiler thread may
/// have left. Real scripts nest a handful of levels: they run here. Deeper
/// ones (the nesting is capped, see `syntax`) run on a thread with room for
/// the cap; spawning it costs milliseconds.
fn guarded<T: Send>(
    prepared: &source::syntax::Prepared,
    on_panic: fn() -> T,
    run: impl Fn() -> T + Send + Sync,
) -> T {
    if prepared.depth() <= SHALLOW_NESTING {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(&run))
            .unwrap_or_else(|_panic| on_panic());
    }
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("redis-script-lua-analysis".into())
            .stack_size(ANALYSIS_STACK_BYTES)
            .spawn_scoped(scope, &run)
            .map(|handle| handle.join())
    });
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => on_panic(),
        // No thread to be had: the caller's stack, still never a panic.
        Err(_no_thread) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(&run))
            .unwrap_or_else(|_panic| on_panic()),
    }
}

/// Nesting analysed on the caller's stack: about 80 KiB per level
/// unoptimised, so well under the smallest stack a compiler thread has.
const SHALLOW_NESTING: usize = 24;

const ANALYSIS_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Prefix of the diagnostic reporting a bug of the analysis itself.
pub const INTERNAL_ERROR: &str = "internal error in the Lua analysis";

fn internal_error() -> Analysis {
    Analysis {
        diagnostics: vec![internal_error_diagnostic()],
        ..Analysis::default()
    }
}

fn internal_error_diagnostic() -> Diagnostic {
    Diagnostic::error(
        Code::InternalError,
        1,
        1,
        1,
        format!("{INTERNAL_ERROR}: it stopped on this script"),
    )
    .with_help("please report this script to the redis-script maintainers")
}

fn analyze_here(
    source: &str,
    prepared: &source::syntax::Prepared,
    signature: &Signature,
) -> Analysis {
    let flags_result = source::shebang::parse(source);
    if let Some(name) = &flags_result.library_name {
        return Analysis {
            diagnostics: vec![interp::library::given_as_script(source, name)],
            ..Analysis::default()
        };
    }
    let header = source::header::parse(source);
    let mut diagnostics = flags_result.diagnostics;
    let flags = flags_result.flags;
    diagnostics.extend(source::header::contradictions(&header, signature));

    let mut analysis = Analysis {
        flags: flags.clone(),
        header,
        ..Analysis::default()
    };
    match prepared.parse() {
        Ok(ast) => {
            let outcome = interp::run(source, &ast, signature, &flags, &analysis.header);
            diagnostics.extend(outcome.diagnostics);
            analysis.returns = outcome.returns;
            analysis.error_codes = outcome.error_codes;
            analysis.review = outcome.review;
            analysis.key_prefixes = outcome.key_prefixes;
            analysis.read_only = flags.no_writes || !outcome.may_write;
            analysis.chunk_varargs = outcome.chunk_varargs;
        }
        Err(syntax_errors) => {
            diagnostics.extend(syntax_errors);
            analysis.error_codes.unknown = true;
            analysis.read_only = flags.no_writes;
        }
    }
    analysis.diagnostics =
        finish_diagnostics(source, silence(source, &signature.allow, diagnostics));
    analysis
}

/// Drops the findings the script's comments or `allowed` silence, and
/// adds the errors of opt-outs that name no finding.
pub(crate) fn silence(
    source: &str,
    allowed: &[String],
    mut diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let (silenced, errors) = findings::allow::silenced(source, allowed);
    diagnostics.retain(|diagnostic| !silenced.covers(diagnostic));
    diagnostics.extend(errors);
    diagnostics
}

/// Keeps every position inside the source, sorts by position and drops
/// duplicates (a callback registered twice is walked twice).
fn finish_diagnostics(source: &str, mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let end = source::diagnostic::SourceEnd::of(source);
    for diagnostic in &mut diagnostics {
        diagnostic.keep_within(&end);
    }
    diagnostics.sort_by_key(|diagnostic| (diagnostic.line, diagnostic.column));
    diagnostics.dedup();
    diagnostics
}
