//! Reply shapes known at compile time, so `#[redis_script]` can check the
//! tables a Lua script returns against the Rust type that decodes them.
//!
//! `#[derive(ScriptReply)]` implements [`ReplyShape`] for the type it
//! derives; this module implements it for the common types a script call
//! returns. The `const fn`s here are what the attribute's `const`
//! assertions call, so every check runs during `cargo build`:
//!
//! ```
//! use redis_script::ScriptReply;
//! use redis_script::__private_v2::{ReplyShape, accepts_tag, has_tag};
//!
//! #[derive(Debug, ScriptReply)]
//! enum Decision {
//!     Allowed { count: u64 },
//!     Denied { count: u64, retry_ms: u64 },
//! }
//!
//! // `return {'DENIED', count, retry_ms}`: tag DENIED, 2 elements after it.
//! const _: () = assert!(accepts_tag(&<Decision as ReplyShape>::SHAPE, "DENIED", 2));
//! const _: () = assert!(!accepts_tag(&<Decision as ReplyShape>::SHAPE, "DENIED", 1));
//! const _: () = assert!(!has_tag(&<Decision as ReplyShape>::SHAPE, "MAYBE"));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use redis_script_codes::suggest;

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

/// [`Shape::Array`], for the code `#[derive(ScriptReply)]` generates.
pub const fn array_shape(name: &'static str, min: usize, max: usize) -> Shape {
    Shape::Array { name, min, max }
}

/// [`Shape::Tagged`], for the code `#[derive(ScriptReply)]` generates.
pub const fn tagged_shape(name: &'static str, variants: &'static [Variant]) -> Shape {
    Shape::Tagged { name, variants }
}

/// A [`Variant`], for the code `#[derive(ScriptReply)]` generates.
pub const fn variant(
    name: &'static str,
    tag: &'static str,
    min: usize,
    max: usize,
    unit: bool,
) -> Variant {
    Variant {
        name,
        tag,
        min,
        max,
        unit,
    }
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
/// use redis_script::{ReplyShape, Shape};
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
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe the shape of its reply",
    label = "no `ReplyShape` for `{Self}`",
    note = "add `#[derive(ScriptReply)]` to `{Self}`, or, if it implements `redis::FromRedisValue` by hand, `impl redis_script::ReplyShape for {Self} {{ const SHAPE: redis_script::Shape = redis_script::Shape::Any; }}`"
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
}

/// Whether `elements` (one of the [`ReplyShape`] element lists) holds
/// element `index` of a reply tagged `tag` (`""` for an untagged array;
/// `index` counts the elements after the tag).
///
/// ```
/// use redis_script::__private_v2::has_element;
/// const DENIED: &[(&str, usize)] = &[("DENIED", 0), ("DENIED", 1)];
/// const _: () = assert!(has_element(DENIED, "DENIED", 1));
/// const _: () = assert!(!has_element(DENIED, "ALLOWED", 0));
/// ```
pub const fn has_element(elements: &[(&str, usize)], tag: &str, index: usize) -> bool {
    let mut position = 0;
    while position < elements.len() {
        let (element_tag, element_index) = elements[position];
        if element_index == index && str_eq(element_tag, tag) {
            return true;
        }
        position += 1;
    }
    false
}

/// Byte-wise string equality, usable in `const` items.
///
/// ```
/// use redis_script::__private_v2::str_eq;
/// const SAME: bool = str_eq("DENIED", "DENIED");
/// assert!(SAME && !str_eq("DENIED", "denied"));
/// ```
pub const fn str_eq(left: &str, right: &str) -> bool {
    let (left, right) = (left.as_bytes(), right.as_bytes());
    if left.len() != right.len() {
        return false;
    }
    let mut index = 0;
    while index < left.len() {
        if left[index] != right[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// Whether `shape` accepts an array whose first element is the string
/// `tag` followed by `elements` more elements (`return {'DENIED', n, ms}`
/// is `tag = "DENIED", elements = 2`).
///
/// For a [`Shape::Tagged`] enum: some variant has this tag and takes that
/// many elements. For a [`Shape::Array`]: the whole array (the tag is its
/// first element) has an acceptable length. [`Shape::Any`] accepts all.
///
/// ```
/// use redis_script::__private_v2::{Shape, accepts_tag, tagged_shape, variant};
/// const DECISION: Shape = tagged_shape("Decision", &[variant("Denied", "DENIED", 1, 2, false)]);
/// const _: () = assert!(accepts_tag(&DECISION, "DENIED", 2));
/// const _: () = assert!(accepts_tag(&DECISION, "DENIED", 1));
/// const _: () = assert!(!accepts_tag(&DECISION, "DENIED", 3));
/// const _: () = assert!(!accepts_tag(&DECISION, "ALLOWED", 1));
/// ```
pub const fn accepts_tag(shape: &Shape, tag: &str, elements: usize) -> bool {
    match shape {
        Shape::Any => true,
        Shape::Scalar { .. } => false,
        Shape::Array { min, max, .. } => {
            let total = elements.saturating_add(1);
            *min <= total && total <= *max
        }
        Shape::Tagged { variants, .. } => {
            let mut index = 0;
            while index < variants.len() {
                let variant = &variants[index];
                if str_eq(variant.tag, tag) && variant.min <= elements && elements <= variant.max {
                    return true;
                }
                index += 1;
            }
            false
        }
    }
}

/// Whether a [`Shape::Tagged`] enum has a variant tagged `tag`, whatever its
/// element count; `true` for other shapes. Lets the attribute report an
/// unknown tag apart from a wrong element count.
///
/// ```
/// use redis_script::__private_v2::{Shape, has_tag, tagged_shape, variant};
/// const MODE: Shape = tagged_shape("Mode", &[variant("Busy", "BUSY", 0, 0, true)]);
/// const _: () = assert!(has_tag(&MODE, "BUSY") && !has_tag(&MODE, "IDLE"));
/// ```
pub const fn has_tag(shape: &Shape, tag: &str) -> bool {
    match shape {
        Shape::Any | Shape::Array { .. } => true,
        Shape::Scalar { .. } => false,
        Shape::Tagged { variants, .. } => {
            let mut index = 0;
            while index < variants.len() {
                if str_eq(variants[index].tag, tag) {
                    return true;
                }
                index += 1;
            }
            false
        }
    }
}

/// Whether a [`Shape::Tagged`] enum has a variant whose tag is not among
/// `returned` (every tag a script can reply with): a variant no reply can
/// produce. `false` for other shapes.
///
/// ```
/// use redis_script::__private_v2::{Shape, tagged_shape, unreturned_variant, variant};
/// const MODE: Shape = tagged_shape(
///     "Mode",
///     &[
///         variant("Busy", "BUSY", 0, 0, true),
///         variant("Done", "DONE", 0, 0, true),
///     ],
/// );
/// const _: () = assert!(unreturned_variant(&MODE, &["BUSY"]));
/// const _: () = assert!(!unreturned_variant(&MODE, &["DONE", "BUSY"]));
/// ```
pub const fn unreturned_variant(shape: &Shape, returned: &[&str]) -> bool {
    let Shape::Tagged { variants, .. } = shape else {
        return false;
    };
    // A returned tag no variant has fails the build already, most likely
    // as a misspelling of the variant this would report.
    let mut index = 0;
    while index < returned.len() {
        if !has_tag(shape, returned[index]) {
            return false;
        }
        index += 1;
    }
    let mut index = 0;
    while index < variants.len() {
        if !contains_code(returned, variants[index].tag) {
            return true;
        }
        index += 1;
    }
    false
}

/// Whether `shape` accepts a bare string or status reply `text`
/// (`return 'BUSY'`, `redis.status_reply('OK')`).
///
/// For a [`Shape::Tagged`] enum: a variant tagged `text` with no required
/// field. A [`Shape::Array`] never does; [`Shape::Any`] always does.
///
/// ```
/// use redis_script::__private_v2::{Shape, accepts_bare, tagged_shape, variant};
/// const MODE: Shape = tagged_shape(
///     "Mode",
///     &[
///         variant("Busy", "BUSY", 0, 0, true),
///         variant("Done", "DONE", 1, 1, false),
///     ],
/// );
/// const _: () = assert!(accepts_bare(&MODE, "BUSY"));
/// const _: () = assert!(!accepts_bare(&MODE, "DONE"));
/// ```
pub const fn accepts_bare(shape: &Shape, text: &str) -> bool {
    match shape {
        Shape::Any | Shape::Scalar { .. } => true,
        Shape::Array { .. } => false,
        Shape::Tagged { variants, .. } => {
            let mut index = 0;
            while index < variants.len() {
                let variant = &variants[index];
                if str_eq(variant.tag, text) && variant.min == 0 {
                    return true;
                }
                index += 1;
            }
            false
        }
    }
}

/// Whether `shape` accepts an array of `elements` elements whose first
/// element is not a string literal the checker can read (`return {n, ms}`).
///
/// For a [`Shape::Array`]: the length fits. For a [`Shape::Tagged`] enum:
/// some variant takes `elements - 1` elements after its tag (the tag may be
/// computed at run time). [`Shape::Any`] accepts all.
///
/// ```
/// use redis_script::__private_v2::{Shape, accepts_array, array_shape};
/// const RATE: Shape = array_shape("Rate", 1, 2);
/// const _: () = assert!(accepts_array(&RATE, 2) && !accepts_array(&RATE, 3));
/// ```
pub const fn accepts_array(shape: &Shape, elements: usize) -> bool {
    match shape {
        Shape::Any => true,
        Shape::Scalar { .. } => false,
        Shape::Array { min, max, .. } => *min <= elements && elements <= *max,
        Shape::Tagged { variants, .. } => {
            if elements == 0 {
                return false;
            }
            let mut index = 0;
            while index < variants.len() {
                let variant = &variants[index];
                if variant.min < elements && elements - 1 <= variant.max {
                    return true;
                }
                index += 1;
            }
            false
        }
    }
}

/// Whether `shape` accepts a table reply at all: not a single value.
///
/// ```
/// use redis_script::__private_v2::{ReplyShape, accepts_table};
/// const _: () = assert!(!accepts_table(&<i64 as ReplyShape>::SHAPE));
/// const _: () = assert!(accepts_table(&<Vec<i64> as ReplyShape>::SHAPE));
/// ```
pub const fn accepts_table(shape: &Shape) -> bool {
    !matches!(shape, Shape::Scalar { .. })
}

/// Whether `shape` accepts a single number or boolean reply
/// (`return count`): not a struct, tuple or tagged enum.
///
/// ```
/// use redis_script::__private_v2::{ReplyShape, accepts_single_value};
/// const _: () = assert!(accepts_single_value(&<u64 as ReplyShape>::SHAPE));
/// const _: () = assert!(!accepts_single_value(&<(u64, u64) as ReplyShape>::SHAPE));
/// ```
pub const fn accepts_single_value(shape: &Shape) -> bool {
    matches!(shape, Shape::Any | Shape::Scalar { .. })
}

/// The text of a failed compile-time check, assembled in a `const`: the
/// attribute renders the diagnostic (file, line, source excerpt, hint)
/// around a phrase only the reply type's constants can fill in, such as
/// its number of fields. `const` panics take one `&str`, hence the buffer.
#[derive(Debug, Clone, Copy)]
pub struct CheckMessage {
    bytes: [u8; CHECK_MESSAGE_CAPACITY],
    len: usize,
}

/// Longer texts are cut between pieces, keeping them valid UTF-8.
const CHECK_MESSAGE_CAPACITY: usize = 8 * 1024;

impl CheckMessage {
    const fn new() -> Self {
        Self {
            bytes: [0; CHECK_MESSAGE_CAPACITY],
            len: 0,
        }
    }

    const fn push(mut self, text: &str) -> Self {
        let text = text.as_bytes();
        if self.len + text.len() > CHECK_MESSAGE_CAPACITY {
            return self;
        }
        let mut index = 0;
        while index < text.len() {
            self.bytes[self.len + index] = text[index];
            index += 1;
        }
        self.len += text.len();
        self
    }

    const fn push_count(self, count: usize) -> Self {
        let mut digits = [0u8; 20];
        let (mut rest, mut start) = (count, digits.len());
        loop {
            start -= 1;
            digits[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        match core::str::from_utf8(digits.split_at(start).1) {
            Ok(text) => self.push(text),
            Err(_) => self,
        }
    }

    /// The message, for `panic!("{}", message.as_str())`.
    pub const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "",
        }
    }
}

/// `before`, what `shape` takes as an array, then `after`: "… but
/// `FixedWindow` has 2 fields …". For a failed [`accepts_array`].
///
/// ```
/// use redis_script::__private_v2::{array_mismatch, array_shape};
/// const SHAPE: redis_script::Shape = array_shape("FixedWindow", 2, 2);
/// const TEXT: &str = array_mismatch(&SHAPE, "3 elements, but ", ".").as_str();
/// assert_eq!(TEXT, "3 elements, but `FixedWindow` has 2 fields.");
/// ```
pub const fn array_mismatch(shape: &Shape, before: &str, after: &str) -> CheckMessage {
    let text = CheckMessage::new().push(before);
    let text = match shape {
        Shape::Array { name, max, .. } if str_eq(name, "tuple") => {
            let text = text.push("the tuple has ").push_count(*max);
            text.push(if *max == 1 { " element" } else { " elements" })
        }
        Shape::Array { name, min, max } => {
            let text = text.push("`").push(name).push("` has ").push_count(*max);
            let text = text.push(if *max == 1 { " field" } else { " fields" });
            if *min < *max {
                text.push(" (")
                    .push_count(*min)
                    .push(" without its trailing `Option` fields)")
            } else {
                text
            }
        }
        Shape::Tagged { name, .. } => text.push("`").push(name).push(
            "` is a tagged enum, and none of its variants takes that many elements after the tag",
        ),
        Shape::Scalar { name } => text.push("`").push(name).push("` is a single value"),
        Shape::Any => text.push("its reply type takes any array"),
    };
    text.push(after)
}

/// The message of a tag that no variant of `shape` has: `before`, then
/// the tags the type handles, then "did you mean …? otherwise " when one
/// of them is a likely misspelling of `tag`, then `after`.
///
/// ```
/// use redis_script::__private_v2::{Shape, tagged_shape, unknown_tag_message, variant};
/// const DECISION: Shape = tagged_shape(
///     "Decision",
///     &[variant("Allowed", "ALLOWED", 1, 1, false), variant("Denied", "DENIED", 2, 2, false)],
/// );
/// const TEXT: &str = unknown_tag_message(&DECISION, "DENYED", "hint: ", "add it").as_str();
/// assert_eq!(
///     TEXT,
///     "hint: `Decision` handles \"ALLOWED\" and \"DENIED\"; did you mean \"DENIED\"? otherwise add it"
/// );
/// ```
pub const fn unknown_tag_message(
    shape: &Shape,
    tag: &str,
    before: &str,
    after: &str,
) -> CheckMessage {
    let mut near = NearMiss::new(tag);
    let mut handled = CheckMessage::new().push(before);
    if let Shape::Tagged { name, variants } = shape
        && !variants.is_empty()
    {
        handled = handled.push("`").push(name).push("` handles ");
        let mut index = 0;
        while index < variants.len() {
            near = near.consider(variants[index].tag);
            handled = match index {
                0 => handled,
                _ if index + 1 == variants.len() => handled.push(" and "),
                _ => handled.push(", "),
            };
            handled = handled.push("\"").push(variants[index].tag).push("\"");
            index += 1;
        }
        handled = handled.push("; ");
    }
    near.message(handled.as_str(), after)
}

/// [`unknown_tag_message`] for an error code among `codes`.
///
/// ```
/// use redis_script::__private_v2::unknown_code_message;
/// const TEXT: &str = unknown_code_message(&["NOT_OWNER"], "NOT_OWNR", "", "add it").as_str();
/// assert_eq!(TEXT, "did you mean \"NOT_OWNER\"? otherwise add it");
/// ```
pub const fn unknown_code_message(
    codes: &[&'static str],
    code: &str,
    before: &str,
    after: &str,
) -> CheckMessage {
    let mut near = NearMiss::new(code);
    let mut index = 0;
    while index < codes.len() {
        near = near.consider(codes[index]);
        index += 1;
    }
    near.message(before, after)
}

/// The closest known word to `word` so far, when it is a likely
/// misspelling: at most one edit for words of 3 to 5 characters, two for
/// longer ones, ASCII case ignored (so a case-only difference always
/// counts). The policy of the analysis' suggestions, evaluated at compile
/// time.
#[derive(Clone, Copy)]
struct NearMiss<'w> {
    word: &'w str,
    budget: usize,
    best: Option<(usize, &'static str)>,
}

impl<'w> NearMiss<'w> {
    const fn new(word: &'w str) -> Self {
        let budget = suggest::edit_allowance(word);
        Self {
            word,
            budget,
            best: None,
        }
    }

    const fn consider(mut self, candidate: &'static str) -> Self {
        if str_eq(candidate, self.word) {
            return self;
        }
        let distance = suggest::folded_edit_distance(self.word, candidate);
        let closer = match self.best {
            Some((found, _)) => distance < found,
            None => true,
        };
        if distance <= self.budget && closer {
            self.best = Some((distance, candidate));
        }
        self
    }

    const fn message(self, before: &str, after: &str) -> CheckMessage {
        let text = CheckMessage::new().push(before);
        let text = match self.best {
            Some((_, near)) => text
                .push("did you mean \"")
                .push(near)
                .push("\"? otherwise "),
            None => text,
        };
        text.push(after)
    }
}

/// Whether `code` is one of `codes`, e.g. a `ScriptError`'s
/// [`CODES`](crate::ScriptError::CODES): for checking the literal codes of
/// `redis.error_reply('CODE …')` at compile time.
///
/// ```
/// use redis_script::__private_v2::contains_code;
/// const CODES: &[&str] = &["CONFLICT", "NOT_FOUND"];
/// const _: () = assert!(contains_code(CODES, "CONFLICT") && !contains_code(CODES, "GONE"));
/// ```
pub const fn contains_code(codes: &[&str], code: &str) -> bool {
    let mut index = 0;
    while index < codes.len() {
        if str_eq(codes[index], code) {
            return true;
        }
        index += 1;
    }
    false
}

/// Whether `declared` (a `ScriptError`'s codes) has a code that is not
/// among `raised` (every code the script can reply with): a variant no
/// reply can produce. `false` while some raised code is undeclared: that
/// is an error of its own, often a misspelling of the unraised one.
///
/// ```
/// use redis_script::__private_v2::unraised_code;
/// const _: () = assert!(unraised_code(&["CONFLICT", "GONE"], &["CONFLICT"]));
/// const _: () = assert!(!unraised_code(&["CONFLICT"], &["CONFLICT"]));
/// const _: () = assert!(!unraised_code(&["CONFLICT"], &["CONFLCT"]));
/// ```
pub const fn unraised_code(declared: &[&str], raised: &[&str]) -> bool {
    let mut index = 0;
    while index < raised.len() {
        if !contains_code(declared, raised[index]) {
            return false;
        }
        index += 1;
    }
    let mut index = 0;
    while index < declared.len() {
        if !contains_code(raised, declared[index]) {
            return true;
        }
        index += 1;
    }
    false
}

macro_rules! scalar_shape {
    ($($ty:ty),* $(,)?) => {
        $(impl ReplyShape for $ty {
            const SHAPE: Shape = Shape::Scalar { name: stringify!($ty) };
        })*
    };
}

scalar_shape!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool, String,
);

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
}

impl<T: ReplyShape> ReplyShape for Box<T> {
    const SHAPE: Shape = T::SHAPE;
    const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = T::INTEGER_ELEMENTS;
    const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = T::REQUIRED_ELEMENTS;
    const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = T::SCALAR_ELEMENTS;
}

impl<T: ReplyShape> ReplyShape for std::sync::Arc<T> {
    const SHAPE: Shape = T::SHAPE;
    const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = T::INTEGER_ELEMENTS;
    const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = T::REQUIRED_ELEMENTS;
    const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = T::SCALAR_ELEMENTS;
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

#[cfg(test)]
mod tests {
    use super::*;

    const VARIANTS: &[Variant] = &[
        Variant {
            name: "Allowed",
            tag: "ALLOWED",
            min: 1,
            max: 1,
            unit: false,
        },
        Variant {
            name: "Denied",
            tag: "DENIED",
            min: 1,
            max: 2,
            unit: false,
        },
        Variant {
            name: "Busy",
            tag: "BUSY",
            min: 0,
            max: 0,
            unit: true,
        },
    ];
    const DECISION: Shape = Shape::Tagged {
        name: "Decision",
        variants: VARIANTS,
    };
    const RATE: Shape = Shape::Array {
        name: "Rate",
        min: 1,
        max: 2,
    };

    #[test]
    fn tags_and_counts() {
        assert!(accepts_tag(&DECISION, "ALLOWED", 1));
        assert!(!accepts_tag(&DECISION, "ALLOWED", 0));
        assert!(accepts_tag(&DECISION, "DENIED", 1));
        assert!(accepts_tag(&DECISION, "DENIED", 2));
        assert!(!accepts_tag(&DECISION, "DENIED", 3));
        assert!(accepts_tag(&DECISION, "BUSY", 0));
        assert!(!accepts_tag(&DECISION, "busy", 0));
        assert!(!accepts_tag(&DECISION, "", 0));
        assert!(has_tag(&DECISION, "BUSY") && !has_tag(&DECISION, "MAYBE"));
        assert!(accepts_tag(&Shape::Any, "X", 9));
    }

    #[test]
    fn arrays_count_the_tag_as_an_element() {
        assert!(accepts_tag(&RATE, "x", 0));
        assert!(accepts_tag(&RATE, "x", 1));
        assert!(!accepts_tag(&RATE, "x", 2));
        assert!(accepts_array(&RATE, 1) && accepts_array(&RATE, 2));
        assert!(!accepts_array(&RATE, 0) && !accepts_array(&RATE, 3));
        assert!(!accepts_bare(&RATE, "OK"));
    }

    #[test]
    fn bare_replies_select_fieldless_variants() {
        assert!(accepts_bare(&DECISION, "BUSY"));
        assert!(!accepts_bare(&DECISION, "DENIED"));
        assert!(!accepts_bare(&DECISION, "NOPE"));
        assert!(accepts_bare(&Shape::Any, "OK"));
    }

    #[test]
    fn untagged_arrays_against_enums() {
        assert!(accepts_array(&DECISION, 2));
        assert!(accepts_array(&DECISION, 3));
        assert!(accepts_array(&DECISION, 1));
        assert!(!accepts_array(&DECISION, 4));
        assert!(!accepts_array(&DECISION, 0));
    }

    #[test]
    fn common_types() {
        assert_eq!(
            <Option<(u8, u8)> as ReplyShape>::SHAPE,
            Shape::Array {
                name: "tuple",
                min: 2,
                max: 2
            }
        );
        assert_eq!(<Vec<(u8, u8)> as ReplyShape>::SHAPE, Shape::Any);
        assert_eq!(<redis::Value as ReplyShape>::SHAPE, Shape::Any);
        assert!(contains_code(&["A", "BB"], "BB") && !contains_code(&[], "A"));
    }

    #[test]
    fn near_misses_follow_the_suggestion_policy() {
        let pick = |known: &[&'static str], word: &str| {
            known
                .iter()
                .fold(NearMiss::new(word), |near, candidate| {
                    near.consider(candidate)
                })
                .best
                .map(|(_, near)| near)
        };
        assert_eq!(pick(&["ALLOWED", "DENIED"], "DENYED"), Some("DENIED"));
        assert_eq!(pick(&["GONE"], "gone"), Some("GONE"));
        // Short words allow no edit; unrelated words are not suggested.
        assert_eq!(pick(&["OK"], "NO"), None);
        assert_eq!(pick(&["CONFLICT"], "EXPIRED"), None);
        assert_eq!(pick(&["CONFLICT"], "CONFLICT"), None);
        // Characters, not bytes: one edit, as the analysis counts it.
        assert_eq!(pick(&["DENIED"], "DÉNIED"), Some("DENIED"));
        assert_eq!(pick(&["ÉTÉ"], "ÉTE"), Some("ÉTÉ"));
        // The analysis's suggestions agree on every case above.
        for (known, word) in [
            (&["ALLOWED", "DENIED"][..], "DENYED"),
            (&["GONE"][..], "gone"),
            (&["OK"][..], "NO"),
            (&["CONFLICT"][..], "EXPIRED"),
            (&["DENIED"][..], "DÉNIED"),
            (&["ÉTÉ"][..], "ÉTE"),
            (&["ÉTÉ"][..], "ETE"),
        ] {
            let analysis = redis_script_analysis::suggest::closest(word, known.iter().copied());
            assert_eq!(pick(known, word), analysis, "{word} among {known:?}");
        }
    }
}
