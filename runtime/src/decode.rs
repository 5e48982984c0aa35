//! Helpers called by the code `#[derive(ScriptReply)]` and
//! `#[derive(ScriptError)]` generate. Not a public API: reached through
//! `redis_script::__private` and free to change in any release.
//!
//! Keeping the logic here, rather than in the expansion, keeps the generated
//! code small and the error messages in one place.

use std::str::FromStr;
use std::vec::IntoIter;

use redis::{FromRedisValue, ParsingError, Value};

use crate::error::truncate_for_display;
use crate::reply::render_reply;

/// Longest nested reason kept in a field error, in characters.
const REASON_LIMIT: usize = 240;

/// The prefix redis-rs puts on every [`ParsingError`]'s text.
const PARSING_PREFIX: &str = "Incompatible type - ";

const NIL: &Value = &Value::Nil;

/// The value inside a RESP3 attribute wrapper.
fn inner(value: &Value) -> &Value {
    match value {
        Value::Attribute { data, .. } => inner(data),
        other => other,
    }
}

fn into_inner(value: Value) -> Value {
    match value {
        Value::Attribute { data, .. } => into_inner(*data),
        other => other,
    }
}

/// The text of a value that can be a tag: a bulk, status or verbatim string.
fn tag_text(value: &Value) -> Option<&[u8]> {
    match inner(value) {
        Value::BulkString(bytes) => Some(bytes),
        Value::SimpleString(text) => Some(text.as_bytes()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes()),
        Value::Okay => Some(b"OK"),
        _ => None,
    }
}

fn elements(count: usize) -> String {
    if count == 1 {
        "1 element".to_owned()
    } else {
        format!("{count} elements")
    }
}

fn element_range(min: usize, max: usize) -> String {
    if min == max {
        elements(min)
    } else {
        format!("{min} to {max} elements")
    }
}

fn nil_error(expected: &str) -> ParsingError {
    format!(
        "expected {expected}, got nil (a script returning nil or false decodes only into an `Option`)"
    )
    .into()
}

/// A nested error's text without redis-rs's prefix, bounded.
pub(crate) fn reason(error: &ParsingError) -> String {
    let text = error.to_string();
    let text = text.strip_prefix(PARSING_PREFIX).unwrap_or(&text);
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(REASON_LIMIT).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

fn count_error(expected: &str, min: usize, max: usize, got: usize) -> ParsingError {
    format!(
        "expected {expected} ({}), got {}",
        element_range(min, max),
        elements(got)
    )
    .into()
}

fn not_an_array(expected: &str, min: usize, max: usize, value: &Value) -> ParsingError {
    match value {
        Value::Nil => nil_error(expected),
        other => format!(
            "expected {expected} (an array of {}), got {}",
            element_range(min, max),
            render_reply(other)
        )
        .into(),
    }
}

/// The elements of a positional reply (a derived struct), after checking
/// that it is an array of `min..=max` elements.
pub fn reply_array<'a>(
    value: &'a Value,
    expected: &'static str,
    min: usize,
    max: usize,
) -> Result<&'a [Value], ParsingError> {
    match inner(value) {
        Value::Array(items) if (min..=max).contains(&items.len()) => Ok(items),
        Value::Array(items) => Err(count_error(expected, min, max, items.len())),
        other => Err(not_an_array(expected, min, max, other)),
    }
}

/// [`reply_array`] for an owned reply: its elements, to move out one by one.
pub fn reply_array_owned(
    value: Value,
    expected: &'static str,
    min: usize,
    max: usize,
) -> Result<IntoIter<Value>, ParsingError> {
    match into_inner(value) {
        Value::Array(items) if (min..=max).contains(&items.len()) => Ok(items.into_iter()),
        Value::Array(items) => Err(count_error(expected, min, max, items.len())),
        other => Err(not_an_array(expected, min, max, &other)),
    }
}

fn field_error(error: &ParsingError, expected: &str, field: &str, position: usize) -> ParsingError {
    format!(
        "{expected}: field `{field}` (element {position}): {}",
        reason(error)
    )
    .into()
}

/// Decodes `items[index]` (nil when absent: a trailing `Option` field) into
/// field `field`, which is element `position` (1-based, as in Lua) of the
/// reply.
pub fn reply_element<T: FromRedisValue>(
    items: &[Value],
    index: usize,
    position: usize,
    expected: &'static str,
    field: &'static str,
) -> Result<T, ParsingError> {
    T::from_redis_value_ref(items.get(index).unwrap_or(NIL))
        .map_err(|error| field_error(&error, expected, field, position))
}

/// [`reply_element`] for an owned reply: decodes the next element.
pub fn reply_next<T: FromRedisValue>(
    items: &mut IntoIter<Value>,
    position: usize,
    expected: &'static str,
    field: &'static str,
) -> Result<T, ParsingError> {
    T::from_redis_value(items.next().unwrap_or(Value::Nil))
        .map_err(|error| field_error(&error, expected, field, position))
}

fn tag_list(tags: &[&str]) -> String {
    tags.join(", ")
}

fn expected_tagged(type_name: &str, tags: &[&str]) -> String {
    format!(
        "expected {type_name} (a tag among {}, alone or as the first element of an array)",
        tag_list(tags)
    )
}

/// The variant a tagged reply selects: an array whose first element is the
/// tag, or a bare string / status reply that is the tag.
#[derive(Debug)]
pub struct ReplyTag<'a> {
    /// Index of the selected variant in the `tags` given to [`reply_tag`].
    pub variant: usize,
    tag: &'static str,
    rest: Option<&'a [Value]>,
}

/// Reads the tag of a reply for the enum `type_name` whose variants are
/// tagged `tags` (in order), and selects the variant it names.
pub fn reply_tag<'a>(
    value: &'a Value,
    type_name: &'static str,
    tags: &'static [&'static str],
) -> Result<ReplyTag<'a>, ParsingError> {
    let (tag, rest) = match inner(value) {
        Value::Array(items) => match items.split_first() {
            Some((first, rest)) => match tag_text(first) {
                Some(tag) => (tag, Some(rest)),
                None => {
                    return Err(format!(
                        "expected {type_name}: the first element must be a tag (one of {}), got {}",
                        tag_list(tags),
                        render_reply(first)
                    )
                    .into());
                }
            },
            None => {
                return Err(
                    format!("{}, got an empty array", expected_tagged(type_name, tags)).into(),
                );
            }
        },
        Value::Nil => return Err(nil_error(type_name)),
        other => match tag_text(other) {
            Some(tag) => (tag, None),
            None => {
                return Err(format!(
                    "{}, got {}",
                    expected_tagged(type_name, tags),
                    render_reply(other)
                )
                .into());
            }
        },
    };
    let found = tags
        .iter()
        .enumerate()
        .find(|(_, candidate)| candidate.as_bytes() == tag);
    match found {
        Some((variant, tag)) => Ok(ReplyTag { variant, tag, rest }),
        None => Err(format!(
            "unknown tag {:?}: expected one of {}",
            truncate_for_display(tag),
            tag_list(tags)
        )
        .into()),
    }
}

fn variant_count_error(expected: &str, min: usize, max: usize, got: &str) -> ParsingError {
    format!(
        "expected {expected} ({} with the tag), got {got}",
        element_range(min + 1, max + 1)
    )
    .into()
}

impl<'a> ReplyTag<'a> {
    /// The elements after the tag, after checking that there are
    /// `min..=max` of them; none for a bare tag, which fits only a variant
    /// without required fields.
    pub fn fields(
        &self,
        expected: &'static str,
        min: usize,
        max: usize,
    ) -> Result<&'a [Value], ParsingError> {
        check_field_count(self.tag, self.rest.map(<[Value]>::len), expected, min, max)?;
        Ok(self.rest.unwrap_or(&[]))
    }
}

/// Checks that a variant's reply has `min..=max` elements after its tag;
/// `fields` is `None` for a bare tag, which fits only a variant without
/// required fields.
fn check_field_count(
    tag: &str,
    fields: Option<usize>,
    expected: &'static str,
    min: usize,
    max: usize,
) -> Result<(), ParsingError> {
    let got = match fields {
        Some(count) if (min..=max).contains(&count) => return Ok(()),
        None if min == 0 => return Ok(()),
        Some(count) => elements(count + 1),
        None => format!("the bare tag {tag:?}"),
    };
    Err(variant_count_error(expected, min, max, &got))
}

/// [`ReplyTag`] for an owned reply.
#[derive(Debug)]
pub struct ReplyTagOwned {
    /// Index of the selected variant in the `tags` given to [`reply_tag_owned`].
    pub variant: usize,
    tag: &'static str,
    rest: Option<IntoIter<Value>>,
}

/// [`reply_tag`] for an owned reply.
pub fn reply_tag_owned(
    value: Value,
    type_name: &'static str,
    tags: &'static [&'static str],
) -> Result<ReplyTagOwned, ParsingError> {
    let value = into_inner(value);
    let ReplyTag { variant, tag, .. } = reply_tag(&value, type_name, tags)?;
    let rest = match value {
        Value::Array(items) => {
            let mut rest = items.into_iter();
            rest.next();
            Some(rest)
        }
        _ => None,
    };
    Ok(ReplyTagOwned { variant, tag, rest })
}

impl ReplyTagOwned {
    /// [`ReplyTag::fields`] for an owned reply.
    pub fn fields(
        self,
        expected: &'static str,
        min: usize,
        max: usize,
    ) -> Result<IntoIter<Value>, ParsingError> {
        check_field_count(
            self.tag,
            self.rest.as_ref().map(ExactSizeIterator::len),
            expected,
            min,
            max,
        )?;
        Ok(self.rest.unwrap_or_else(|| Vec::new().into_iter()))
    }
}

/// The whitespace-separated words of `text`, with their byte offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text;
    let mut offset = 0;
    std::iter::from_fn(move || {
        let trimmed = rest.trim_start();
        offset += rest.len() - trimmed.len();
        if trimmed.is_empty() {
            return None;
        }
        let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
        let (word, after) = trimmed.split_at(end);
        let start = offset;
        offset += end;
        rest = after;
        Some((start, word))
    })
}

/// Splits the message of a script error among the named fields `names`
/// (the grammar documented on `derive(ScriptError)`):
///
/// * `name=value` sets field `name`;
/// * `name value` sets field `name` when `name` is a field not yet set;
/// * any other word sets the next field not yet set, in declaration order;
/// * the rest of the text, from the first word no field takes, goes to the
///   field at index `rest` (the `message` field), trimmed; extra words are
///   ignored when there is none.
///
/// The `rest` field is never set by name or position, and is `Some("")`
/// when nothing is left.
pub fn error_fields<'a>(
    message: &'a str,
    names: &[&str],
    rest: Option<usize>,
) -> Vec<Option<&'a str>> {
    let mut fields: Vec<Option<&'a str>> = vec![None; names.len()];
    let settable = |fields: &[Option<&str>], index: usize| {
        Some(index) != rest && fields.get(index).is_some_and(Option::is_none)
    };
    let named = |fields: &[Option<&str>], name: &str| {
        names
            .iter()
            .position(|candidate| *candidate == name)
            .filter(|&index| settable(fields, index))
    };
    let mut words = words(message);
    while let Some((start, word)) = words.next() {
        if let Some((name, value)) = word.split_once('=')
            && let Some(index) = named(&fields, name).filter(|_| !value.is_empty())
        {
            fields[index] = Some(value);
            continue;
        }
        if let Some(index) = named(&fields, word)
            && let Some((_, value)) = words.next()
        {
            fields[index] = Some(value);
            continue;
        }
        if let Some(index) = (0..names.len()).find(|&index| settable(&fields, index)) {
            fields[index] = Some(word);
            continue;
        }
        if let Some(slot) = rest.and_then(|index| fields.get_mut(index)) {
            *slot = message.get(start..).map(str::trim_end);
        }
        break;
    }
    if let Some(slot) = rest.and_then(|index| fields.get_mut(index)) {
        slot.get_or_insert("");
    }
    fields
}

/// Splits the message of a script error among `count` positional fields
/// (a tuple variant): one word each, the last field taking the rest of the
/// text, trimmed.
pub fn error_words(message: &str, count: usize) -> Vec<Option<&str>> {
    let mut fields = Vec::with_capacity(count);
    let mut words = words(message);
    while fields.len() + 1 < count {
        fields.push(words.next().map(|(_, word)| word));
    }
    if count > 0 {
        let rest = words
            .next()
            .and_then(|(start, _)| message.get(start..))
            .map(str::trim_end);
        fields.push(rest);
    }
    fields
}

/// A required field of a script error, parsed with [`FromStr`]; `None`
/// when it is absent or does not parse.
pub fn error_field<T: FromStr>(fields: &[Option<&str>], index: usize) -> Option<T> {
    fields.get(index).copied().flatten()?.parse().ok()
}

/// An `Option` field of a script error: `Some(None)` when absent, `None`
/// when present but not parseable.
pub fn error_optional<T: FromStr>(fields: &[Option<&str>], index: usize) -> Option<Option<T>> {
    match fields.get(index).copied().flatten() {
        None => Some(None),
        Some(text) => text.parse().ok().map(Some),
    }
}

#[cfg(test)]
mod tests;
