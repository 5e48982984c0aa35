//! The error replies a script can hand back unmarked.
//!
//! Redis marks an error raised inside a script (`error(...)`, a failing
//! `redis.call`) with ` script: …, on @user_script:N.`, but an error reply
//! the script *returns* (`redis.error_reply('CODE …')`, `{err = …}`, a
//! `redis.pcall` result) reaches the client exactly as written. The runtime
//! must tell such replies apart from the server's own refusals, which mean
//! the script never ran; knowing every code a script can return unmarked is
//! what makes that decision unforgeable.

use super::span::Span;
use super::value::Value;
use super::{Diagnostic, ErrorCodes};

/// Codes that clients act on by themselves: the script would be sent
/// again, and a script that writes would run twice.
const RESERVED: &[(&str, &str)] = &[
    (
        "NOSCRIPT",
        "clients read it as \"the server has not cached this script\" and send the script again with EVAL",
    ),
    (
        "MOVED",
        "the redis-rs cluster connection follows it as a redirect and sends the script again",
    ),
    (
        "ASK",
        "the redis-rs cluster connection follows it as a redirect and sends the script again",
    ),
    (
        "TRYAGAIN",
        "the redis-rs cluster connection waits and sends the script again",
    ),
    (
        "CLUSTERDOWN",
        "the redis-rs cluster connection waits and sends the script again",
    ),
    (
        "MASTERDOWN",
        "the redis-rs cluster connection waits and sends the script again",
    ),
    (
        "LOADING",
        "the redis-rs cluster connection waits and sends the script again",
    ),
    (
        "READONLY",
        "the redis-rs cluster connection refreshes its slot map and sends the script again",
    ),
];

/// The code a client reads from an error message: its first word, as
/// Redis sends it (a leading `-` is dropped). `None` when the message is
/// not known at compile time up to its first space.
pub(crate) fn leading_code(message: &Value) -> Option<String> {
    let text = match message {
        Value::Str(text) => text.as_str(),
        // `'CODE details ' .. x`: the code is known when the literal part
        // already ends it.
        Value::ComputedString(Some(prefix)) if prefix.trim_start().contains(' ') => prefix,
        _ => return None,
    };
    let text = text.strip_prefix('-').unwrap_or(text);
    text.split(' ').next().map(str::to_string)
}

impl ErrorCodes {
    /// An error reply built from `message`, at `span`; a reserved code
    /// becomes a diagnostic.
    pub(crate) fn record(
        &mut self,
        message: &Value,
        span: Span,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let Some(code) = leading_code(message) else {
            self.unknown = true;
            return;
        };
        if let Some((_, why)) = RESERVED.iter().find(|(reserved, _)| *reserved == code) {
            diagnostics.push(span.error(
                format!(
                    "the script replies with the error code {code}, which belongs to the server: {why}, so a script that writes would run twice"
                ),
                "use a code of your own, e.g. `redis.error_reply('RETRY_LATER …')`",
            ));
        }
        self.codes.insert(code);
    }

    /// The script may hand back error replies whose text is only known at
    /// run time (decoded tables, `t.err = x`).
    pub(crate) fn forwards_unknown(&mut self) {
        self.unknown = true;
    }

    /// The script may hand back the error replies of the commands it calls
    /// (`redis.pcall`, `pcall(redis.call, …)`).
    pub(crate) fn forwards_command_errors(&mut self) {
        self.forwards_command_errors = true;
    }
}
