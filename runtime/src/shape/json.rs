//! JSON shapes: the JSON text serde_json writes for a Rust type and reads
//! into it, as far as it can be known at compile time.
//!
//! `#[derive(JsonShape)]` describes a serde struct; `#[redis_script]`
//! compares what the script reads from a `Json<T>` argument
//! (`cjson.decode(ARGV[1]).field`) and the table it returns through
//! `cjson.encode` into `Json<T>` with it.

/// The JSON a Rust type is written as (`serde_json::to_string`) and read
/// from (`serde_json::from_str`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonType {
    /// Not checked: `serde_json::Value`, a field declared
    /// `#[json_shape(any)]`, a field with `serialize_with`, a tuple.
    Any,
    /// `true` or `false`.
    Bool,
    /// A number without a fraction (Rust integers).
    Integer,
    /// Any number (`f32`, `f64`).
    Number,
    /// A string (`String`, `&str`, `char`, an enum of unit variants).
    String,
    /// An array of one element type (`Vec<T>`, `[T; N]`, sets).
    Array(&'static JsonType),
    /// An object with any keys and one value type (`HashMap<K, V>`).
    Map(&'static JsonType),
    /// An object with named fields (a struct deriving `JsonShape`).
    Object(&'static JsonObject),
    /// `null` or the inner type (`Option<T>`).
    Nullable(&'static JsonType),
}

/// A struct's JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonObject {
    /// The Rust type, for messages.
    pub name: &'static str,
    /// Its fields, in declaration order.
    pub fields: &'static [JsonField],
    /// Fields other than these may be present (`#[serde(flatten)]`): a
    /// read of another name is not known to find nothing.
    pub open: bool,
    /// `#[serde(deny_unknown_fields)]`: reading an object with a field
    /// not listed fails.
    pub deny_unknown_fields: bool,
}

/// One field of a [`JsonObject`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonField {
    /// The key serde_json writes it under.
    pub name: &'static str,
    /// The keys serde_json reads it from: its deserialize name and its
    /// aliases. Empty when it is never read (`skip_deserializing`).
    pub accepts: &'static [&'static str],
    /// Its value.
    pub ty: &'static JsonType,
    /// Whether serde_json writes it.
    pub written: Written,
    /// Reading fails when it is missing: it is no `Option` and has no
    /// `#[serde(default)]` (on itself or on its struct).
    pub required: bool,
}

/// When serde_json writes a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// Always, `None` as `null`.
    Always,
    /// Unless its `skip_serializing_if` holds.
    Sometimes,
    /// Never (`skip`, `skip_serializing`).
    Never,
}

/// A type's [`JsonType`], as a constant.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe the JSON serde writes for it",
    label = "no `JsonShape` for `{Self}`",
    note = "add `#[derive(redis_script::JsonShape)]` to `{Self}` (next to its serde derives), or, for a type of another crate, mark the field `#[json_shape(any)]` to leave its JSON unchecked"
)]
pub trait JsonShape {
    /// The JSON it is written as and read from.
    const JSON: JsonType;
}
