//! The one error type of every generated script call.

use std::fmt;

/// Why a script call failed.
///
/// Every variant names the script, so a log line is enough to find the
/// `.lua` file. Match on [`Error::Script`]'s `code` to handle the errors a
/// script raises on purpose with `redis.error_reply('CODE message')`:
///
/// ```
/// # fn handle(error: redis_script::Error) {
/// match error {
///     redis_script::Error::Script { code, .. } if code == "CONFLICT" => { /* re-read and retry */ }
///     other => eprintln!("{other}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The connection failed. `maybe_executed` tells whether the request
    /// may have reached the server: when it is `true`, a script that writes
    /// may or may not have run, so do not blindly call it again.
    #[error(
        "script `{script}`: connection error ({}): {source}",
        if *maybe_executed { "the script may have run" } else { "the script did not run" }
    )]
    Connection {
        /// Name of the script.
        script: &'static str,
        /// Whether the request may have reached the server.
        maybe_executed: bool,
        /// The underlying client error.
        #[source]
        source: redis::RedisError,
    },

    /// The server answered with an error: one the script raised
    /// (`redis.error_reply`, `error()`, a failing `redis.call`) or one the
    /// server returned before running it (`OOM`, `NOPERM`, `BUSY`, ...).
    #[error("script `{script}` failed: {code} {message}")]
    Script {
        /// Name of the script.
        script: &'static str,
        /// The leading upper-case word of the error (`ERR`, `CONFLICT`, ...).
        code: String,
        /// The rest of the error message.
        message: String,
    },

    /// The reply does not have the shape the Rust return type expects.
    #[error("script `{script}`: cannot decode the reply {reply} as {expected}: {reason}")]
    Decode {
        /// Name of the script.
        script: &'static str,
        /// The Rust type the reply was decoded into.
        expected: &'static str,
        /// The raw reply, truncated for display.
        reply: String,
        /// What did not fit.
        reason: String,
    },

    /// The keys of one call hash to different Redis Cluster slots. Nothing
    /// was sent: on a cluster this call could never succeed.
    #[error(
        "script `{script}`: keys hash to different cluster slots: {}; give them a common {{hash tag}}",
        DisplayKeySlots(keys)
    )]
    CrossSlot {
        /// Name of the script.
        script: &'static str,
        /// Every key of the call with its slot.
        keys: Vec<KeySlot>,
    },
}

impl Error {
    /// An error reply of the server to a call of `script`.
    pub(crate) fn server_reply(script: &'static str, error: &redis::ServerError) -> Self {
        Self::Script {
            script,
            code: error.code().to_owned(),
            message: error.details().unwrap_or_default().to_owned(),
        }
    }

    /// A request that failed: an error reply of the server (one of its own
    /// codes or a script's) becomes [`Error::Script`], anything else, where
    /// no reply was read, [`Error::Connection`].
    pub(crate) fn failed_request(script: &'static str, source: redis::RedisError) -> Self {
        match source.code() {
            Some(code) => Self::Script {
                script,
                code: code.to_owned(),
                message: source.detail().unwrap_or_default().to_owned(),
            },
            None => Self::Connection {
                script,
                maybe_executed: !source.is_connection_refusal(),
                source,
            },
        }
    }

    /// The name of the script the failed call was for.
    pub fn script(&self) -> &'static str {
        match self {
            Self::Connection { script, .. }
            | Self::Script { script, .. }
            | Self::Decode { script, .. }
            | Self::CrossSlot { script, .. } => script,
        }
    }

    /// Whether the script may have run on the server despite the error.
    ///
    /// `false` means it certainly did not run; a caller may retry any
    /// script, mutating or not. A script error means the script ran at least
    /// up to the point of failure (Redis does not roll back earlier writes).
    pub fn may_have_executed(&self) -> bool {
        match self {
            Self::Connection { maybe_executed, .. } => *maybe_executed,
            Self::Script { code, .. } => !is_refusal_code(code),
            Self::Decode { .. } => true,
            Self::CrossSlot { .. } => false,
        }
    }

    /// The error code for a script error (`CONFLICT` for
    /// `redis.error_reply('CONFLICT ...')`), `None` for other errors.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Script { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// Error codes with which the server refuses a command before running it.
fn is_refusal_code(code: &str) -> bool {
    matches!(
        code,
        "NOSCRIPT"
            | "OOM"
            | "NOPERM"
            | "BUSY"
            | "LOADING"
            | "READONLY"
            | "MASTERDOWN"
            | "CLUSTERDOWN"
            | "TRYAGAIN"
            | "CROSSSLOT"
            | "MOVED"
            | "ASK"
            | "NOAUTH"
            | "WRONGPASS"
            | "EXECABORT"
    )
}

/// A key of a call and the cluster slot it hashes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySlot {
    /// The key, lossily decoded as UTF-8 and truncated for display.
    pub key: String,
    /// Its hash slot.
    pub slot: u16,
}

struct DisplayKeySlots<'a>(&'a [KeySlot]);

impl fmt::Display for DisplayKeySlots<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, KeySlot { key, slot }) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{key:?} → slot {slot}")?;
        }
        Ok(())
    }
}

/// Longest key or reply text kept in an error, in characters.
pub(crate) const DISPLAY_LIMIT: usize = 64;

/// Lossy UTF-8 of `bytes`, cut at [`DISPLAY_LIMIT`] characters with `…`.
pub(crate) fn truncate_for_display(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(DISPLAY_LIMIT).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_slot_message_names_keys_and_slots() {
        let error = Error::CrossSlot {
            script: "move_item",
            keys: vec![
                KeySlot {
                    key: "a".into(),
                    slot: 15495,
                },
                KeySlot {
                    key: "b".into(),
                    slot: 3300,
                },
            ],
        };
        assert_eq!(
            error.to_string(),
            "script `move_item`: keys hash to different cluster slots: \"a\" → slot 15495, \"b\" → slot 3300; give them a common {hash tag}"
        );
        assert!(!error.may_have_executed());
    }

    #[test]
    fn long_keys_are_truncated() {
        let long = "k".repeat(100);
        let shown = truncate_for_display(long.as_bytes());
        assert_eq!(shown.chars().count(), DISPLAY_LIMIT + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(truncate_for_display(b"short"), "short");
    }
}
