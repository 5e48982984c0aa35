//! Reply rendering for error messages.

use std::fmt::Write as _;

use redis::Value;

use crate::error::{DISPLAY_LIMIT, truncate_for_display};

/// Most elements of an array shown before `…`.
const ELEMENT_LIMIT: usize = 8;
/// Deepest nesting shown before `…`.
const DEPTH_LIMIT: usize = 4;

/// A compact, bounded rendering of a reply, for [`crate::Error::Decode`]:
/// long strings and arrays are cut so a large reply never floods a log.
pub(crate) fn render_reply(value: &Value) -> String {
    let mut out = String::new();
    render(value, 0, &mut out);
    out
}

fn render(value: &Value, depth: usize, out: &mut String) {
    if depth > DEPTH_LIMIT {
        out.push('…');
        return;
    }
    let _ = match value {
        Value::Nil => write!(out, "nil"),
        Value::Int(number) => write!(out, "{number}"),
        Value::Double(number) => write!(out, "{number}"),
        Value::Boolean(flag) => write!(out, "{flag}"),
        Value::Okay => write!(out, "OK"),
        Value::BulkString(bytes) => write!(out, "{:?}", truncate_for_display(bytes)),
        Value::SimpleString(text) => write!(out, "+{}", truncate_for_display(text.as_bytes())),
        Value::VerbatimString { text, .. } => {
            write!(out, "{:?}", truncate_for_display(text.as_bytes()))
        }
        Value::BigNumber(number) => write!(
            out,
            "{}",
            truncate_for_display(format!("{number:?}").as_bytes())
        ),
        Value::Array(items) | Value::Set(items) => {
            render_list(items.iter(), items.len(), depth, out);
            Ok(())
        }
        Value::Push { data, .. } => {
            render_list(data.iter(), data.len(), depth, out);
            Ok(())
        }
        Value::Map(pairs) => {
            out.push('{');
            for (index, (key, item)) in pairs.iter().take(ELEMENT_LIMIT).enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                render(key, depth + 1, out);
                out.push_str(": ");
                render(item, depth + 1, out);
            }
            if pairs.len() > ELEMENT_LIMIT {
                out.push_str(", …");
            }
            out.push('}');
            Ok(())
        }
        Value::Attribute { data, .. } => {
            render(data, depth, out);
            Ok(())
        }
        Value::ServerError(error) => write!(
            out,
            "-{} {}",
            error.code(),
            truncate_for_display(error.details().unwrap_or_default().as_bytes())
        ),
        #[allow(unreachable_patterns)]
        _ => write!(out, "<reply>"),
    };
    if out.len() > DISPLAY_LIMIT * 16 {
        out.truncate(DISPLAY_LIMIT * 16);
        out.push('…');
    }
}

fn render_list<'a>(
    items: impl Iterator<Item = &'a Value>,
    len: usize,
    depth: usize,
    out: &mut String,
) {
    out.push('[');
    for (index, item) in items.take(ELEMENT_LIMIT).enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        render(item, depth + 1, out);
    }
    if len > ELEMENT_LIMIT {
        let _ = write!(out, ", … {} more", len - ELEMENT_LIMIT);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_nested_replies_compactly() {
        let reply = Value::Array(vec![
            Value::BulkString(b"DENIED".to_vec()),
            Value::Int(3),
            Value::Nil,
        ]);
        assert_eq!(render_reply(&reply), "[\"DENIED\", 3, nil]");
    }

    #[test]
    fn long_replies_are_cut() {
        let reply = Value::Array((0..20).map(Value::Int).collect());
        assert_eq!(render_reply(&reply), "[0, 1, 2, 3, 4, 5, 6, 7, … 12 more]");
        let long = Value::BulkString(vec![b'x'; 1000]);
        assert!(render_reply(&long).chars().count() < 80);
    }
}
