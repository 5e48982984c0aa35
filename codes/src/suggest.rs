//! The one "did you mean" policy: the compile-time analysis (Lua names,
//! commands, flags, attribute keys) and the runtime's compile-time reply
//! checks (tags and error codes) both ask it, so a typo gets the same
//! suggestion wherever it is reported.
//!
//! Letters count as characters, not bytes (`DÉNIED` is one edit from
//! `DENIED`), ASCII case does not count, and the edits allowed grow with
//! the length of the typo. Every function is `const`, so that the
//! runtime's checks can run in constant evaluation.
//!
//! ```
//! use redis_script_codes::suggest::{edit_allowance, folded_edit_distance};
//!
//! assert_eq!(folded_edit_distance("DÉNIED", "DENIED"), 1);
//! assert_eq!(folded_edit_distance("alowed", "ALLOWED"), 1);
//! assert_eq!((edit_allowance("ok"), edit_allowance("DENY"), edit_allowance("DENIED")), (0, 1, 2));
//! ```

/// The longest word, in characters, that is compared; longer ones are
/// never suggested.
pub const MAX_CHARS: usize = 64;

/// How many edits a typo of this text may be from a suggestion: none up
/// to 2 characters, one up to 5, two beyond.
pub const fn edit_allowance(typo: &str) -> usize {
    match char_count(typo) {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    }
}

/// The number of characters (Unicode scalar values) of `text`.
pub const fn char_count(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut index = 0;
    while index < bytes.len() {
        // Every byte that does not continue a character starts one.
        if bytes[index] & 0xC0 != 0x80 {
            count += 1;
        }
        index += 1;
    }
    count
}

/// Optimal string alignment distance between `a` and `b`, over characters
/// with ASCII letters folded to lower case: an insertion, a deletion, a
/// substitution or a swap of two neighbours each costs 1. `usize::MAX`
/// when either has more than [`MAX_CHARS`] characters.
pub const fn folded_edit_distance(a: &str, b: &str) -> usize {
    let (a, a_len) = folded_chars(a);
    let (b, b_len) = folded_chars(b);
    if a_len > MAX_CHARS || b_len > MAX_CHARS {
        return usize::MAX;
    }
    // Rows i-1, i and i+1 of the matrix, in turn.
    let mut rows = [[0usize; MAX_CHARS + 1]; 3];
    let mut j = 0;
    while j <= b_len {
        rows[1][j] = j;
        j += 1;
    }
    let mut i = 0;
    while i < a_len {
        let (before, previous, current) = (i % 3, (i + 1) % 3, (i + 2) % 3);
        rows[current][0] = i + 1;
        let mut j = 0;
        while j < b_len {
            let substitution = rows[previous][j] + if a[i] == b[j] { 0 } else { 1 };
            let mut best = substitution;
            if rows[previous][j + 1] + 1 < best {
                best = rows[previous][j + 1] + 1;
            }
            if rows[current][j] + 1 < best {
                best = rows[current][j] + 1;
            }
            if i > 0
                && j > 0
                && a[i - 1] == b[j]
                && a[i] == b[j - 1]
                && rows[before][j - 1] + 1 < best
            {
                best = rows[before][j - 1] + 1;
            }
            rows[current][j + 1] = best;
            j += 1;
        }
        i += 1;
    }
    rows[(a_len + 1) % 3][b_len]
}

/// The first [`MAX_CHARS`] characters of `text`, ASCII-folded, and how
/// many characters it has in all.
const fn folded_chars(text: &str) -> ([u32; MAX_CHARS], usize) {
    let bytes = text.as_bytes();
    let mut chars = [0u32; MAX_CHARS];
    let mut count = 0;
    let mut index = 0;
    while index < bytes.len() {
        let first = bytes[index];
        // A `str` is valid UTF-8: the first byte says the length.
        let (mut value, length) = if first < 0x80 {
            (first as u32, 1)
        } else if first >= 0xF0 {
            ((first & 0x07) as u32, 4)
        } else if first >= 0xE0 {
            ((first & 0x0F) as u32, 3)
        } else {
            ((first & 0x1F) as u32, 2)
        };
        let mut next = 1;
        while next < length && index + next < bytes.len() {
            value = (value << 6) | (bytes[index + next] & 0x3F) as u32;
            next += 1;
        }
        if value >= 'A' as u32 && value <= 'Z' as u32 {
            value += 32;
        }
        if count < MAX_CHARS {
            chars[count] = value;
        }
        count += 1;
        index += length;
    }
    (chars, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(char_count("DÉNIED"), 6);
        assert_eq!(folded_edit_distance("DÉNIED", "DENIED"), 1);
        assert_eq!(folded_edit_distance("ÉTAT", "ÉTÉ"), 2);
        assert_eq!(folded_edit_distance("日本", "日本語"), 1);
        assert_eq!(edit_allowance("ÉTÉ"), 1);
    }

    #[test]
    fn edits_and_case() {
        assert_eq!(folded_edit_distance("DENYED", "DENIED"), 1);
        assert_eq!(folded_edit_distance("NOT_OWNR", "NOT_OWNER"), 1);
        assert_eq!(folded_edit_distance("ALOWED", "allowed"), 1);
        assert_eq!(folded_edit_distance("AB", "BA"), 1);
        assert_eq!(folded_edit_distance("", "ABC"), 3);
        assert_eq!(folded_edit_distance("kitten", "sitting"), 3);
        assert_eq!(folded_edit_distance("Redis", "redis"), 0);
        let long = "x".repeat(MAX_CHARS + 1);
        assert_eq!(folded_edit_distance(&long, "x"), usize::MAX);
    }
}
