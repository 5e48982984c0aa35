//! Reply shapes: what a Rust reply type accepts, as far as it can be known
//! at compile time.
//!
//! `#[redis_script]` compares every table a script can `return` with the
//! [`Shape`] of the function's return type, so a reply the type cannot take
//! fails the build instead of decoding badly at run time.
//! `#[derive(ScriptReply)]` implements [`ReplyShape`] for the type it
//! derives; this module implements it for the common types a call returns.
//!
//! ```
//! use redis_script::ScriptReply;
//! use redis_script::shape::{ReplyShape, Shape};
//!
//! #[derive(Debug, ScriptReply)]
//! enum Decision {
//!     Allowed { count: u64 },
//!     Denied { count: u64, retry_ms: u64 },
//! }
//!
//! // `return {'DENIED', count, retry_ms}` is one of the replies it takes.
//! let Shape::Tagged { variants, .. } = Decision::SHAPE else {
//!     panic!("a derived enum is tagged");
//! };
//! let denied = variants.iter().find(|variant| variant.tag == "DENIED");
//! assert_eq!(denied.map(|variant| (variant.min, variant.max)), Some((2, 2)));
//! ```

pub(crate) mod checks;
pub(crate) mod json;
pub(crate) mod json_checks;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub use json::{JsonField, JsonObject, JsonShape, JsonType, Written};

/// What a Rust reply type accepts, as far as it can be known at compile
/// time. The code `#[redis_script]` generates compares it with the
/// script's `return`s in `const` assertions, so a reply the type cannot
/// take fails the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// Not checked: scalars, lists, maps, `redis::Value`, JSON, and any type
    /// that does not describe itself.
    Any,
    /// A single value (an integer, float, boolean or string), which no
    /// table reply decodes into.
    #[non_exhaustive]
    Scalar {
        /// The Rust type, for messages.
        name: &'static str,
    },
    /// A positional array (a struct or tuple): `return {count, reset_at}`.
    #[non_exhaustive]
    Array {
        /// The Rust type, for messages.
        name: &'static str,
        /// Fewest elements (trailing `Option` fields may be absent).
        min: usize,
        /// Most elements.
        max: usize,
    },
    /// An enum tagged by the first array element (`return {'DENIED', n, ms}`)
    /// or, for variants without required fields, by a bare string or status
    /// reply (`return 'BUSY'`).
    #[non_exhaustive]
    Tagged {
        /// The Rust type, for messages.
        name: &'static str,
        /// One entry per variant, in declaration order.
        variants: &'static [Variant],
    },
}

/// One variant of a [`Shape::Tagged`] enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Variant {
    /// The Rust variant name (`Denied`).
    pub name: &'static str,
    /// The tag that selects it (`DENIED`), compared exactly.
    pub tag: &'static str,
    /// Fewest elements after the tag.
    pub min: usize,
    /// Most elements after the tag (more than `min` when trailing fields are
    /// `Option`s).
    pub max: usize,
    /// Whether the variant has no fields at all.
    pub unit: bool,
}

/// A reply type's [`Shape`], as a constant.
///
/// Derived by `#[derive(ScriptReply)]`, with `redis::FromRedisValue`, which
/// every reply shape also is: a type the contract checks can always be
/// decoded. For a type that implements `redis::FromRedisValue` by hand,
/// declare it unchecked:
///
/// ```
/// use redis::{FromRedisValue, ParsingError, Value};
/// use redis_script::ReplyShape;
/// use redis_script::shape::Shape;
///
/// struct Seconds(u64);
///
/// impl FromRedisValue for Seconds {
///     fn from_redis_value(value: Value) -> Result<Self, ParsingError> {
///         u64::from_redis_value(value).map(Seconds)
///     }
/// }
///
/// impl ReplyShape for Seconds {
///     const SHAPE: Shape = Shape::Any;
/// }
///
/// let seconds = Seconds::from_redis_value(Value::Int(30))?;
/// assert_eq!(seconds.0, 30);
/// assert_eq!(Seconds::SHAPE, Shape::Any);
/// # Ok::<(), ParsingError>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe the shape of its reply",
    label = "no `ReplyShape` for `{Self}`",
    note = "add `#[derive(ScriptReply)]` to `{Self}`, or, if it implements `redis::FromRedisValue` by hand, `impl redis_script::ReplyShape for {Self} {{ const SHAPE: redis_script::shape::Shape = redis_script::shape::Shape::Any; }}`"
)]
pub trait ReplyShape: redis::FromRedisValue {
    /// What this type accepts.
    const SHAPE: Shape;

    /// The elements that decode into a Rust integer, as `(tag, index)`:
    /// `index` counts the elements after the tag (for an untagged array the
    /// tag is `""` and `index` counts from its first element). Redis turns a
    /// Lua float reply into an integer by truncating it, so the attribute
    /// rejects a literal float returned into one of these.
    const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = &[];

    /// The elements whose field is not an `Option`, as `(tag, index)`: a
    /// nil there (a Lua `false`, or a missing key's reply) fails to decode,
    /// so the attribute rejects an element the script may leave nil.
    const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = &[];

    /// The elements whose field is a number, a string or a boolean, as
    /// `(tag, index)`: the attribute rejects a table returned there.
    const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = &[];

    /// Whether a nil reply decodes into this type. A script that can end
    /// with nil (a missing key's `GET`, `return false`, no `return` at
    /// all) is rejected for a type that does not take it. A type that
    /// does not describe itself ([`Shape::Any`]) takes it, as far as the
    /// checks go; the others do not unless they say so (`Option<T>`,
    /// `bool`, which redis-rs decodes from nil as `false`).
    const ACCEPTS_NIL: bool = matches!(Self::SHAPE, Shape::Any);

    /// Whether the status reply `+OK` decodes into this type (redis-rs
    /// reads it as `Value::Okay`). A script that ends with it (`return
    /// redis.call('SET', k, v)`, `redis.status_reply('OK')`) is rejected
    /// for a type that does not take it. `true` unless the type says
    /// otherwise: only the numbers refuse it.
    const ACCEPTS_OK: bool = true;

    /// Whether a status reply whose text is not a number (`+QUEUED`,
    /// `+PONG`; redis-rs reads it as `Value::SimpleString`) decodes into
    /// this type. `true` unless the type says otherwise: the numbers
    /// decode a status only by parsing its text, `bool` only from `1` and
    /// `0`.
    const ACCEPTS_STATUS: bool = true;

    /// The names of a struct's fields, in the order they are decoded, for
    /// messages (the `HMGET` that returns them in that order); empty for
    /// other types.
    const FIELD_NAMES: &'static [&'static str] = &[];
}

macro_rules! scalar_shape {
    ($($ty:ty),* $(,)?) => {
        $(impl ReplyShape for $ty {
            const SHAPE: Shape = Shape::Scalar { name: stringify!($ty) };
        })*
    };
}

// What redis-rs 1.x (`types.rs`, `FromRedisValue`) does with a status
// reply: it parses `+OK` as `Value::Okay` and any other status as
// `Value::SimpleString(text)`. `String` takes both (`Okay` as "OK");
// `bool` takes `Okay` as `true` and a `SimpleString` only when it is "1"
// or "0"; every integer and float type refuses `Okay` ("Response type not
// convertible to numeric") and parses a `SimpleString`'s text, so only a
// text that is not a number fails (`"inf"` and `"nan"` parse as floats).
macro_rules! number_shape {
    ($($ty:ty),* $(,)?) => {
        $(impl ReplyShape for $ty {
            const SHAPE: Shape = Shape::Scalar { name: stringify!($ty) };
            const ACCEPTS_OK: bool = false;
            const ACCEPTS_STATUS: bool = false;
        })*
    };
}

number_shape!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64,
);

scalar_shape!(String);

/// redis-rs decodes nil as `false`, `+OK` as `true`, and no other status
/// that is not a number.
impl ReplyShape for bool {
    const SHAPE: Shape = Shape::Scalar { name: "bool" };
    const ACCEPTS_NIL: bool = true;
    const ACCEPTS_STATUS: bool = false;
}

/// `()` ignores the reply; `redis::Value` takes any.
impl ReplyShape for () {
    const SHAPE: Shape = Shape::Any;
}

impl ReplyShape for redis::Value {
    const SHAPE: Shape = Shape::Any;
}

impl<T: redis::FromRedisValue> ReplyShape for Vec<T> {
    const SHAPE: Shape = Shape::Any;
}

/// Not checked: redis-rs also decodes `[u8; N]` from a bulk string.
impl<T: redis::FromRedisValue, const N: usize> ReplyShape for [T; N] {
    const SHAPE: Shape = Shape::Any;
}

impl<T: redis::FromRedisValue + Eq + std::hash::Hash> ReplyShape for HashSet<T> {
    const SHAPE: Shape = Shape::Any;
}

impl<T: redis::FromRedisValue + Ord> ReplyShape for BTreeSet<T> {
    const SHAPE: Shape = Shape::Any;
}

impl<K: redis::FromRedisValue + Eq + std::hash::Hash, V: redis::FromRedisValue> ReplyShape
    for HashMap<K, V>
{
    const SHAPE: Shape = Shape::Any;
}

impl<K: redis::FromRedisValue + Ord, V: redis::FromRedisValue> ReplyShape for BTreeMap<K, V> {
    const SHAPE: Shape = Shape::Any;
}

/// `nil` is always accepted; a non-nil reply must fit `T`.
impl<T: ReplyShape> ReplyShape for Option<T> {
    const SHAPE: Shape = T::SHAPE;
    const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = T::INTEGER_ELEMENTS;
    const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = T::REQUIRED_ELEMENTS;
    const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = T::SCALAR_ELEMENTS;
    const ACCEPTS_NIL: bool = true;
    const ACCEPTS_OK: bool = T::ACCEPTS_OK;
    const ACCEPTS_STATUS: bool = T::ACCEPTS_STATUS;
    const FIELD_NAMES: &'static [&'static str] = T::FIELD_NAMES;
}

impl<T: ReplyShape> ReplyShape for Box<T> {
    const SHAPE: Shape = T::SHAPE;
    const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = T::INTEGER_ELEMENTS;
    const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = T::REQUIRED_ELEMENTS;
    const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = T::SCALAR_ELEMENTS;
    const ACCEPTS_NIL: bool = T::ACCEPTS_NIL;
    const ACCEPTS_OK: bool = T::ACCEPTS_OK;
    const ACCEPTS_STATUS: bool = T::ACCEPTS_STATUS;
    const FIELD_NAMES: &'static [&'static str] = T::FIELD_NAMES;
}

impl<T: ReplyShape> ReplyShape for std::sync::Arc<T> {
    const SHAPE: Shape = T::SHAPE;
    const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = T::INTEGER_ELEMENTS;
    const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = T::REQUIRED_ELEMENTS;
    const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = T::SCALAR_ELEMENTS;
    const ACCEPTS_NIL: bool = T::ACCEPTS_NIL;
    const ACCEPTS_OK: bool = T::ACCEPTS_OK;
    const ACCEPTS_STATUS: bool = T::ACCEPTS_STATUS;
    const FIELD_NAMES: &'static [&'static str] = T::FIELD_NAMES;
}

macro_rules! tuple_shape {
    ($($len:literal => ($($name:ident),+);)*) => {
        $(
            /// redis-rs decodes a tuple from an array of exactly its length.
            impl<$($name: redis::FromRedisValue),+> ReplyShape for ($($name,)+) {
                const SHAPE: Shape = Shape::Array { name: "tuple", min: $len, max: $len };
            }
        )*
    };
}

tuple_shape! {
    1 => (A);
    2 => (A, B);
    3 => (A, B, C);
    4 => (A, B, C, D);
    5 => (A, B, C, D, E);
    6 => (A, B, C, D, E, F);
}
