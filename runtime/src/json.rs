//! `Json<T>`: a reply the script built with `cjson.encode(...)`.

use std::fmt;
use std::ops::{Deref, DerefMut};

use redis::{FromRedisValue, ParsingError, Value};
use serde::de::DeserializeOwned;

use crate::error::DISPLAY_LIMIT;
use crate::reply::render_reply;
use crate::shape::{ReplyShape, Shape};

/// A reply holding JSON text, decoded into `T` with `serde_json`.
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
