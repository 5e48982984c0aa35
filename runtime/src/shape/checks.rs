//! The `const fn` checks the attribute's `const` assertions call: a
//! script's returns and error codes against a reply type's [`Shape`], and
//! the messages they fail with.

use redis_script_codes::suggest;

use super::{Shape, Variant};

/// Whether `elements` (one of the [`ReplyShape`](super::ReplyShape) element lists) holds
/// element `index` of a reply tagged `tag` (`""` for an untagged array;
/// `index` counts the elements after the tag).
///
/// ```
/// use redis_script::__private_v3::has_element;
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
/// use redis_script::__private_v3::str_eq;
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
/// use redis_script::__private_v3::{Shape, accepts_tag, tagged_shape, variant};
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
/// use redis_script::__private_v3::{Shape, has_tag, tagged_shape, variant};
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
/// use redis_script::__private_v3::{Shape, tagged_shape, unreturned_variant, variant};
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
/// use redis_script::__private_v3::{Shape, accepts_bare, tagged_shape, variant};
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
/// use redis_script::__private_v3::{Shape, accepts_array, array_shape};
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
/// use redis_script::__private_v3::{ReplyShape, accepts_table};
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
/// use redis_script::__private_v3::{ReplyShape, accepts_single_value};
/// const _: () = assert!(accepts_single_value(&<u64 as ReplyShape>::SHAPE));
/// const _: () = assert!(!accepts_single_value(&<(u64, u64) as ReplyShape>::SHAPE));
/// ```
pub const fn accepts_single_value(shape: &Shape) -> bool {
    matches!(shape, Shape::Any | Shape::Scalar { .. })
}

/// Whether `shape` takes field names and values in turn (`HGETALL`'s
/// reply): not a struct or tuple, which redis-rs decodes by position, nor
/// a tagged enum. [`Shape::Any`] (`HashMap`, `Vec<(String, String)>`) and
/// [`Shape::Scalar`] (refused by other checks, if at all) pass.
///
/// ```
/// use redis_script::__private_v3::{ReplyShape, accepts_field_values, array_shape};
/// use std::collections::HashMap;
/// const _: () = assert!(!accepts_field_values(&array_shape("Profile", 2, 2)));
/// const _: () = assert!(accepts_field_values(&<HashMap<String, String> as ReplyShape>::SHAPE));
/// ```
pub const fn accepts_field_values(shape: &Shape) -> bool {
    !matches!(shape, Shape::Array { .. } | Shape::Tagged { .. })
}

/// `before`, then, for a struct or tuple, how `HMGET` returns its fields
/// in order from the hash at `key` (naming them from `fields`, its
/// [`FIELD_NAMES`](super::ReplyShape::FIELD_NAMES), when it has names),
/// then `after`.
///
/// ```
/// use redis_script::__private_v3::{array_shape, hmget_fix};
/// const PROFILE: redis_script::shape::Shape = array_shape("Profile", 2, 2);
/// const TEXT: &str = hmget_fix(&PROFILE, &["name", "email"], "KEYS[1]", "declare a map", ".").as_str();
/// assert_eq!(
///     TEXT,
///     "declare a map, or return the fields in the order of `Profile` with `HMGET`: `return redis.call('HMGET', KEYS[1], 'name', 'email')`."
/// );
/// ```
pub const fn hmget_fix(
    shape: &Shape,
    fields: &[&str],
    key: &str,
    before: &str,
    after: &str,
) -> CheckMessage {
    let mut text = CheckMessage::new().push(before);
    let Shape::Array { name, max, .. } = shape else {
        return text.push(after);
    };
    text = if str_eq(name, "tuple") {
        text.push(", or return the values in the tuple's order with `HMGET`: `return redis.call('HMGET', ")
    } else {
        text.push(", or return the fields in the order of `")
            .push(name)
            .push("` with `HMGET`: `return redis.call('HMGET', ")
    };
    text = text.push(key);
    if fields.is_empty() {
        let mut index = 0;
        while index < *max {
            text = text.push(", 'field").push_count(index + 1).push("'");
            index += 1;
        }
    }
    let mut index = 0;
    while index < fields.len() {
        text = text.push(", '").push(fields[index]).push("'");
        index += 1;
    }
    text.push(")`").push(after)
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
    pub(super) const fn new() -> Self {
        Self {
            bytes: [0; CHECK_MESSAGE_CAPACITY],
            len: 0,
        }
    }

    pub(super) const fn push(mut self, text: &str) -> Self {
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
/// use redis_script::__private_v3::{array_mismatch, array_shape};
/// const SHAPE: redis_script::shape::Shape = array_shape("FixedWindow", 2, 2);
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
/// use redis_script::__private_v3::{Shape, tagged_shape, unknown_tag_message, variant};
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
/// use redis_script::__private_v3::unknown_code_message;
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
pub(super) struct NearMiss<'w> {
    word: &'w str,
    budget: usize,
    pub(super) best: Option<(usize, &'static str)>,
}

impl<'w> NearMiss<'w> {
    pub(super) const fn new(word: &'w str) -> Self {
        let budget = suggest::edit_allowance(word);
        Self {
            word,
            budget,
            best: None,
        }
    }

    pub(super) const fn consider(mut self, candidate: &'static str) -> Self {
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
/// use redis_script::__private_v3::contains_code;
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
/// use redis_script::__private_v3::unraised_code;
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

/// `T`'s [`Shape`] and field names when `T` implements
/// [`ReplyShape`](super::ReplyShape), else none: `ShapeProbe::<T>::SHAPE`,
/// with [`NoReplyShape`] in scope. The checks a hand-written
/// `FromRedisValue` type cannot fail (it may decode a map by name) ask
/// through it, so they never require the trait.
///
/// ```
/// use redis_script::__private_v3::{NoReplyShape as _, ShapeProbe};
/// struct HandWritten;
/// const KNOWN: bool = ShapeProbe::<u64>::SHAPE.is_some();
/// const UNKNOWN: bool = ShapeProbe::<HandWritten>::SHAPE.is_some();
/// assert!(KNOWN && !UNKNOWN);
/// ```
#[derive(Debug)]
pub struct ShapeProbe<T: ?Sized>(core::marker::PhantomData<T>);

impl<T: super::ReplyShape> ShapeProbe<T> {
    /// `T`'s shape.
    pub const SHAPE: Option<&'static Shape> = Some(&T::SHAPE);
    /// `T`'s field names.
    pub const FIELD_NAMES: &'static [&'static str] = T::FIELD_NAMES;
}

/// The fallback of [`ShapeProbe`]: no shape known.
pub trait NoReplyShape {
    /// No shape: `T` does not implement `ReplyShape`.
    const SHAPE: Option<&'static Shape> = None;
    /// No field names.
    const FIELD_NAMES: &'static [&'static str] = &[];
}

impl<T: ?Sized> NoReplyShape for ShapeProbe<T> {}
