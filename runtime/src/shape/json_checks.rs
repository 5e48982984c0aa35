//! The `const fn` checks of what a script reads from a `Json<T>`
//! argument against `T`'s [`JsonType`]: the attribute's assertions call
//! them, one per path the script reads and one per use of a part.

use super::checks::{CheckMessage, NearMiss, str_eq};
use super::json::{JsonField, JsonObject, JsonType, Written};

/// What the script does with a part of a decoded argument (the
/// analysis' `JsonUse`, as the assertions name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonUse {
    /// `part.field`, `part[k]`.
    Indexed,
    /// `+`, `-`, `*`, `/`, `%`, `^`.
    Arithmetic,
    /// `..`.
    Concatenated,
    /// `<`, `<=`, `>`, `>=`.
    Ordered,
    /// `== nil`, `~= nil`.
    ComparedWithNil,
    /// `== true`, `~= false`.
    ComparedWithBoolean,
    /// `== 5`.
    ComparedWithNumber,
    /// `== 'text'`.
    ComparedWithString,
    /// `if part then`, `not part`, `part and …`, `part or …`.
    Tested,
    /// `tonumber(ARGV[n])`, `ARGV[n] + 0`: the JSON text, not decoded.
    TextAsNumber,
}

/// A part reached by a path: its JSON type, and whether serde_json writes
/// it on every value.
#[derive(Clone, Copy)]
struct Reached {
    ty: &'static JsonType,
    written: Written,
}

/// Where a path leads: a part, a part the shape does not describe
/// (anything may be there), or a step that finds nothing, with why.
// Evaluated at compile time only: its size costs nothing at run time.
#[allow(clippy::large_enum_variant)]
enum Walk {
    Part(Reached),
    Unknown,
    Nothing(CheckMessage),
}

/// Why `path` (a field name per step, `None` for an element `[i]`) finds
/// nothing in a value of `shape`, between `before` and `after`; `None`
/// when it may find something.
///
/// ```
/// use redis_script::__private_v3::{CheckMessage, json_path_problem};
/// use redis_script::shape::JsonType;
/// const VEC: JsonType = JsonType::Array(&JsonType::Integer);
/// const FINE: bool = json_path_problem(&VEC, &[None], "", "").is_none();
/// const PROBLEM: Option<CheckMessage> = json_path_problem(&VEC, &[Some("id")], "but ", ".");
/// assert!(FINE);
/// assert_eq!(
///     PROBLEM.map(|message| message.as_str().to_owned()).as_deref(),
///     Some("but the part before `id` is a JSON array, whose field \"id\" is always nil."),
/// );
/// ```
pub const fn json_path_problem(
    shape: &'static JsonType,
    path: &[Option<&str>],
    before: &str,
    after: &str,
) -> Option<CheckMessage> {
    match walk(shape, path) {
        Walk::Nothing(why) => Some(
            CheckMessage::new()
                .push(before)
                .push(why.as_str())
                .push(after),
        ),
        Walk::Part(_) | Walk::Unknown => None,
    }
}

/// Why `used` of the part `path` reaches raises or never holds, between
/// `before` and `after`; `None` when it may work, or when the path finds
/// nothing ([`json_path_problem`] reports that).
///
/// ```
/// use redis_script::__private_v3::{CheckMessage, JsonUse, json_use_problem};
/// const FLAG: redis_script::shape::JsonType = redis_script::shape::JsonType::Bool;
/// const PROBLEM: Option<CheckMessage> =
///     json_use_problem(&FLAG, &[], JsonUse::ComparedWithString, "", "");
/// assert_eq!(
///     PROBLEM.map(|message| message.as_str().to_owned()).as_deref(),
///     Some("it is a JSON boolean, which cjson decodes as a Lua boolean: it never equals a string"),
/// );
/// ```
pub const fn json_use_problem(
    shape: &'static JsonType,
    path: &[Option<&str>],
    used: JsonUse,
    before: &str,
    after: &str,
) -> Option<CheckMessage> {
    let Walk::Part(reached) = walk(shape, path) else {
        return None;
    };
    let (inner, nullable) = match reached.ty {
        JsonType::Nullable(inner) => (*inner, true),
        other => (other, false),
    };
    let null_written = nullable && matches!(reached.written, Written::Always);
    let message = CheckMessage::new().push(before);
    let message =
        match used {
            JsonUse::Tested if null_written => null_message(message)
                .push(", a value Lua finds true: the test passes for `None` too"),
            JsonUse::ComparedWithNil if null_written => null_message(message)
                .push(", not nil: the comparison with nil never holds for `None`"),
            JsonUse::Tested | JsonUse::ComparedWithNil => return None,
            JsonUse::TextAsNumber => match inner {
                JsonType::Bool
                | JsonType::String
                | JsonType::Array(_)
                | JsonType::Map(_)
                | JsonType::Object(_) => described(message.push("it is the text of "), inner)
                    .push(", which is never a number: `tonumber` gives nil, and arithmetic raises"),
                _ => return None,
            },
            JsonUse::Indexed => match inner {
                JsonType::Bool | JsonType::Integer | JsonType::Number | JsonType::String => {
                    described(message.push("it is "), inner).push(", which has no fields")
                }
                _ => return None,
            },
            JsonUse::Arithmetic | JsonUse::Concatenated | JsonUse::Ordered => match inner {
                JsonType::Bool | JsonType::Array(_) | JsonType::Map(_) | JsonType::Object(_) => {
                    let operation = match used {
                        JsonUse::Arithmetic => "arithmetic on it",
                        JsonUse::Concatenated => "concatenating it",
                        _ => "comparing it with `<` or `>`",
                    };
                    described(message.push("it is "), inner)
                        .push(", which cjson decodes as a Lua ")
                        .push(lua_type(inner))
                        .push(": ")
                        .push(operation)
                        .push(" raises an error")
                }
                _ => return None,
            },
            JsonUse::ComparedWithBoolean => match inner {
                JsonType::Bool | JsonType::Any => return None,
                _ => never_equals(message, inner, "a boolean"),
            },
            JsonUse::ComparedWithNumber => match inner {
                JsonType::Integer | JsonType::Number | JsonType::Any => return None,
                _ => never_equals(message, inner, "a number"),
            },
            JsonUse::ComparedWithString => match inner {
                JsonType::String | JsonType::Any => return None,
                _ => never_equals(message, inner, "a string"),
            },
        };
    Some(message.push(after))
}

const fn null_message(message: CheckMessage) -> CheckMessage {
    message.push(
        "it is an `Option` that serde writes as `null` when `None`, and cjson decodes `null` as `cjson.null`",
    )
}

const fn never_equals(message: CheckMessage, ty: &JsonType, literal: &str) -> CheckMessage {
    described(message.push("it is "), ty)
        .push(", which cjson decodes as a Lua ")
        .push(lua_type(ty))
        .push(": it never equals ")
        .push(literal)
}

const fn walk(shape: &'static JsonType, path: &[Option<&str>]) -> Walk {
    let mut reached = Reached {
        ty: shape,
        written: Written::Always,
    };
    let mut step = 0;
    while step < path.len() {
        // Indexing `cjson.null` raises, but only for `None`: the use
        // checks speak of null where it matters.
        let ty = match reached.ty {
            JsonType::Nullable(inner) => *inner,
            other => other,
        };
        reached = match (ty, path[step]) {
            (JsonType::Any, _) => return Walk::Unknown,
            (JsonType::Object(object), Some(name)) => match field(object, name) {
                Some(field) => match field.written {
                    Written::Never => {
                        return Walk::Nothing(
                            CheckMessage::new()
                                .push("`")
                                .push(object.name)
                                .push("` never writes \"")
                                .push(field.name)
                                .push("\" (serde skips it when serializing): it is always nil"),
                        );
                    }
                    written => Reached {
                        ty: field.ty,
                        written,
                    },
                },
                None if object.open => return Walk::Unknown,
                None => return Walk::Nothing(unknown_field(object, name)),
            },
            (JsonType::Map(value), Some(_)) | (JsonType::Array(value), None) => Reached {
                ty: value,
                written: Written::Sometimes,
            },
            // cjson decodes object keys as strings: `t[1]` finds nothing,
            // but a map's keys are the caller's to know.
            (JsonType::Map(_), None) => return Walk::Unknown,
            (JsonType::Object(object), None) => {
                return Walk::Nothing(
                    CheckMessage::new()
                        .push("`")
                        .push(object.name)
                        .push("` is a JSON object, decoded as a table with string keys: an element `[i]` of it is always nil"),
                );
            }
            (JsonType::Array(_), Some(name)) => {
                return Walk::Nothing(
                    CheckMessage::new()
                        .push("the part before `")
                        .push(name)
                        .push("` is a JSON array, whose field \"")
                        .push(name)
                        .push("\" is always nil"),
                );
            }
            (scalar, _) => {
                return Walk::Nothing(
                    described(CheckMessage::new().push("the part it indexes is "), scalar)
                        .push(", which has no fields"),
                );
            }
        };
        step += 1;
    }
    Walk::Part(reached)
}

/// The field of `object` serde_json writes under `name`.
const fn field(object: &'static JsonObject, name: &str) -> Option<&'static JsonField> {
    let mut index = 0;
    while index < object.fields.len() {
        if str_eq(object.fields[index].name, name) {
            return Some(&object.fields[index]);
        }
        index += 1;
    }
    None
}

/// "`Job` has no field "jobid": it writes "jobId", "attempts" and "note";
/// did you mean "jobId"?"
const fn unknown_field(object: &'static JsonObject, name: &str) -> CheckMessage {
    let mut message = CheckMessage::new()
        .push("`")
        .push(object.name)
        .push("` has no field \"")
        .push(name)
        .push("\", so it is always nil");
    let mut near = NearMiss::new(name);
    let mut written = 0;
    let mut index = 0;
    while index < object.fields.len() {
        let field = &object.fields[index];
        index += 1;
        if matches!(field.written, Written::Never) {
            continue;
        }
        near = near.consider(field.name);
        message = match written {
            0 => message.push(": serde writes \""),
            _ if is_last_written(object.fields, index) => message.push("\" and \""),
            _ => message.push("\", \""),
        };
        message = message.push(field.name);
        written += 1;
    }
    if written > 0 {
        message = message.push("\"");
    }
    match near.best {
        Some((_, best)) => message.push("; did you mean \"").push(best).push("\"?"),
        None => message,
    }
}

/// No field from `from` on is written.
const fn is_last_written(fields: &[JsonField], from: usize) -> bool {
    let mut index = from;
    while index < fields.len() {
        if !matches!(fields[index].written, Written::Never) {
            return false;
        }
        index += 1;
    }
    true
}

const fn described(message: CheckMessage, ty: &JsonType) -> CheckMessage {
    match ty {
        JsonType::Any => message.push("any JSON value"),
        JsonType::Bool => message.push("a JSON boolean"),
        JsonType::Integer => message.push("a JSON integer"),
        JsonType::Number => message.push("a JSON number"),
        JsonType::String => message.push("a JSON string"),
        JsonType::Array(_) => message.push("a JSON array"),
        JsonType::Map(_) => message.push("a JSON object (a map)"),
        JsonType::Object(object) => message
            .push("a JSON object (`")
            .push(object.name)
            .push("`)"),
        JsonType::Nullable(inner) => described(message, inner).push(" or null"),
    }
}

/// What cjson decodes a value of `ty` as.
const fn lua_type(ty: &JsonType) -> &'static str {
    match ty {
        JsonType::Bool => "boolean",
        JsonType::Integer | JsonType::Number => "number",
        JsonType::String => "string",
        JsonType::Array(_) | JsonType::Map(_) | JsonType::Object(_) => "table",
        JsonType::Nullable(_) | JsonType::Any => "value",
    }
}

/// What cjson writes for a field of a table the script encodes (the
/// analysis' `EncodedKind`, as the assertions name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodedKind {
    /// A number with no fraction.
    Integer,
    /// A number literal with a fraction.
    Fraction,
    /// A number that may have a fraction.
    Number,
    /// A string.
    String,
    /// A boolean.
    Boolean,
    /// A string, or `false` where a command found nothing.
    StringOrFalse,
    /// A table.
    Table,
    /// nil: cjson leaves the field out.
    Nil,
    /// `cjson.null`.
    Null,
    /// A number, or nil (left out).
    NumberOrNil,
}

/// Why serde_json cannot read the field `name`, which the script encodes
/// as `kind`, into `shape` (a struct's object), between `before` and
/// `after`; `None` when it may.
///
/// ```
/// use redis_script::__private_v3::{CheckMessage, EncodedKind, json_field_problem};
/// use redis_script::shape::JsonType;
/// // Not a struct: the fields are not checked.
/// const PROBLEM: Option<CheckMessage> =
///     json_field_problem(&JsonType::Any, "count", EncodedKind::String, "", "");
/// assert!(PROBLEM.is_none());
/// ```
pub const fn json_field_problem(
    shape: &'static JsonType,
    name: &str,
    kind: EncodedKind,
    before: &str,
    after: &str,
) -> Option<CheckMessage> {
    let JsonType::Object(object) = shape else {
        return None;
    };
    let message = CheckMessage::new().push(before);
    let Some(field) = read_field(object, name) else {
        if object.deny_unknown_fields {
            return Some(
                unknown_field(object, name)
                    .push(", and it denies unknown fields (`#[serde(deny_unknown_fields)]`)")
                    .push(after),
            );
        }
        return None;
    };
    let (target, nullable) = match field.ty {
        JsonType::Nullable(inner) => (*inner, true),
        other => (other, false),
    };
    let fits = match (kind, target) {
        (_, JsonType::Any) => true,
        (EncodedKind::Nil, _) => !field.required,
        (EncodedKind::Null, _) => nullable,
        // A number fits a number; nil fits where the field may be missing,
        // and the number does not: which one comes is the data's to say.
        (EncodedKind::NumberOrNil, JsonType::Integer | JsonType::Number) => true,
        (EncodedKind::NumberOrNil, _) => !field.required,
        (EncodedKind::Integer, JsonType::Integer | JsonType::Number) => true,
        (EncodedKind::Fraction, JsonType::Number) => true,
        (EncodedKind::Number, JsonType::Integer | JsonType::Number) => true,
        (EncodedKind::String, JsonType::String) => true,
        (EncodedKind::Boolean, JsonType::Bool) => true,
        // `false` reads as a `bool`: only the string, where the command
        // found something, fails; which one comes is the data's to say.
        (EncodedKind::StringOrFalse, JsonType::Bool) => true,
        (EncodedKind::Table, JsonType::Array(_) | JsonType::Map(_) | JsonType::Object(_)) => true,
        _ => false,
    };
    if fits {
        return None;
    }
    let message = match kind {
        EncodedKind::Nil => message
            .push("it is nil, so cjson leaves it out, and `")
            .push(object.name)
            .push("` requires it"),
        EncodedKind::StringOrFalse if matches!(target, JsonType::String) => message
            .push("it is `false` where the command finds nothing, which cjson writes as `false`, and serde reads `")
            .push(object.name)
            .push(".")
            .push(field.name)
            .push("` only from a string")
            .push(if nullable { " or null (use `or cjson.null`)" } else { " (use `or ''`, or make the field an `Option` and use `or cjson.null`)" }),
        _ => described(
            message
                .push("cjson writes ")
                .push(written_as(kind))
                .push(", and serde reads `")
                .push(object.name)
                .push(".")
                .push(field.name)
                .push("` from "),
            field.ty,
        ),
    };
    Some(message.push(after))
}

/// Why serde_json cannot read a table with only the fields `present`
/// into `shape`: the required fields it lacks, between `before` and
/// `after`; `None` when it has them all.
///
/// ```
/// use redis_script::__private_v3::{CheckMessage, json_missing_fields};
/// use redis_script::shape::JsonType;
/// const PROBLEM: Option<CheckMessage> = json_missing_fields(&JsonType::Any, &["id"], "", "");
/// assert!(PROBLEM.is_none());
/// ```
pub const fn json_missing_fields(
    shape: &'static JsonType,
    present: &[&str],
    before: &str,
    after: &str,
) -> Option<CheckMessage> {
    let JsonType::Object(object) = shape else {
        return None;
    };
    let missing = missing_count(object.fields, present);
    if missing == 0 {
        return None;
    }
    let mut message = CheckMessage::new()
        .push(before)
        .push("`")
        .push(object.name)
        .push("` requires \"");
    let mut listed = 0;
    let mut index = 0;
    while index < object.fields.len() {
        let field = &object.fields[index];
        index += 1;
        if !is_missing(field, present) {
            continue;
        }
        message = match listed {
            0 => message,
            _ if listed + 1 == missing => message.push("\" and \""),
            _ => message.push("\", \""),
        };
        message = message.push(field.accepts[0]);
        listed += 1;
    }
    Some(
        message
            .push("\", which the table does not set: serde_json fails with \"missing field\"")
            .push(after),
    )
}

/// A required field serde reads from none of the keys `present`.
const fn is_missing(field: &JsonField, present: &[&str]) -> bool {
    field.required && !field.accepts.is_empty() && !accepts_any(field, present)
}

/// How many of `fields` are missing.
const fn missing_count(fields: &[JsonField], present: &[&str]) -> usize {
    let mut count = 0;
    let mut index = 0;
    while index < fields.len() {
        if is_missing(&fields[index], present) {
            count += 1;
        }
        index += 1;
    }
    count
}

/// Whether serde reads `field` from one of the keys `present`.
const fn accepts_any(field: &JsonField, present: &[&str]) -> bool {
    let mut index = 0;
    while index < present.len() {
        let mut name = 0;
        while name < field.accepts.len() {
            if str_eq(field.accepts[name], present[index]) {
                return true;
            }
            name += 1;
        }
        index += 1;
    }
    false
}

/// The field of `object` serde_json reads from the key `name`.
const fn read_field(object: &'static JsonObject, name: &str) -> Option<&'static JsonField> {
    let mut index = 0;
    while index < object.fields.len() {
        if accepts_any(&object.fields[index], &[name]) {
            return Some(&object.fields[index]);
        }
        index += 1;
    }
    None
}

const fn written_as(kind: EncodedKind) -> &'static str {
    match kind {
        EncodedKind::Integer => "a JSON integer",
        EncodedKind::Fraction => "a JSON number with a fraction",
        EncodedKind::Number => "a JSON number",
        EncodedKind::String | EncodedKind::StringOrFalse => "a JSON string",
        EncodedKind::Boolean => "a JSON boolean",
        EncodedKind::Table => "a JSON array or object",
        EncodedKind::Nil => "nothing",
        EncodedKind::Null => "`null`",
        EncodedKind::NumberOrNil => "a JSON number (or leaves the field out)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: JsonType = JsonType::Nullable(&JsonType::String);
    const TAGS: JsonType = JsonType::Array(&JsonType::String);
    const JOB: JsonType = JsonType::Object(&JsonObject {
        name: "Job",
        fields: &[
            JsonField {
                name: "jobId",
                accepts: &["jobId"],
                ty: &JsonType::String,
                written: Written::Always,
                required: true,
            },
            JsonField {
                name: "attempts",
                accepts: &["attempts"],
                ty: &JsonType::Integer,
                written: Written::Always,
                required: true,
            },
            JsonField {
                name: "note",
                accepts: &["note"],
                ty: &NOTE,
                written: Written::Always,
                required: false,
            },
            JsonField {
                name: "hint",
                accepts: &["hint"],
                ty: &NOTE,
                written: Written::Sometimes,
                required: false,
            },
            JsonField {
                name: "tags",
                accepts: &["tags"],
                ty: &TAGS,
                written: Written::Always,
                required: true,
            },
            JsonField {
                name: "secret",
                accepts: &[],
                ty: &JsonType::String,
                written: Written::Never,
                required: false,
            },
        ],
        open: false,
        deny_unknown_fields: false,
    });

    fn path_problem(path: &[Option<&str>]) -> Option<String> {
        json_path_problem(&JOB, path, "<", ">").map(|message| message.as_str().to_owned())
    }

    fn use_problem(path: &[Option<&str>], used: JsonUse) -> Option<String> {
        json_use_problem(&JOB, path, used, "", "").map(|message| message.as_str().to_owned())
    }

    #[test]
    fn a_field_serde_does_not_write_is_named_with_the_ones_it_does() {
        assert_eq!(path_problem(&[Some("jobId")]), None);
        assert_eq!(path_problem(&[Some("tags"), None]), None);
        assert_eq!(
            path_problem(&[Some("jobid")]).as_deref(),
            Some(
                "<`Job` has no field \"jobid\", so it is always nil: serde writes \"jobId\", \"attempts\", \"note\", \"hint\" and \"tags\"; did you mean \"jobId\"?>"
            )
        );
        assert_eq!(
            path_problem(&[Some("secret")]).as_deref(),
            Some(
                "<`Job` never writes \"secret\" (serde skips it when serializing): it is always nil>"
            )
        );
        assert!(
            path_problem(&[Some("tags"), Some("first")])
                .is_some_and(|text| text.contains("JSON array"))
        );
        assert!(
            path_problem(&[Some("attempts"), Some("x")])
                .is_some_and(|text| text.contains("a JSON integer, which has no fields"))
        );
        assert!(path_problem(&[None]).is_some_and(|text| text.contains("an element `[i]`")));
    }

    #[test]
    fn uses_the_json_type_cannot_take_are_explained() {
        assert_eq!(use_problem(&[Some("attempts")], JsonUse::Arithmetic), None);
        assert_eq!(use_problem(&[Some("jobId")], JsonUse::Arithmetic), None);
        assert_eq!(
            use_problem(&[Some("tags")], JsonUse::Concatenated).as_deref(),
            Some(
                "it is a JSON array, which cjson decodes as a Lua table: concatenating it raises an error"
            )
        );
        assert_eq!(
            use_problem(&[Some("attempts")], JsonUse::ComparedWithString).as_deref(),
            Some(
                "it is a JSON integer, which cjson decodes as a Lua number: it never equals a string"
            )
        );
        assert_eq!(
            use_problem(&[Some("attempts")], JsonUse::ComparedWithNumber),
            None
        );
        assert!(use_problem(&[Some("note")], JsonUse::ComparedWithNumber).is_some());
        assert_eq!(
            use_problem(&[Some("note")], JsonUse::ComparedWithString),
            None
        );
        // A missing path is the path check's to report.
        assert_eq!(use_problem(&[Some("nope")], JsonUse::Arithmetic), None);
    }

    #[test]
    fn an_option_written_as_null_is_true_and_not_nil() {
        let tested = use_problem(&[Some("note")], JsonUse::Tested);
        assert!(
            tested
                .as_deref()
                .is_some_and(|text| text.contains("a value Lua finds true")),
            "{tested:?}"
        );
        assert!(use_problem(&[Some("note")], JsonUse::ComparedWithNil).is_some());
        // Left out when `None`: nil, as the script expects.
        assert_eq!(use_problem(&[Some("hint")], JsonUse::Tested), None);
        assert_eq!(use_problem(&[Some("hint")], JsonUse::ComparedWithNil), None);
        assert_eq!(use_problem(&[Some("jobId")], JsonUse::Tested), None);
    }

    fn field_problem(name: &str, kind: EncodedKind) -> Option<String> {
        json_field_problem(&JOB, name, kind, "", "").map(|message| message.as_str().to_owned())
    }

    #[test]
    fn an_encoded_field_of_another_json_type_is_named_with_what_serde_reads() {
        assert_eq!(field_problem("attempts", EncodedKind::Integer), None);
        assert_eq!(field_problem("attempts", EncodedKind::Number), None);
        assert_eq!(
            field_problem("attempts", EncodedKind::String).as_deref(),
            Some("cjson writes a JSON string, and serde reads `Job.attempts` from a JSON integer")
        );
        assert!(field_problem("attempts", EncodedKind::Fraction).is_some());
        assert!(field_problem("jobId", EncodedKind::Integer).is_some());
        assert!(
            field_problem("jobId", EncodedKind::StringOrFalse)
                .is_some_and(|text| text.contains("use `or ''`"))
        );
        assert_eq!(field_problem("note", EncodedKind::Nil), None);
        assert!(field_problem("jobId", EncodedKind::Nil).is_some());
        assert_eq!(field_problem("tags", EncodedKind::Table), None);
        assert!(field_problem("tags", EncodedKind::String).is_some());
        // serde ignores fields it does not know.
        assert_eq!(field_problem("extra", EncodedKind::String), None);
        // `cjson.null` reads only as an `Option`.
        assert_eq!(field_problem("note", EncodedKind::Null), None);
        assert!(
            field_problem("jobId", EncodedKind::Null)
                .is_some_and(|text| text.starts_with("cjson writes `null`"))
        );
        // A number or nil: a number field takes both; an optional one
        // takes the nil only, which may be all that comes.
        assert_eq!(field_problem("attempts", EncodedKind::NumberOrNil), None);
        assert_eq!(field_problem("note", EncodedKind::NumberOrNil), None);
        assert!(field_problem("jobId", EncodedKind::NumberOrNil).is_some());
    }

    #[test]
    fn the_required_fields_a_complete_table_lacks_are_listed() {
        let missing = |present: &[&str]| {
            json_missing_fields(&JOB, present, "", "").map(|message| message.as_str().to_owned())
        };
        assert_eq!(missing(&["jobId", "attempts", "tags"]), None);
        assert_eq!(
            missing(&["jobId"]).as_deref(),
            Some(
                "`Job` requires \"attempts\" and \"tags\", which the table does not set: serde_json fails with \"missing field\""
            )
        );
    }
}
