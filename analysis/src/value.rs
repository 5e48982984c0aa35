//! The abstract values the analysis tracks through expressions and locals.

use super::ValueKind;
use super::span::Span;

/// `KEYS` or `ARGV`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    Keys,
    Argv,
}

/// What an expression is known to evaluate to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Unknown,
    /// The `KEYS` or `ARGV` table itself.
    Params(Param),
    /// An element of KEYS: a key the caller declared.
    Key,
    /// An element of ARGV.
    Arg(Option<usize>),
    /// What `ipairs(KEYS)` / `pairs(ARGV)` return, for generic for-loops.
    ParamIterator(Param),
    /// A string constant.
    Str(String),
    /// A numeric constant.
    Number(f64),
    /// A number computed at run time.
    ComputedNumber,
    /// A string computed at run time (`..`, `string.format`, ...).
    /// A string built at run time; the literal text it starts with, when known.
    ComputedString(Option<String>),
    Bool(Option<bool>),
    Nil,
    /// A table; the shape is kept only for a constructor used directly.
    Table(Option<Box<TableShape>>),
    Function,
    /// A sandbox global or one of its members: `redis`, `redis.call`.
    Builtin {
        global: String,
        member: Option<String>,
    },
    /// What `redis.error_reply(...)` / `redis.status_reply(...)` return.
    Reply(Reply),
    /// A member a library table does not have (`table.unpack` on Lua 5.1):
    /// nil, which is fine to test but fails when called or indexed.
    Missing(MissingMember),
}

/// `library.member` where the library has no such member.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MissingMember {
    pub library: String,
    pub member: String,
    /// Where it is read; identifies the read when it is used later.
    pub span: Span,
    /// Where the code runs, for the hint.
    pub environment: crate::sandbox::Environment,
}

/// A reply table built by the `redis` helpers or by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `{err = ...}`: the error code, if the message is a literal.
    Error(Option<String>),
    /// `{ok = ...}`: the status text, if literal.
    Status(Option<String>),
}

/// The array part of a table constructor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableShape {
    /// The first element when it is a string constant.
    pub tag: Option<String>,
    pub elements: Vec<ValueKind>,
    /// The last element is a call or `...`: more elements may follow.
    pub open_ended: bool,
}

impl Value {
    pub fn builtin(global: &str, member: Option<&str>) -> Self {
        Value::Builtin {
            global: global.to_string(),
            member: member.map(str::to_string),
        }
    }

    /// The integer this constant stands for, if it is one.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Value::Number(number) if number.fract() == 0.0 && number.abs() < 9.0e15 => {
                Some(*number as i64)
            }
            _ => None,
        }
    }

    /// What a local keeps of this value: a table constructor's shape does
    /// not survive, since the table can be changed later.
    pub fn stored(self) -> Self {
        match self {
            Value::Table(_) => Value::Table(None),
            other => other,
        }
    }

    /// How this value would look as a reply element.
    pub fn kind(&self) -> ValueKind {
        match self {
            Value::Str(text) => ValueKind::String(Some(text.clone())),
            Value::Key | Value::Arg(_) | Value::ComputedString(_) => ValueKind::String(None),
            Value::Number(number) if number.fract() == 0.0 => ValueKind::Integer,
            Value::Number(_) => ValueKind::Float,
            Value::ComputedNumber => ValueKind::Integer,
            Value::Bool(Some(value)) => ValueKind::Boolean(*value),
            Value::Nil | Value::Missing(_) => ValueKind::Nil,
            Value::Table(_) | Value::Reply(_) | Value::Params(_) => ValueKind::Table,
            _ => ValueKind::Unknown,
        }
    }

    /// Why this value cannot be a key from KEYS, if that is certain.
    pub fn not_a_key(&self) -> Option<String> {
        let what = match self {
            Value::Str(text) => format!("the string literal '{text}'"),
            Value::Arg(Some(index)) => format!("ARGV[{index}], an argument"),
            Value::Arg(None) => "an element of ARGV".to_string(),
            Value::Number(_) | Value::ComputedNumber => "a number".to_string(),
            Value::ComputedString(_) => "a string built at run time".to_string(),
            Value::Bool(_) => "a boolean".to_string(),
            Value::Nil | Value::Missing(_) => "nil".to_string(),
            Value::Table(_) | Value::Reply(_) | Value::Params(_) => "a table".to_string(),
            _ => return None,
        };
        Some(what)
    }
}

/// The text of a Lua string literal, with the common escapes decoded.
pub(crate) fn unescape(literal: &str) -> String {
    let mut text = String::with_capacity(literal.len());
    let mut characters = literal.chars().peekable();
    while let Some(character) = characters.next() {
        if character != '\\' {
            text.push(character);
            continue;
        }
        match characters.next() {
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some('r') => text.push('\r'),
            Some('a') => text.push('\u{7}'),
            Some('b') => text.push('\u{8}'),
            Some('f') => text.push('\u{c}'),
            Some('v') => text.push('\u{b}'),
            Some(digit) if digit.is_ascii_digit() => {
                let mut code = digit.to_digit(10).unwrap_or(0);
                for _ in 0..2 {
                    match characters.peek().and_then(|next| next.to_digit(10)) {
                        Some(next) => {
                            code = code * 10 + next;
                            characters.next();
                        }
                        None => break,
                    }
                }
                text.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            Some(other) => text.push(other),
            None => text.push('\\'),
        }
    }
    text
}

/// The value of a Lua 5.1 number literal (decimal, exponent or hex).
pub(crate) fn parse_number(text: &str) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    match lower.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|value| value as f64),
        None => lower.parse::<f64>().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_numbers() {
        assert_eq!(unescape(r"a\n\65\\\'"), "a\nA\\'");
        assert_eq!(parse_number("0x10"), Some(16.0));
        assert_eq!(parse_number("1e3"), Some(1000.0));
        assert_eq!(parse_number("2.5"), Some(2.5));
        assert_eq!(Value::Number(3.0).as_integer(), Some(3));
        assert_eq!(Value::Number(3.5).as_integer(), None);
    }
}
