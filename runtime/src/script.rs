//! A script as the macro embeds it: name, body, and compile-time facts.

use redis_script_codes::NOSCRIPT;

/// One Lua script embedded in the binary by `#[redis_script]`.
///
/// Everything is computed at compile time: the SHA1 that `EVALSHA` needs,
/// whether the script only reads (so `EVALSHA_RO` is used), and whether it
/// declared `#!lua flags=allow-cross-slot-keys`. Each generated function has
/// one `Script` constant, reachable as `<function name>::SCRIPT`.
#[derive(Debug)]
pub struct Script {
    name: &'static str,
    path: &'static str,
    source: &'static str,
    sha1: &'static str,
    read_only: bool,
    allow_cross_slot_keys: bool,
    returned_errors: ReturnedErrors,
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
    }
}

impl Script {
    /// The Rust function name the script was declared with.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The `.lua` path as written in the attribute.
    pub const fn path(&self) -> &'static str {
        self.path
    }

    /// The Lua source, exactly as sent with `EVAL` / `SCRIPT LOAD`.
    pub const fn source(&self) -> &'static str {
        self.source
    }

    /// Lowercase hex SHA1 of the source: the script's id for `EVALSHA`.
    pub const fn sha1(&self) -> &'static str {
        self.sha1
    }

    /// True when the script may build an error reply that reads like the
    /// server's `NOSCRIPT` (its error texts are computed at run time): its
    /// calls are sent as `EVAL` with the body, which the server never
    /// answers with `NOSCRIPT`, so such a reply is always the script's own.
    pub(crate) fn may_imitate_noscript(&self) -> bool {
        self.returned_errors.may_return(NOSCRIPT)
    }

    /// True when no write command is reachable from the script, so it runs
    /// with `EVALSHA_RO` (allowed on replicas, safe to retry).
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
