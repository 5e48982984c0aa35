//! Redis error codes, as `redis-script` reads them, and the other rules
//! its crates must share: the codes the server answers with on its own and
//! what each means ([`server`]), how the source sent marks a script's
//! errors ([`marks`]), the "did you mean" policy ([`suggest`]), the
//! layout of an exactly-once call ([`once`]) and the known vulnerabilities
//! of the servers' Lua engine per release ([`lua_advisories`]).
//!
//! An error reply is a code followed by a message: `CONFLICT expected 3
//! found 4`. A script returns one with `redis.error_reply('CONFLICT …')` or
//! `{err = 'CONFLICT …'}`, and clients read the code to decide what the
//! error means. The analysis of a script, the `ScriptError` derive and the
//! runtime must agree on what that code is, so this crate is the one place
//! that says it. It has no dependencies: the runtime, which every user of
//! `redis-script` compiles, depends on it.
//!
//! ```
//! use redis_script_codes::{is_error_code, reserved, split_error_reply};
//!
//! let (code, rest) = split_error_reply("CONFLICT expected 3 found 4");
//! assert_eq!((code, rest), ("CONFLICT", "expected 3 found 4"));
//! assert!(is_error_code(code));
//! assert!(reserved(code).is_none());
//! assert!(reserved("MOVED").is_some());
//! ```

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod lua_advisories;
pub mod marks;
pub mod once;
pub mod server;
pub mod suggest;

/// Whether `word` is an error code: an ASCII upper-case letter followed by
/// upper-case letters, digits, `_` and `-` (`CONFLICT`, `NOT_FOUND`,
/// `E2BIG`, `RATE-LIMITED`).
///
/// That is the convention of the server's own codes, and the words the
/// analysis takes for codes when it checks a script's error replies
/// against the error type: a declared code outside it would never be
/// checked against the script.
pub fn is_error_code(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|first| first.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Splits the text of an error reply into its code and the rest, as
/// clients do: the code is everything before the first space, the rest
/// everything after it (`""` when there is no space). The first word is
/// the code whether or not it [is one](is_error_code): clients do not
/// check.
///
/// A leading `-` is not part of the code: it is the protocol's mark of an
/// error, which `redis.error_reply('-CONFLICT …')` drops.
pub fn split_error_reply(message: &str) -> (&str, &str) {
    let message = message.strip_prefix('-').unwrap_or(message);
    message.split_once(' ').unwrap_or((message, ""))
}

pub use server::{
    ASK, EXECABORT, FUNCTION_NOT_FOUND, MOVED, NOPERM, NOSCRIPT, SERVER_CODES, ServerCode,
    is_refusal, server_code,
};

/// An error code that clients act on by themselves, and what they do: a
/// script replying with one would be sent again, and a script that writes
/// would run twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    /// The code: `MOVED`.
    pub code: &'static str,
    /// What clients do when they read it, for messages that say the code
    /// belongs to the server.
    pub reason: &'static str,
}

/// The code's entry when clients act on it by themselves (see
/// [`ServerCode::clients_act`]). Codes are compared exactly, as clients
/// compare them.
pub fn reserved(code: &str) -> Option<Reserved> {
    let entry = server_code(code)?;
    Some(Reserved {
        code: entry.code(),
        reason: entry.clients_act()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_upper_case_words() {
        for code in ["CONFLICT", "NOT_FOUND", "E2BIG", "RATE-LIMITED", "X", "ERR"] {
            assert!(is_error_code(code), "{code}");
        }
        for word in [
            "",
            "conflict",
            "Conflict",
            "NOT FOUND",
            "NOT\tFOUND",
            "_PRIVATE",
            "2BIG",
            "-CONFLICT",
            "ÉTAT",
            "CAFÉ",
        ] {
            assert!(!is_error_code(word), "{word:?}");
        }
    }

    #[test]
    fn a_reply_splits_at_its_first_space() {
        assert_eq!(
            split_error_reply("CONFLICT expected 3 found 4"),
            ("CONFLICT", "expected 3 found 4")
        );
        assert_eq!(split_error_reply("GONE"), ("GONE", ""));
        assert_eq!(split_error_reply("GONE "), ("GONE", ""));
        assert_eq!(split_error_reply("A  two spaces"), ("A", " two spaces"));
        assert_eq!(split_error_reply("-CONFLICT now"), ("CONFLICT", "now"));
        assert_eq!(
            split_error_reply("TAB\tis not a separator"),
            ("TAB\tis", "not a separator")
        );
        assert_eq!(split_error_reply("lower case"), ("lower", "case"));
        assert_eq!(split_error_reply(""), ("", ""));
    }

    #[test]
    fn the_codes_clients_act_on_are_reserved() {
        let reserved_codes: Vec<&str> = SERVER_CODES
            .iter()
            .filter_map(|entry| reserved(entry.code()))
            .inspect(|entry| assert!(!entry.reason.is_empty(), "{}", entry.code))
            .map(|entry| entry.code)
            .collect();
        assert_eq!(
            reserved_codes,
            [
                NOSCRIPT,
                "LOADING",
                "READONLY",
                "MASTERDOWN",
                MOVED,
                ASK,
                "TRYAGAIN",
                "CLUSTERDOWN"
            ]
        );
        assert_eq!(reserved(NOSCRIPT).map(|entry| entry.code), Some("NOSCRIPT"));
        assert_eq!(reserved("BUSY"), None, "clients leave BUSY to the caller");
        assert_eq!(reserved("CONFLICT"), None);
        assert_eq!(reserved("moved"), None);
    }
}
