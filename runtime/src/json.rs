//! `Json<T>`: an argument the script reads with `cjson.decode(ARGV[n])`,
//! and a reply it built with `cjson.encode(...)`.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::ops::{Deref, DerefMut};

use redis::{FromRedisValue, ParsingError, RedisWrite, ToRedisArgs, Value};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ArgumentProblem, DISPLAY_LIMIT};
use crate::reply::render_reply;
use crate::shape::{ReplyShape, Shape};

/// JSON text: an argument encoded from `T`, or a reply decoded into `T`,
/// with `serde_json`.
///
/// # As a reply
///
/// Declare it as the return type of a script that ends with
/// `return cjson.encode(value)`. `T` implements `serde::Deserialize`
/// (`serde = { version = "1", features = ["derive"] }` in `Cargo.toml`),
/// and the `json` feature is on (it is by default):
///
/// ```no_run
/// use redis_script::{Json, redis_script};
///
/// #[derive(serde::Deserialize)]
/// struct Profile { name: String, tags: Vec<String> }
///
/// /// The stored version and document (`return {version, cjson.encode(doc)}`).
/// #[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
/// async fn versioned_get(document: &str) -> Option<(u64, Json<Profile>)>;
///
/// # async fn demo(conn: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
/// if let Some((version, profile)) = versioned_get(conn, "profile:{7}").await? {
///     println!("v{version}: {} {:?}", profile.name, profile.tags);
/// }
/// # Ok(()) }
/// ```
///
/// `Json<T>` dereferences to `T`; [`Json::into_inner`] takes it out. A
/// reply that is not a string, or not JSON for `T`, is a decode error
/// naming the JSON error, its line and column, and the text around it.
///
/// Lua's cjson cannot tell an empty array from an empty object and encodes
/// both as `{}`; when `{}` does not decode as `T`, `[]` is tried, so an
/// empty Lua list decodes into an empty `Vec`.
///
/// ```
/// use redis::{FromRedisValue, Value};
/// use redis_script::Json;
///
/// let reply = Value::BulkString(br#"{"count":3}"#.to_vec());
/// let decoded: Json<serde_json::Value> = FromRedisValue::from_redis_value(reply).unwrap();
/// assert_eq!(decoded["count"], 3);
/// ```
///
/// # As an argument
///
/// A parameter `payload: Json<T>`, for `T: serde::Serialize`, is sent as
/// the text `serde_json::to_string` writes, which the script reads with
/// `cjson.decode(ARGV[n])`. Derive [`JsonShape`](macro@crate::JsonShape)
/// on `T` too, so that the script's reads of its fields can be checked:
///
/// ```no_run
/// use redis_script::{Json, redis_script};
///
/// #[derive(serde::Serialize, redis_script::JsonShape)]
/// #[serde(rename_all = "camelCase")]
/// struct Email { to: String, template_id: u32 }
///
/// /// Stores the job's payload once; the length of the waiting list, or 0.
/// #[redis_script(path = "../lua/enqueue_job.lua", keys = 1)]
/// async fn enqueue_job(queue: &str, id: &str, payload: Json<&Email>) -> i64;
///
/// # async fn demo(conn: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
/// let email = Email { to: "ada@example.com".into(), template_id: 7 };
/// // ARGV[2] is {"to":"ada@example.com","templateId":7}
/// enqueue_job(conn, "queue:{emails}:", "job-1", Json(&email)).await?;
/// # Ok(()) }
/// ```
///
/// `Json<&T>` sends a borrowed value without moving it. serde_json may
/// fail to write a value (a map whose keys are neither strings nor
/// numbers, a `Serialize` impl that returns an error): then the call
/// sends nothing and fails with [`Error::Argument`](crate::Error::Argument),
/// naming the parameter (`ARGV[2]`) and serde_json's message; a
/// [`Batch`](crate::Batch) refuses the call when it is added. Outside a
/// script call (in a plain redis-rs command), a value serde_json cannot
/// write is sent as what it wrote before it failed: empty, or cut inside
/// an object, array or string, never JSON, so `cjson.decode` of it raises.
///
/// ```
/// use redis::ToRedisArgs;
/// use redis_script::Json;
///
/// #[derive(serde::Serialize)]
/// struct Point { x: i32, y: i32 }
///
/// assert_eq!(Json(Point { x: 1, y: -2 }).to_redis_args(), [br#"{"x":1,"y":-2}"#.to_vec()]);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    /// The decoded value.
    ///
    /// ```
    /// let numbers = redis_script::Json(vec![1, 2]).into_inner();
    /// assert_eq!(numbers, vec![1, 2]);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Json<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Json<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> From<T> for Json<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for Json<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Json").field(&self.0).finish()
    }
}

impl<T: DeserializeOwned> ReplyShape for Json<T> {
    const SHAPE: Shape = Shape::Any;
    /// A nil reply is no JSON text: `Option<Json<T>>` takes it.
    const ACCEPTS_NIL: bool = false;
}

impl<T: DeserializeOwned> FromRedisValue for Json<T> {
    fn from_redis_value_ref(value: &Value) -> Result<Self, ParsingError> {
        match value {
            Value::BulkString(bytes) => decode(bytes),
            Value::SimpleString(text) => decode(text.as_bytes()),
            Value::VerbatimString { text, .. } => decode(text.as_bytes()),
            Value::Attribute { data, .. } => Self::from_redis_value_ref(data),
            Value::Nil => Err(format!(
                "expected a JSON string for {}, got nil (a script returning nil or false decodes only into an `Option`)",
                short_type_name::<T>()
            )
            .into()),
            other => Err(format!(
                "expected a JSON string (`return cjson.encode(...)`) for {}, got {}",
                short_type_name::<T>(),
                render_reply(other)
            )
            .into()),
        }
    }

    fn from_redis_value(value: Value) -> Result<Self, ParsingError> {
        Self::from_redis_value_ref(&value)
    }
}

/// The text serde_json writes, as one argument.
impl<T: Serialize> ToRedisArgs for Json<T> {
    fn write_redis_args<W: ?Sized + RedisWrite>(&self, out: &mut W) {
        WRITES.set(WRITES.get().wrapping_add(1));
        let mut writer = out.writer_for_next_arg();
        if let Err(error) = serde_json::to_writer(&mut writer, &self.0) {
            drop(writer);
            record_failure::<T>(&error);
        }
    }

    fn num_of_args(&self) -> usize {
        1
    }
}

// A failure to write a `Json` argument, kept for the call that is
// encoding it: `ToRedisArgs` cannot return an error, so the impl above
// records it here and `push_argument` (on the same thread, in the same
// synchronous step) takes it right after the write.
thread_local! {
    /// `Json` arguments written since [`watch_arguments`].
    static WRITES: Cell<usize> = const { Cell::new(0) };
    /// Set by a failure since [`watch_arguments`].
    static FAILED: Cell<bool> = const { Cell::new(false) };
    /// The first failure since [`watch_arguments`]: how many `Json`
    /// arguments were written before it, and what went wrong.
    static FAILURE: RefCell<Option<(usize, ArgumentProblem)>> = const { RefCell::new(None) };
}

/// Out of line: the usual argument writes.
#[cold]
#[inline(never)]
fn record_failure<T>(error: &serde_json::Error) {
    if FAILED.replace(true) {
        return;
    }
    let problem = ArgumentProblem::json(
        format!("Json<{}>", short_type_name::<T>()),
        error.to_string(),
    );
    let before = WRITES.get().saturating_sub(1);
    FAILURE.with(|failure| *failure.borrow_mut() = Some((before, problem)));
}

/// Starts watching the writes of one argument: forgets any earlier
/// failure (of a write outside a call, which no call took).
#[inline]
pub(crate) fn watch_arguments() {
    WRITES.set(0);
    FAILED.set(false);
}

/// The failure of a write since [`watch_arguments`], if any: how many
/// `Json` values the argument wrote before the failing one (for a
/// variadic parameter), and the problem.
#[inline]
pub(crate) fn argument_failure() -> Option<(usize, ArgumentProblem)> {
    if !FAILED.get() {
        return None;
    }
    FAILED.set(false);
    FAILURE.with(|failure| failure.borrow_mut().take())
}

fn decode<T: DeserializeOwned>(text: &[u8]) -> Result<Json<T>, ParsingError> {
    match serde_json::from_slice(text) {
        Ok(value) => Ok(Json(value)),
        Err(error) => {
            if text.trim_ascii() == b"{}"
                && let Ok(value) = serde_json::from_slice(b"[]")
            {
                return Ok(Json(value));
            }
            Err(format!(
                "invalid JSON for {}: {error}, near `{}`",
                short_type_name::<T>(),
                excerpt(text, error.line(), error.column())
            )
            .into())
        }
    }
}

/// `T`'s name without module paths: `Vec<String>`, not
/// `alloc::vec::Vec<alloc::string::String>`.
fn short_type_name<T>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut segment_start = 0;
    for (index, character) in full.char_indices() {
        if !(character.is_alphanumeric() || character == '_' || character == ':') {
            out.push_str(last_segment(
                full.get(segment_start..index).unwrap_or_default(),
            ));
            out.push(character);
            segment_start = index + character.len_utf8();
        }
    }
    out.push_str(last_segment(full.get(segment_start..).unwrap_or_default()));
    out
}

fn last_segment(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

/// Up to [`DISPLAY_LIMIT`] characters of `text` around `line`:`column`
/// (both 1-based, as serde_json reports them), with `…` where cut.
fn excerpt(text: &[u8], line: usize, column: usize) -> String {
    let text = String::from_utf8_lossy(text);
    let line_text = text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
    let chars: Vec<char> = line_text.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let start = at.saturating_sub(DISPLAY_LIMIT / 2);
    let end = (start + DISPLAY_LIMIT).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(chars.get(start..end).unwrap_or_default());
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Profile {
        name: String,
        tags: Vec<String>,
    }

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    #[test]
    fn decodes_bulk_and_status_strings() {
        let profile: Json<Profile> =
            FromRedisValue::from_redis_value(bulk(r#"{"name":"ada","tags":["x"]}"#)).unwrap();
        assert_eq!(profile.name, "ada");
        assert_eq!(
            profile.into_inner(),
            Profile {
                name: "ada".into(),
                tags: vec!["x".into()]
            }
        );
        let number: Json<u32> =
            FromRedisValue::from_redis_value(Value::SimpleString("7".into())).unwrap();
        assert_eq!(*number, 7);
    }

    #[test]
    fn empty_lua_tables_decode_as_empty_lists_or_objects() {
        let list: Json<Vec<u8>> = FromRedisValue::from_redis_value(bulk("{}")).unwrap();
        assert!(list.is_empty());
        let map: Json<BTreeMap<String, u8>> = FromRedisValue::from_redis_value(bulk("{}")).unwrap();
        assert!(map.is_empty());
    }

    #[test]
    fn errors_name_the_position_and_show_an_excerpt() {
        let error = Json::<Profile>::from_redis_value_ref(&bulk(r#"{"name":"ada","tags":[1]}"#))
            .unwrap_err()
            .to_string();
        assert!(error.contains("invalid JSON for"), "{error}");
        assert!(error.contains("line 1 column 23"), "{error}");
        assert!(
            error.contains(r#"near `{"name":"ada","tags":[1]}`"#),
            "{error}"
        );

        let long = format!(r#"{{"name":"{}","tags":oops}}"#, "n".repeat(500));
        let error = Json::<Profile>::from_redis_value_ref(&bulk(&long))
            .unwrap_err()
            .to_string();
        assert!(error.len() < 300, "{error}");
        assert!(error.contains("near `…nnnn"), "{error}");
        assert!(error.ends_with("nnnn\",\"tags\":oops}`"), "{error}");
        assert!(
            error.contains("invalid JSON for Profile: expected value"),
            "{error}"
        );
    }

    #[test]
    fn type_names_are_short() {
        assert_eq!(short_type_name::<Vec<String>>(), "Vec<String>");
        assert_eq!(
            short_type_name::<std::collections::HashMap<u8, Profile>>(),
            "HashMap<u8, Profile>"
        );
        assert_eq!(short_type_name::<(u8, &str)>(), "(u8, &str)");
    }

    #[test]
    fn non_strings_are_refused_with_the_reply() {
        let error = Json::<Profile>::from_redis_value_ref(&Value::Int(3))
            .unwrap_err()
            .to_string();
        assert!(error.contains("expected a JSON string"), "{error}");
        assert!(error.ends_with("got 3"), "{error}");
        let error = Json::<Profile>::from_redis_value_ref(&Value::Nil)
            .unwrap_err()
            .to_string();
        assert!(error.contains("got nil"), "{error}");
        let optional: Option<Json<Profile>> = FromRedisValue::from_redis_value(Value::Nil).unwrap();
        assert!(optional.is_none());
    }
}
