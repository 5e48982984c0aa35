//! The error replies a script can hand back unmarked.
//!
//! Redis marks an error raised inside a script (`error(...)`, a failing
//! `redis.call`) with ` script: …, on @user_script:N.`, but an error reply
//! the script *returns* (`redis.error_reply('CODE …')`, `{err = …}`, a
//! `redis.pcall` result) reaches the client exactly as written. The runtime
//! must tell such replies apart from the server's own refusals, which mean
//! the script never ran; knowing every code a script can return unmarked is
//! what makes that decision unforgeable.

use redis_script_codes::{is_error_code, reserved, split_error_reply};

use super::span::Span;
use super::value::Value;
use super::{Diagnostic, ErrorCodes};

/// The code a client reads from an error message: its first word, as
/// Redis sends it. `None` when the message is not known at compile time up
/// to its first space.
fn leading_code(message: &Value) -> Option<String> {
    let text = match message {
        Value::Str(text) => text.as_str(),
        // `'CODE details ' .. x`: the code is known when the literal part
        // already ends it.
        Value::ComputedString(Some(prefix)) if prefix.trim_start().contains(' ') => prefix,
        _ => return None,
    };
    Some(split_error_reply(text).0.to_string())
}

/// The code of an error message when it is one the error type must
/// declare: its first word, if that [is an error code](is_error_code).
pub(crate) fn error_code(message: &Value) -> Option<String> {
    leading_code(message).filter(|word| is_error_code(word))
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
        if let Some(reserved) = reserved(&code) {
            diagnostics.push(span.error(
                format!(
                    "the script replies with the error code {code}, which belongs to the server: {}, so a script that writes would run twice",
                    reserved.reason
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
