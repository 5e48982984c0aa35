//! A script as the macro embeds it: name, body, and compile-time facts.

use redis_script_codes::NOSCRIPT;

use crate::exactly_once::ExactlyOnce;
use crate::library::Library;

/// One Lua script embedded in the binary by `#[redis_script]`, or one
/// function of a library embedded by `#[redis_library]`.
///
/// Everything is computed at compile time: the SHA1 that `EVALSHA` needs,
/// whether the script only reads (so `EVALSHA_RO` is used), and whether it
/// declared `#!lua flags=allow-cross-slot-keys`. Each generated function has
/// one `Script` constant, reachable as `<function name>::SCRIPT`.
///
/// A function of a library ([`Script::library`] is `Some`) is called with
/// `FCALL <function> …` (`FCALL_RO` when it declares the `no-writes` flag);
/// its source and SHA1 are those of the whole library.
#[derive(Debug)]
pub struct Script {
    name: &'static str,
    path: &'static str,
    source: &'static str,
    sha1: &'static str,
    read_only: bool,
    allow_cross_slot_keys: bool,
    returned_errors: ReturnedErrors,
    kind: Kind,
    exactly_once: Option<ExactlyOnce>,
}

/// How a [`Script`] runs on the server.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `EVALSHA`/`EVAL` of the script's own source.
    Eval,
    /// `FCALL` of a function registered by a library.
    Function(&'static Library),
}

/// The error codes a script can return as they are (`redis.error_reply`,
/// `{err = …}`, forwarded `redis.pcall` results), as the compile-time
/// analysis found them. A server refusal with one of these codes cannot be
/// told apart from the script's own reply.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ReturnedErrors {
    codes: &'static [&'static str],
    forwards_command_errors: bool,
    unknown: bool,
}

/// Used by generated code only: what the analysis found out about the
/// script's error replies.
pub const fn returned_errors(
    codes: &'static [&'static str],
    forwards_command_errors: bool,
    unknown: bool,
) -> ReturnedErrors {
    ReturnedErrors {
        codes,
        forwards_command_errors,
        unknown,
    }
}

impl ReturnedErrors {
    /// Whether the script may reply with an error of this code. Commands
    /// called from a script never answer `NOSCRIPT` (scripts cannot call
    /// scripts), so only a reply built at run time can carry it.
    pub(crate) fn may_return(&self, code: &str) -> bool {
        self.unknown
            || self.codes.contains(&code)
            || (self.forwards_command_errors && code != NOSCRIPT)
    }

    /// Whether the script may reply `ERR Function not found` itself. No
    /// command a function can call answers with it (`FCALL` and `FUNCTION`
    /// are refused inside scripts), so only an `ERR` reply the function
    /// returns can: one built at run time, or a literal `ERR` reply (whose
    /// text the analysis does not record).
    pub(crate) fn may_return_function_not_found(&self) -> bool {
        self.unknown || self.codes.contains(&"ERR")
    }
}

/// Used by generated code only; the macro guarantees that `sha1` is the
/// lowercase hex SHA1 of `source`.
pub const fn new_script(
    name: &'static str,
    path: &'static str,
    source: &'static str,
    sha1: &'static str,
    read_only: bool,
    allow_cross_slot_keys: bool,
    returned_errors: ReturnedErrors,
) -> Script {
    Script {
        name,
        path,
        source,
        sha1,
        read_only,
        allow_cross_slot_keys,
        returned_errors,
        kind: Kind::Eval,
        exactly_once: None,
    }
}

/// Used by generated code only: the function `name` that `library`
/// registers (`redis.register_function`), called with `FCALL`.
///
/// `read_only` must be true only when the function declares the
/// `no-writes` flag: `FCALL_RO` refuses every other function, even one
/// that writes nothing.
pub const fn new_function(
    library: &'static Library,
    name: &'static str,
    read_only: bool,
    allow_cross_slot_keys: bool,
    returned_errors: ReturnedErrors,
) -> Script {
    Script {
        name,
        path: library.path(),
        source: library.source(),
        sha1: library.sha1(),
        read_only,
        allow_cross_slot_keys,
        returned_errors,
        kind: Kind::Function(library),
        exactly_once: None,
    }
}

/// Used by generated code only: `script` declared `exactly_once`. Its
/// `source` and `sha1` must be those of the wrapped script
/// (`redis_script_analysis::exactly_once::wrap`), which never runs
/// read-only.
pub const fn with_exactly_once(mut script: Script, exactly_once: ExactlyOnce) -> Script {
    script.exactly_once = Some(exactly_once);
    script.read_only = false;
    script
}

impl Script {
    /// The Rust function name the script was declared with; for a function
    /// of a library, the name the library registers it under (`FCALL`'s
    /// first argument), which is also the Rust name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The `.lua` path as written in the attribute (for a function, its
    /// library's file).
    pub const fn path(&self) -> &'static str {
        self.path
    }

    /// The Lua source, exactly as sent with `EVAL` / `SCRIPT LOAD`; for a
    /// function, the code of its whole library, as sent with `FUNCTION LOAD`.
    /// For a script declared `exactly_once`, the `.lua` file wrapped in the
    /// code that records and replays its replies (the file's lines keep
    /// their numbers).
    pub const fn source(&self) -> &'static str {
        self.source
    }

    /// Lowercase hex SHA1 of the source: the script's id for `EVALSHA`; for
    /// a function, the SHA1 of its library's code ([`Library::sha1`]).
    pub const fn sha1(&self) -> &'static str {
        self.sha1
    }

    /// The library that registers this function, or `None` for a script
    /// run with `EVALSHA`.
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// let library = quota_lib::quota_peek::SCRIPT.library().map(|library| library.name());
    /// assert_eq!(library, Some("quota_lib"));
    /// ```
    pub const fn library(&self) -> Option<&'static Library> {
        match self.kind {
            Kind::Eval => None,
            Kind::Function(library) => Some(library),
        }
    }

    /// How the script records its calls, when declared `exactly_once`:
    /// every call then carries a [`CallId`](crate::CallId), and a call sent
    /// again with the same id returns the first execution's reply instead
    /// of running the script again.
    pub const fn exactly_once(&self) -> Option<&ExactlyOnce> {
        self.exactly_once.as_ref()
    }

    /// True for a function of a library (called with `FCALL`).
    pub(crate) const fn is_function(&self) -> bool {
        matches!(self.kind, Kind::Function(_))
    }

    /// True when the function may build an error reply that reads like the
    /// server's `ERR Function not found`: such a reply may then be its own,
    /// so the runtime never loads its library on it (see
    /// [`Error::NotLoaded`](crate::Error::NotLoaded)).
    pub(crate) fn may_imitate_function_not_found(&self) -> bool {
        self.returned_errors.may_return_function_not_found()
    }

    /// True when the script may build an error reply that reads like the
    /// server's `NOSCRIPT` (its error texts are computed at run time): its
    /// calls are sent as `EVAL` with the body, which the server never
    /// answers with `NOSCRIPT`, so such a reply is always the script's own.
    pub(crate) fn may_imitate_noscript(&self) -> bool {
        !self.is_function() && self.returned_errors.may_return(NOSCRIPT)
    }

    /// True when no write command is reachable from the script, so it runs
    /// with `EVALSHA_RO` (allowed on replicas, safe to retry); for a
    /// function, when it declares the `no-writes` flag, so it runs with
    /// `FCALL_RO`.
    pub const fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// True when the script declares `#!lua flags=allow-cross-slot-keys`,
    /// which turns off the client-side same-slot check.
    pub const fn allows_cross_slot_keys(&self) -> bool {
        self.allow_cross_slot_keys
    }

    pub(crate) fn returned_errors(&self) -> &ReturnedErrors {
        &self.returned_errors
    }

    pub(crate) fn sha1_prefix(&self) -> &'static str {
        self.sha1.get(..8).unwrap_or(self.sha1)
    }
}
