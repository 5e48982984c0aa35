//! Reading tokens: an identifier's name and a string literal's value, as
//! the source writes them.

use full_moon::tokenizer::{StringLiteralQuoteType, TokenReference, TokenType};

use crate::source::span::SourceMap;

/// The name of an identifier token (`""` for any other token).
pub(crate) fn identifier(token: &TokenReference) -> &str {
    match token.token_type() {
        TokenType::Identifier { identifier } => identifier.as_str(),
        _ => "",
    }
}

/// The value of a string literal, read from the source as written (see
/// `syntax::Prepared::new` for why not from the token).
pub(crate) fn string_literal(map: &SourceMap<'_>, token: &TokenReference) -> String {
    let (start, end) = (token.token().start_position(), token.token().end_position());
    let written = map.text(start.bytes(), end.bytes()).unwrap_or_default();
    match token.token_type() {
        TokenType::StringLiteral {
            quote_type: StringLiteralQuoteType::Brackets,
            multi_line_depth,
            ..
        } => long_string(written, *multi_line_depth),
        TokenType::StringLiteral { .. } => {
            let mut characters = written.chars();
            characters.next();
            characters.next_back();
            unescape(characters.as_str())
        }
        _ => String::new(),
    }
}

/// `[==[text]==]` without its brackets; Lua drops a first line break.
fn long_string(written: &str, depth: usize) -> String {
    let bracket = depth + 2;
    let inner = written
        .get(bracket..written.len().saturating_sub(bracket))
        .unwrap_or_default();
    let inner = inner
        .strip_prefix("\r\n")
        .or_else(|| inner.strip_prefix('\n'))
        .unwrap_or(inner);
    inner.to_string()
}

/// The text of a Lua string literal, with the common escapes decoded.
pub(crate) fn unescape(literal: &str) -> String {
    let mut text = String::with_capacity(literal.len());
    let mut characters = literal.chars().peekable();
    while let Some(character) = characters.next() {
        if character != '\\' {
            text.push(character);
            continue;
        }
        match characters.next() {
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some('r') => text.push('\r'),
            Some('a') => text.push('\u{7}'),
            Some('b') => text.push('\u{8}'),
            Some('f') => text.push('\u{c}'),
            Some('v') => text.push('\u{b}'),
            Some(digit) if digit.is_ascii_digit() => {
                let mut code = digit.to_digit(10).unwrap_or(0);
                for _ in 0..2 {
                    match characters.peek().and_then(|next| next.to_digit(10)) {
                        Some(next) => {
                            code = code * 10 + next;
                            characters.next();
                        }
                        None => break,
                    }
                }
                text.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            Some(other) => text.push(other),
            None => text.push('\\'),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_decoded() {
        assert_eq!(unescape(r"a\n\65\\\'"), "a\nA\\'");
    }
}
