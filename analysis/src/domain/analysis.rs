//! What the analysis reports about one script: its diagnostics, whether
//! it writes, every way it ends and the shape of each reply, the error
//! codes it can end with, and the facts its review and its calls use.

use crate::domain::json::{JsonEncoded, JsonRead};
use crate::domain::keys::KeyPrefixes;
use crate::domain::review::Review;
use crate::source::diagnostic::{Diagnostic, Severity};
use crate::source::header::Header;
use crate::source::shebang::ScriptFlags;

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
    /// script, but the wrapper of [`exactly_once`](crate::exactly_once) must keep it legal).
    pub chunk_varargs: bool,
    /// What a reviewer checks: commands, loops and their bounds, reads
    /// that grow with the data.
    pub review: Review,
    /// What the script reads from its `Json<T>` arguments, and how it
    /// uses each part: the attribute checks them against `T`.
    pub json_reads: Vec<JsonRead>,
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
    /// For `return cjson.encode(t)`: the fields of `t`, where known.
    pub encoded: Option<JsonEncoded>,
    /// For a command's reply returned as it came (`return
    /// redis.call('HGETALL', KEYS[1])`, or through a local no write
    /// changed): the form the server model gives it on every release the
    /// script targets, when that form decides what the reply decodes into.
    pub form: Option<ReplyForm>,
}

/// The form of a command's reply that the contract checks compare with
/// the declared reply type: each is one redis-rs decodes only into some
/// types, whatever the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyForm {
    /// Field names and values in turn (`HGETALL`, and every reply the
    /// model describes as a map, sent flat by RESP2): no positional struct
    /// or tagged enum takes it.
    FieldValues {
        /// The command as written, upper case (`HGETALL`).
        command: String,
        /// Its key argument as written (`KEYS[1]`), for the suggested fix.
        key: Option<String>,
    },
    /// A status reply (`+OK`) or, on some calls, nil: `SET`, `MSET`,
    /// `LTRIM`, `SET … NX`.
    Status {
        /// The command as written, upper case (`SET`).
        command: String,
        /// Every status text it may reply with.
        texts: Vec<String>,
    },
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
