//! The error replies a script can end with, found where they are made.
//!
//! A table is an error reply when its raw `err` field is a string. Rather
//! than follow tables to the `return`, the analysis looks at every way one
//! gets such a field: a constructor (`{err = …}`, `{['err'] = …}`, `{[k] =
//! …}`), an assignment (`t.err = …`, `t[k] = …`), `rawset`,
//! `redis.error_reply`, a caught command error (`redis.pcall`, `pcall`,
//! `coroutine.resume`), decoded data (`cjson.decode`, `cmsgpack.unpack`),
//! a RESP3 map reply after `redis.setresp(3)`, and code compiled at run
//! time. The union over the whole script is every code it can end with;
//! an `err` field whose text is only known at run time makes it unknown.
//!
//! The runtime does not rely on these codes to tell a script's error from
//! a server refusal: the source sent marks every error a script ends with,
//! returned or raised (see [`sent`](crate::emit::sent)). They serve the contract
//! checks against a declared error type.

use redis_script_codes::{is_error_code, reserved, split_error_reply};

use crate::domain::analysis::ErrorCodes;
use crate::domain::value::Value;
use crate::interp::Analyzer;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::span::Span;

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
                Code::ReservedErrorCode,
                format!(
                    "the script replies with the error code {code}, which belongs to the server: {}; redis-script marks every error its own calls end with, but another client running this code would take the reply for the server's, and a script that writes would run twice",
                    reserved.reason
                ),
                "use a code of your own, e.g. `redis.error_reply('RETRY_LATER …')`",
            ));
        }
        self.codes.insert(code);
    }

    /// Adds what `other` may end with.
    pub(crate) fn merge(&mut self, other: &ErrorCodes) {
        self.codes.extend(other.codes.iter().cloned());
        self.forwards_command_errors |= other.forwards_command_errors;
        self.unknown |= other.unknown;
    }

    /// The script may hand back error replies whose text is only known at
    /// run time (decoded tables, code compiled at run time).
    pub(crate) fn forwards_unknown(&mut self) {
        self.unknown = true;
    }

    /// A table's `err` field is set to `value` at `span`: an error reply
    /// when the value is a string (a raised table's message may also be a
    /// number, which Redis turns into text).
    pub(crate) fn err_field(
        &mut self,
        value: &Value,
        span: Span,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        match value {
            Value::Number(number) => {
                self.codes.insert(lua_number_text(*number));
            }
            Value::ComputedNumber => self.unknown = true,
            value if may_be_string(value) => self.record(value, span, diagnostics),
            _ => {}
        }
    }

    /// A table's field under a key computed at run time is set to `value`
    /// (`t[k] = v`, `{[k] = v}`, `rawset(t, k, v)`): an error reply of
    /// unknown code when the key may be `'err'` and the value a string.
    pub(crate) fn computed_field(&mut self, key: &Value, value: &Value) {
        if may_be_err_key(key) && may_be_string(value) {
            self.unknown = true;
        }
    }

    /// The script may hand back the error replies of the commands it calls
    /// (`redis.pcall`, `pcall(redis.call, …)`).
    pub(crate) fn forwards_command_errors(&mut self) {
        self.forwards_command_errors = true;
    }
}

/// Globals through which a script reaches any global by a computed name,
/// or compiles code at run time (Redis scripts have no `getfenv`), and can
/// build any reply.
const OPEN_DOORS: &[&str] = &["_G", "loadstring", "load"];

impl Analyzer<'_> {
    /// A read of the global `name`: through `_G`, `loadstring` and `load`
    /// a script reaches any global by a computed name, or compiles code at
    /// run time, so its error replies may have any code.
    pub(crate) fn reaches_open_doors(&mut self, name: &str) {
        if OPEN_DOORS.contains(&name) {
            self.facts.unit.error_codes.forwards_unknown();
        }
    }
}

/// Whether `value` may be a Lua string at run time (Redis reads an `err`
/// field only when it is one; a number is not).
pub(crate) fn may_be_string(value: &Value) -> bool {
    matches!(
        value,
        Value::Str(_)
            | Value::ComputedString(_)
            | Value::Key(_)
            | Value::DerivedKey(_)
            | Value::Arg(_)
            | Value::Unknown
            | Value::Parameter(_)
    )
}

/// How Lua 5.1 writes a number as text (`%.14g`), for integers and the
/// usual fractions.
fn lua_number_text(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

/// Whether a key computed at run time may be the string `'err'`.
fn may_be_err_key(key: &Value) -> bool {
    match key {
        Value::Str(text) => text == "err",
        Value::ComputedString(Some(prefix)) => "err".starts_with(prefix.as_str()),
        other => may_be_string(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_strings_that_may_read_err_make_error_fields() {
        assert!(may_be_err_key(&Value::Str("err".into())));
        assert!(!may_be_err_key(&Value::Str("error".into())));
        assert!(may_be_err_key(&Value::ComputedString(Some("e".into()))));
        assert!(!may_be_err_key(&Value::ComputedString(Some("x".into()))));
        assert!(may_be_err_key(&Value::Arg(Some(1))));
        assert!(!may_be_err_key(&Value::ComputedNumber));
        assert!(!may_be_string(&Value::Number(1.0)));
        assert!(!may_be_string(&Value::Table(None)));
        assert!(may_be_string(&Value::Unknown));
    }
}
