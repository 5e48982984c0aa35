//! The abstract values the analysis tracks through expressions and locals.

use crate::domain::analysis::ValueKind;
use crate::domain::keys::{Derivation, KeyUse, ParameterId};
use crate::domain::types::{Absence, DataRead, Kinds, TableType, Type};
use crate::source::span::Span;

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
    /// An element of KEYS: a key the caller declared; its position
    /// (1-based) when the index is a literal.
    Key(Option<usize>),
    /// A key name built by appending to a prefix (`KEYS[1] .. id`): it
    /// hashes to the prefix's slot when the prefix holds a hash tag.
    DerivedKey(Derivation),
    /// A parameter of a function written in the script, as its body sees
    /// it: unknown, except to key provenance, which resolves it at calls.
    Parameter(ParameterId),
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
    /// A string built at run time (`..`, `string.format`, ...); the
    /// literal text it starts with, when known.
    ComputedString(Option<String>),
    Bool(Option<bool>),
    Nil,
    /// A table; the shape is kept only for a constructor used directly.
    Table(Option<Box<TableShape>>),
    /// A function written in the script: what its calls give, when its
    /// body has been walked.
    Function(Option<std::rc::Rc<FunctionSummary>>),
    /// A sandbox global or one of its members: `redis`, `redis.call`.
    Builtin {
        global: String,
        member: Option<String>,
    },
    /// `getmetatable(_G)`: the metatable of a table the sandbox protects
    /// (named here), read-only itself.
    ProtectedMetatable(String),
    /// What `redis.error_reply(...)` / `redis.status_reply(...)` return.
    Reply(Reply),
    /// A member a library table does not have (`table.unpack` on Lua 5.1):
    /// nil, which is fine to test but fails when called or indexed.
    Missing(MissingMember),
    /// A value known by its type only: a command's reply, the result of an
    /// operator, the meeting of two branches.
    Typed(Type),
    /// What `unpack(t)` gives: the elements of a table of this type.
    Spread(Box<Type>),
}

/// What the analysis knows of a function written in the script, for its
/// calls.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FunctionSummary {
    /// The walk of its body, which numbers its parameters.
    pub id: u32,
    /// The type of the first value its calls return.
    pub returns: Type,
    /// What every `return` gives first, when each gives a key or a key
    /// built from a prefix (possibly from its parameters).
    pub returned_key: Option<Value>,
    /// Keys it builds from its parameters, checked at each call.
    pub key_uses: Vec<KeyUse>,
}

/// `library.member` where the library has no such member.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MissingMember {
    pub library: String,
    pub member: String,
    /// Where it is read; identifies the read when it is used later.
    pub span: Span,
    /// Where the code runs, for the hint.
    pub environment: crate::model::sandbox::Environment,
}

/// A reply table built by the `redis` helpers or by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `{err = ...}`: the error code, if the message is a literal, and the
    /// word of a one-word `redis.error_reply('WORD')`, which the server
    /// sends as `ERR WORD`.
    Error(Option<String>, Option<String>),
    /// `{ok = ...}`: the status text, if literal.
    Status(Option<String>),
}

/// The array part of a table constructor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableShape {
    /// The first element when it is a string constant.
    pub tag: Option<String>,
    pub elements: Vec<ValueKind>,
    /// The elements' values and where they are written, for the checks of
    /// a returned table.
    pub values: Vec<(Value, Span)>,
    /// The last element is a call or `...`: more elements may follow.
    pub open_ended: bool,
    /// Where its first element was read from data, when every element (a
    /// trailing call's included) may be.
    pub read_from: Option<std::rc::Rc<DataRead>>,
    /// Its named fields (`name = value`, `['name'] = value`), in order.
    pub fields: Vec<(String, Value, Span)>,
    /// Some key is computed at run time (`[k] = v`).
    pub computed_keys: bool,
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
    /// not survive, since the table can be changed later; the local keeps
    /// its type (an empty constructor: a table that may be empty).
    ///
    /// A table holding a value read from data is data itself: its elements
    /// may be key names read from data.
    pub fn stored(self) -> Self {
        match self {
            Value::Table(Some(shape)) => {
                let keys = (!shape.open_ended
                    && !shape.values.is_empty()
                    && shape.values.iter().all(|(value, _)| value.is_key_like()))
                .then(|| {
                    shape
                        .values
                        .iter()
                        .map(|(value, _)| value.clone())
                        .collect()
                });
                let empty = shape.values.is_empty() && !shape.open_ended;
                let fields = shape.fields.iter().fold(
                    crate::domain::types::TableFields {
                        known: Vec::new(),
                        complete: !shape.computed_keys
                            && shape.values.is_empty()
                            && !shape.open_ended,
                    },
                    |fields, (name, value, span)| fields.with(name, value.field_type(), *span),
                );
                let mut table = Type::table(TableType {
                    may_be_empty: empty,
                    even_length: false,
                    keys,
                    pairs: empty.then(|| std::rc::Rc::new(crate::domain::types::Pairs::EMPTY)),
                    fields: Some(std::rc::Rc::new(fields)),
                    ..TableType::default()
                });
                table.read_from = shape.read_from.clone();
                Value::Typed(table)
            }
            other => other,
        }
    }

    /// Its type as a field of a table that `cjson.encode` may write:
    /// `cjson.null` is the userdata it writes as `null`, which nothing
    /// else in a script's tables is.
    pub fn field_type(&self) -> Type {
        match self {
            Value::Builtin { global, member }
                if global == "cjson" && member.as_deref() == Some("null") =>
            {
                Type::of(Kinds::OTHER)
            }
            other => other.ty(),
        }
    }

    /// A key from KEYS, a key built from a prefix, or a helper's parameter
    /// (whose calls say which).
    pub fn is_key_like(&self) -> bool {
        matches!(
            self,
            Value::Key(_) | Value::DerivedKey(_) | Value::Parameter(_)
        )
    }

    /// Where it may have been read from data, when it may be.
    pub fn data_read(&self) -> Option<std::rc::Rc<DataRead>> {
        match self {
            Value::Typed(ty) => ty.read_from.clone(),
            Value::Spread(table) => table.read_from.clone(),
            Value::Table(Some(shape)) => shape.read_from.clone(),
            _ => None,
        }
    }

    /// The value's type, as far as it is known.
    pub fn ty(&self) -> Type {
        let kinds = match self {
            Value::Typed(ty) => return ty.clone(),
            Value::Function(Some(_)) | Value::Function(None) | Value::ParamIterator(_) => {
                Kinds::FUNCTION
            }
            Value::Key(_) | Value::DerivedKey(_) | Value::Arg(_) | Value::ComputedString(_) => {
                Kinds::STRING
            }
            Value::Str(text) => {
                if is_numeric(text) {
                    Kinds::NUMERIC_STRING
                } else {
                    Kinds::TEXT
                }
            }
            Value::Number(number) if number.fract() == 0.0 => Kinds::INTEGER,
            Value::Number(_) => Kinds::FRACTION,
            Value::ComputedNumber => Kinds::NUMBER,
            Value::Bool(Some(true)) => Kinds::TRUE,
            Value::Bool(Some(false)) => Kinds::FALSE,
            Value::Bool(None) => Kinds::BOOLEAN,
            Value::Nil | Value::Missing(_) => Kinds::NIL,
            Value::Table(_) | Value::Reply(_) | Value::Params(_) | Value::ProtectedMetatable(_) => {
                Kinds::TABLE
            }
            Value::Unknown | Value::Parameter(_) | Value::Builtin { .. } | Value::Spread(_) => {
                Kinds::ANY
            }
        };
        let mut ty = Type::of(kinds);
        if let Value::Number(number) = self
            && number.fract() == 0.0
            && number.abs() < 9.0e15
        {
            ty.integers = Some(std::rc::Rc::from(vec![*number as i64]));
        }
        ty
    }

    /// The value where control from two branches meets: itself when both
    /// agree, else its type.
    pub fn join(&self, other: &Value) -> Value {
        if self == other {
            return self.clone();
        }
        match (self, other) {
            (Value::Key(_), Value::Key(_)) => Value::Key(None),
            // A key from one branch and a built key from the other: the
            // prefixes of both (a plain key counts as one, which only asks
            // more of the call than needed).
            (Value::Key(_) | Value::DerivedKey(_), Value::Key(_) | Value::DerivedKey(_)) => {
                match (self.derivation(), other.derivation()) {
                    (Some(mine), Some(theirs)) => Value::DerivedKey(mine.union(&theirs)),
                    _ => Value::Typed(self.ty().join(&other.ty())),
                }
            }
            _ => {
                let mut joined = self.ty().join(&other.ty());
                // A local one path leaves nil (`local r` … `if c then r =
                // … end`): that is when it is nil.
                let one_side_nil = matches!(self, Value::Nil) != matches!(other, Value::Nil);
                if one_side_nil
                    && joined.absence.is_none()
                    && joined.kinds.intersects(Kinds::NIL)
                    && !joined.kinds.within(Kinds::NIL)
                    && !joined.is_unknown()
                {
                    joined.absence = Some(std::rc::Rc::new(Absence::unset_on_some_path()));
                }
                Value::Typed(joined)
            }
        }
    }

    /// How this value would look as a reply element.
    pub fn kind(&self) -> ValueKind {
        match self {
            Value::Str(text) => ValueKind::String(Some(text.clone())),
            Value::Key(_) | Value::DerivedKey(_) | Value::Arg(_) | Value::ComputedString(_) => {
                ValueKind::String(None)
            }
            Value::Number(number) if number.fract() == 0.0 => ValueKind::Integer,
            Value::Number(_) => ValueKind::Float,
            Value::ComputedNumber => ValueKind::Integer,
            Value::Bool(Some(value)) => ValueKind::Boolean(*value),
            Value::Nil | Value::Missing(_) => ValueKind::Nil,
            Value::Table(_) | Value::Reply(_) | Value::Params(_) => ValueKind::Table,
            Value::Typed(ty) => {
                let kinds = match ty.kinds.without(Kinds::FALSY) {
                    Kinds::NONE => ty.kinds,
                    // Nil or false only where the analysis knows when.
                    _ if ty.absence.is_some() && ty.kinds.intersects(Kinds::FALSY) => {
                        return ValueKind::MaybeNil;
                    }
                    present => present,
                };
                if kinds.within(Kinds::FRACTION) {
                    ValueKind::Float
                } else if kinds.within(Kinds::NUMBER) {
                    ValueKind::Integer
                } else if kinds.within(Kinds::STRING) {
                    ValueKind::String(None)
                } else if kinds.within(Kinds::TABLE) {
                    ValueKind::Table
                } else if kinds.within(Kinds::NIL) {
                    ValueKind::Nil
                } else {
                    ValueKind::Unknown
                }
            }
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
            Value::ComputedString(Some(text)) => {
                format!("a string built at run time, starting with the literal '{text}'")
            }
            Value::ComputedString(None) => {
                "a string built at run time, starting with a value that is no key".to_string()
            }
            Value::Bool(_) => "a boolean".to_string(),
            Value::Nil | Value::Missing(_) => "nil".to_string(),
            Value::Table(_) | Value::Reply(_) | Value::Params(_) => "a table".to_string(),
            // A key name read from data may hash to any slot.
            Value::Typed(
                ty @ Type {
                    read_from: Some(read),
                    ..
                },
            ) if ty.kinds.intersects(Kinds::STRING) || ty.is_unknown() => read.describe(),
            Value::Spread(table) if table.read_from.is_some() => {
                let described = table
                    .read_from
                    .as_ref()
                    .map(|read| read.describe())
                    .unwrap_or_default();
                let table = described.strip_prefix("a value ").map_or_else(
                    || format!("a table holding {described}"),
                    |rest| format!("a table {rest}"),
                );
                format!("the elements of {table}")
            }
            Value::Typed(ty) if !ty.kinds.intersects(Kinds::STRING) && !ty.is_unknown() => {
                let kinds = ty.kinds;
                if kinds.within(Kinds::NUMBER) {
                    "a number".to_string()
                } else if kinds.within(Kinds::TABLE) {
                    "a table".to_string()
                } else if kinds.within(Kinds::BOOLEAN) {
                    "a boolean".to_string()
                } else if kinds.within(Kinds::NIL) {
                    "nil".to_string()
                } else {
                    return None;
                }
            }
            _ => return None,
        };
        Some(what)
    }
}

/// Whether Lua 5.1 reads `text` as a number (`tonumber` succeeds, and
/// arithmetic on it works): decimal with an optional exponent, or
/// hexadecimal, with spaces around.
pub(crate) fn is_numeric(text: &str) -> bool {
    let trimmed = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.is_empty() {
        return false;
    }
    let unsigned = trimmed
        .strip_prefix('-')
        .or_else(|| trimmed.strip_prefix('+'))
        .unwrap_or(trimmed);
    if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    // Lua converts with C's `strtod`, which takes `inf` and `nan` too.
    let lower = unsigned.to_ascii_lowercase();
    matches!(lower.as_str(), "inf" | "infinity" | "nan")
        || (unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
            && unsigned.parse::<f64>().is_ok())
}

/// The value of a Lua 5.1 number literal (decimal, exponent or hex).
pub(crate) fn parse_number(text: &str) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    match lower.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|value| value as f64),
        None => lower.parse::<f64>().ok(),
    }
}

impl Value {
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Value::Number(number) => Some(*number),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(text) => Some(text),
            _ => None,
        }
    }
}

impl Param {
    /// What one element of this table is.
    pub fn element(self) -> Value {
        match self {
            Param::Keys => Value::Key(None),
            Param::Argv => Value::Arg(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_numbers() {
        assert_eq!(parse_number("0x10"), Some(16.0));
        assert_eq!(parse_number("1e3"), Some(1000.0));
        assert_eq!(parse_number("2.5"), Some(2.5));
        assert_eq!(Value::Number(3.0).as_integer(), Some(3));
        assert_eq!(Value::Number(3.5).as_integer(), None);
    }
}
