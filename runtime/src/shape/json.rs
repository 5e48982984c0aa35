//! JSON shapes: the JSON text serde_json writes for a Rust type and reads
//! into it, as far as it can be known at compile time.
//!
//! `#[derive(JsonShape)]` describes a serde struct; `#[redis_script]`
//! compares what the script reads from a `Json<T>` argument
//! (`cjson.decode(ARGV[1]).field`) and the table it returns through
//! `cjson.encode` into `Json<T>` with it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::marker::PhantomData;
use std::num::NonZero;
use std::rc::Rc;
use std::sync::Arc;

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

impl JsonType {
    /// Whether `null` is one of its values ([`JsonType::Nullable`]): serde
    /// reads a missing field of such a type as `None`.
    ///
    /// ```
    /// use redis_script::shape::{JsonShape, JsonType};
    ///
    /// assert!(<Option<u8> as JsonShape>::JSON.is_nullable());
    /// assert!(!JsonType::Integer.is_nullable());
    /// ```
    pub const fn is_nullable(&self) -> bool {
        matches!(self, Self::Nullable(_))
    }
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

/// A type's [`JsonType`], as a constant: `#[derive(JsonShape)]` implements
/// it for a serde struct, and this crate for the standard types serde
/// writes (numbers, strings, `Option`, sequences, maps, smart pointers).
///
/// ```
/// use redis_script::shape::{JsonShape, JsonType, Written};
///
/// #[derive(serde::Serialize, serde::Deserialize, redis_script::JsonShape)]
/// #[serde(rename_all = "camelCase")]
/// struct Job {
///     job_id: String,
///     attempts: u32,
///     note: Option<String>,
/// }
///
/// let JsonType::Object(job) = Job::JSON else { unreachable!() };
/// let names: Vec<&str> = job.fields.iter().map(|field| field.name).collect();
/// assert_eq!(names, ["jobId", "attempts", "note"]);
/// // A missing `note` reads as `None`; serde_json writes it as `null`.
/// assert!(!job.fields[2].required);
/// assert_eq!(job.fields[2].written, Written::Always);
/// assert_eq!(*job.fields[2].ty, JsonType::Nullable(&JsonType::String));
/// assert_eq!(<Vec<u8> as JsonShape>::JSON, JsonType::Array(&JsonType::Integer));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe the JSON serde writes for it",
    label = "no `JsonShape` for `{Self}`",
    note = "add `#[derive(redis_script::JsonShape)]` to `{Self}` (next to its serde derives), or, for a type of another crate, mark the field `#[json_shape(any)]` to leave its JSON unchecked"
)]
pub trait JsonShape {
    /// The JSON it is written as and read from.
    const JSON: JsonType;
}

impl JsonObject {
    /// A struct's object: `name` for messages, its `fields` in declaration
    /// order, whether other keys may be present (`open`, for a
    /// `#[serde(flatten)]` field) and whether reading refuses keys it does
    /// not list (`#[serde(deny_unknown_fields)]`).
    ///
    /// For a type that implements [`JsonShape`] by hand; the derive builds
    /// the same value.
    ///
    /// ```
    /// use redis_script::shape::{JsonField, JsonObject, JsonShape, JsonType, Written};
    ///
    /// struct Point { x: i64, y: i64 }
    ///
    /// impl JsonShape for Point {
    ///     const JSON: JsonType = JsonType::Object(&JsonObject::new(
    ///         "Point",
    ///         &[
    ///             JsonField::new("x", &["x"], &JsonType::Integer, Written::Always, true),
    ///             JsonField::new("y", &["y"], &JsonType::Integer, Written::Always, true),
    ///         ],
    ///         false,
    ///         false,
    ///     ));
    /// }
    ///
    /// let JsonType::Object(point) = Point::JSON else { unreachable!() };
    /// assert_eq!(point.fields.len(), 2);
    /// ```
    pub const fn new(
        name: &'static str,
        fields: &'static [JsonField],
        open: bool,
        deny_unknown_fields: bool,
    ) -> Self {
        Self {
            name,
            fields,
            open,
            deny_unknown_fields,
        }
    }

    /// The field serde_json writes under `key`, if any.
    ///
    /// ```
    /// use redis_script::shape::{JsonField, JsonObject, JsonType, Written};
    ///
    /// const JOB: JsonObject = JsonObject::new(
    ///     "Job",
    ///     &[JsonField::new("jobId", &["jobId", "id"], &JsonType::String, Written::Always, true)],
    ///     false,
    ///     false,
    /// );
    /// assert!(JOB.written("jobId").is_some());
    /// assert!(JOB.written("id").is_none());
    /// assert!(JOB.read("id").is_some());
    /// ```
    pub fn written(&self, key: &str) -> Option<&'static JsonField> {
        self.fields
            .iter()
            .find(|field| field.written != Written::Never && field.name == key)
    }

    /// The field serde_json reads from `key` (its name or an alias), if
    /// any.
    pub fn read(&self, key: &str) -> Option<&'static JsonField> {
        self.fields
            .iter()
            .find(|field| field.accepts.contains(&key))
    }
}

impl JsonField {
    /// A field: the key it is written under, the keys it is read from
    /// (empty when it is never read), its value's type, when it is
    /// written, and whether reading fails without it. See
    /// [`JsonObject::new`] for an example.
    pub const fn new(
        name: &'static str,
        accepts: &'static [&'static str],
        ty: &'static JsonType,
        written: Written,
        required: bool,
    ) -> Self {
        Self {
            name,
            accepts,
            ty,
            written,
            required,
        }
    }
}

/// Used by generated code: [`JsonField::new`].
pub const fn json_field(
    name: &'static str,
    accepts: &'static [&'static str],
    ty: &'static JsonType,
    written: Written,
    required: bool,
) -> JsonField {
    JsonField::new(name, accepts, ty, written, required)
}

/// Used by generated code: [`JsonObject::new`].
pub const fn json_object(
    name: &'static str,
    fields: &'static [JsonField],
    open: bool,
    deny_unknown_fields: bool,
) -> JsonObject {
    JsonObject::new(name, fields, open, deny_unknown_fields)
}

/// Asks whether a type describes its JSON: `JsonProbe::<T>::SHAPE` is
/// `Some(&T::JSON)` for a type that implements [`JsonShape`] and, with
/// [`NoJsonShape`] in scope, `None` for any other (the inherent constant
/// wins where its bound holds; the trait's applies otherwise). For
/// generated code that checks what it can and leaves the rest.
///
/// ```
/// use redis_script::__private_v3::{JsonProbe, JsonType, NoJsonShape};
///
/// struct Opaque;
///
/// assert_eq!(JsonProbe::<u32>::SHAPE, Some(&JsonType::Integer));
/// assert_eq!(JsonProbe::<Vec<String>>::SHAPE, Some(&JsonType::Array(&JsonType::String)));
/// assert_eq!(JsonProbe::<Opaque>::SHAPE, None);
/// ```
#[derive(Debug)]
pub struct JsonProbe<T: ?Sized>(PhantomData<T>);

impl<T: JsonShape + ?Sized> JsonProbe<T> {
    /// `T`'s JSON.
    pub const SHAPE: Option<&'static JsonType> = Some(&T::JSON);
}

/// The fallback of [`JsonProbe`]: no shape known.
pub trait NoJsonShape {
    /// No shape: `T` does not implement [`JsonShape`].
    const SHAPE: Option<&'static JsonType> = None;
}

impl<T: ?Sized> NoJsonShape for JsonProbe<T> {}

macro_rules! json_shape {
    ($json:expr => $($ty:ty),* $(,)?) => {
        $(impl JsonShape for $ty {
            const JSON: JsonType = $json;
        })*
    };
}

json_shape!(JsonType::Bool => bool);
json_shape!(JsonType::Integer =>
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize,
    NonZero<i8>, NonZero<i16>, NonZero<i32>, NonZero<i64>, NonZero<i128>, NonZero<isize>,
    NonZero<u8>, NonZero<u16>, NonZero<u32>, NonZero<u64>, NonZero<u128>, NonZero<usize>,
);
json_shape!(JsonType::Number => f32, f64);
json_shape!(JsonType::String => String, str, char);
/// serde writes `()` as `null`; not checked.
impl JsonShape for () {
    const JSON: JsonType = JsonType::Any;
}

/// Any JSON value.
#[cfg(feature = "json")]
impl JsonShape for serde_json::Value {
    const JSON: JsonType = JsonType::Any;
}

/// An object of any keys and values.
#[cfg(feature = "json")]
impl JsonShape for serde_json::Map<String, serde_json::Value> {
    const JSON: JsonType = JsonType::Map(&JsonType::Any);
}

impl<T: JsonShape> JsonShape for Option<T> {
    const JSON: JsonType = JsonType::Nullable(&T::JSON);
}

macro_rules! json_array {
    ($(impl<$($generic:ident),*> $ty:ty;)*) => {
        $(impl<$($generic),*> JsonShape for $ty where T: JsonShape {
            const JSON: JsonType = JsonType::Array(&T::JSON);
        })*
    };
}

json_array! {
    impl<T> Vec<T>;
    impl<T> VecDeque<T>;
    impl<T> [T];
    impl<T, S> HashSet<T, S>;
    impl<T> BTreeSet<T>;
}

impl<T: JsonShape, const N: usize> JsonShape for [T; N] {
    const JSON: JsonType = JsonType::Array(&T::JSON);
}

/// serde_json writes map keys as strings: only the values have a type.
impl<K, V: JsonShape, S> JsonShape for HashMap<K, V, S> {
    const JSON: JsonType = JsonType::Map(&V::JSON);
}

/// serde_json writes map keys as strings: only the values have a type.
impl<K, V: JsonShape> JsonShape for BTreeMap<K, V> {
    const JSON: JsonType = JsonType::Map(&V::JSON);
}

macro_rules! json_pointer {
    ($(impl<T> $ty:ty;)*) => {
        $(impl<T: JsonShape + ?Sized> JsonShape for $ty {
            const JSON: JsonType = T::JSON;
        })*
    };
}

json_pointer! {
    impl<T> &T;
    impl<T> &mut T;
    impl<T> Box<T>;
    impl<T> Rc<T>;
    impl<T> Arc<T>;
}

/// `Cow<'_, str>` is a string, `Cow<'_, [T]>` an array.
impl<T: JsonShape + ToOwned + ?Sized> JsonShape for Cow<'_, T> {
    const JSON: JsonType = T::JSON;
}

macro_rules! json_tuple {
    ($(($($name:ident),+))*) => {
        $(
            /// A JSON array of mixed elements: not checked.
            impl<$($name),+> JsonShape for ($($name,)+) {
                const JSON: JsonType = JsonType::Any;
            }
        )*
    };
}

json_tuple! {
    (A)
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
}

#[cfg(all(test, feature = "json"))]
mod tests;
