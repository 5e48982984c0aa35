//! Counting and listing words the same way in every message of the project: the
//! analysis, the macros and the command-line checker.

/// `count` and `noun`, made plural unless `count` is one: `1 key`,
/// `2 keys`, `0 keys`.
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Like [`plural`], with `no` for zero, where a sentence reads better with
/// it: "the Rust function declares no keys".
pub fn plural_or_no(count: usize, noun: &str) -> String {
    if count == 0 {
        format!("no {noun}s")
    } else {
        plural(count, noun)
    }
}

/// The items in backquotes, separated by commas: "`a`, `b`, `c`".
pub fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `text` is a Lua name: a letter or `_`, then letters, digits and
/// `_` (what may follow a `.` in `t.name`, or be a local).
pub fn is_lua_name(text: &str) -> bool {
    let mut characters = text.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && characters.all(|character| character.is_ascii_alphanumeric() || character == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(plural(0, "key"), "0 keys");
        assert_eq!(plural(1, "key"), "1 key");
        assert_eq!(plural(2, "argument"), "2 arguments");
        assert_eq!(plural_or_no(0, "key"), "no keys");
        assert_eq!(plural_or_no(1, "key"), "1 key");
        assert_eq!(plural_or_no(3, "key"), "3 keys");
    }
}
