//! A script as the macro embeds it: name, body, and compile-time facts.

use crate::exactly_once::ExactlyOnce;
use crate::library::Library;
use crate::replicas::ReadFrom;

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
    kind: Kind,
    exactly_once: Option<ExactlyOnce>,
    key_prefixes: KeyPrefixes,
    /// `read_from = "…"` of the attribute: where its calls read.
    read_from: Option<ReadFrom>,
}

/// The KEYS elements a script builds other keys from by appending to
/// them (`KEYS[1] .. id`), which each call checks for a hash tag.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KeyPrefixes {
    /// Positions (1-based).
    pub keys: &'static [usize],
    /// A key is built from an element at an index computed at run time:
    /// every key is a prefix.
    pub every_key: bool,
}

/// How a [`Script`] runs on the server.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `EVALSHA`/`EVAL` of the script's own source.
    Eval,
    /// `FCALL` of a function registered by a library, by the name of its
    /// twin that marks its errors.
    Function {
        library: &'static Library,
        called_as: &'static str,
    },
}

/// Used by generated code only; the macro guarantees that `sha1` is the
/// lowercase hex SHA1 of `source`, and that `source` marks every error the
/// script ends with ([`redis_script_codes::marks`]).
pub const fn new_script(
    name: &'static str,
    path: &'static str,
    source: &'static str,
    sha1: &'static str,
    read_only: bool,
    allow_cross_slot_keys: bool,
) -> Script {
    Script {
        name,
        path,
        source,
        sha1,
        read_only,
        allow_cross_slot_keys,
        kind: Kind::Eval,
        exactly_once: None,
        key_prefixes: KeyPrefixes {
            keys: &[],
            every_key: false,
        },
        read_from: None,
    }
}

/// Used by generated code only: the function `name` that `library`
/// registers (`redis.register_function`), called with `FCALL` by the name
/// `called_as` of the twin the library's sent code registers beside it,
/// which marks every error the function ends with.
///
/// `read_only` must be true only when the function declares the
/// `no-writes` flag: `FCALL_RO` refuses every other function, even one
/// that writes nothing.
pub const fn new_function(
    library: &'static Library,
    name: &'static str,
    called_as: &'static str,
    read_only: bool,
    allow_cross_slot_keys: bool,
) -> Script {
    Script {
        name,
        path: library.path(),
        source: library.source(),
        sha1: library.sha1(),
        read_only,
        allow_cross_slot_keys,
        kind: Kind::Function { library, called_as },
        exactly_once: None,
        key_prefixes: KeyPrefixes {
            keys: &[],
            every_key: false,
        },
        read_from: None,
    }
}

/// Used by generated code only: `script` declared `exactly_once`. Its
/// `source` and `sha1` must be those of the wrapped script
/// (`redis_script_analysis::sent::script` with `exactly_once`), which never runs
/// read-only.
pub const fn with_exactly_once(mut script: Script, exactly_once: ExactlyOnce) -> Script {
    script.exactly_once = Some(exactly_once);
    script.read_only = false;
    script
}

/// Used by generated code only: the attribute's `read_from`. The macro
/// refuses a policy that reads replicas for a script that may write.
pub const fn with_read_from(mut script: Script, read_from: ReadFrom) -> Script {
    script.read_from = Some(read_from);
    script
}

/// Used by generated code only: the script (or function) builds keys by
/// appending to the KEYS elements at these positions (1-based; with
/// `every_key`, to any of them), as the analysis proved. A call checks
/// that each such key holds a complete hash tag.
pub const fn with_key_prefixes(
    mut script: Script,
    keys: &'static [usize],
    every_key: bool,
) -> Script {
    script.key_prefixes = KeyPrefixes { keys, every_key };
    script
}

impl Script {
    /// The Rust function name the script was declared with; for a function
    /// of a library, the name the library registers it under, which is
    /// also the Rust name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// For a function of a library, the name `FCALL` calls it by: its
    /// twin, which the library's sent code registers beside it to run the
    /// same callback with every error it ends with marked (other clients
    /// call the function by its own name, and see its errors as the file
    /// writes them). The name carries a hash of the library's code, so a
    /// call never runs another version of the library. `None` for a
    /// script.
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// let called_as = quota_lib::quota_peek::SCRIPT.function_name().unwrap_or_default();
    /// assert!(called_as.starts_with("quota_peek__redis_script_"));
    /// ```
    pub const fn function_name(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Eval => None,
            Kind::Function { called_as, .. } => Some(called_as),
        }
    }

    /// The `.lua` path as written in the attribute (for a function, its
    /// library's file).
    pub const fn path(&self) -> &'static str {
        self.path
    }

    /// The Lua source, exactly as sent with `EVAL` / `SCRIPT LOAD`; for a
    /// function, the code of its whole library, as sent with `FUNCTION LOAD`.
    ///
    /// It is the `.lua` file wrapped in a few lines that run it under
    /// `xpcall` and mark every error it ends with, returned or raised, so
    /// that none can be mistaken for the server's refusals
    /// ([`redis_script_codes::marks`]); for a script declared
    /// `exactly_once`, also in the code that records and replays its
    /// replies. The file's lines keep their numbers. For a library, the
    /// file with a marked twin registered beside each function (see
    /// [`Script::function_name`]). So the SHA1 of a script is not the
    /// file's: `SCRIPT LOAD` of the file caches another script, which this
    /// crate never calls.
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
            Kind::Function { library, .. } => Some(library),
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
        matches!(self.kind, Kind::Function { .. })
    }

    /// True when no write command is reachable from the script, so it runs
    /// with `EVALSHA_RO` (allowed on replicas, safe to retry); for a
    /// function, when it declares the `no-writes` flag, so it runs with
    /// `FCALL_RO`.
    pub const fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Where its calls read, as the attribute says (`read_from = "…"`):
    /// `None` leaves it to the connection. A call may say otherwise
    /// ([`Call::read_from`](crate::Call::read_from)).
    pub const fn read_from(&self) -> Option<ReadFrom> {
        self.read_from
    }

    /// True when the script declares `#!lua flags=allow-cross-slot-keys`,
    /// which turns off the client-side same-slot check.
    pub const fn allows_cross_slot_keys(&self) -> bool {
        self.allow_cross_slot_keys
    }

    /// Whether the script builds keys from any of its KEYS elements.
    pub(crate) const fn builds_keys_from_keys(&self) -> bool {
        self.key_prefixes.every_key || !self.key_prefixes.keys.is_empty()
    }

    /// Whether the call's key at `position` (1-based) is a prefix the
    /// script builds other keys from.
    pub(crate) fn builds_keys_from(&self, position: usize) -> bool {
        self.key_prefixes.every_key || self.key_prefixes.keys.contains(&position)
    }

    pub(crate) fn sha1_prefix(&self) -> &'static str {
        self.sha1.get(..8).unwrap_or(self.sha1)
    }
}
