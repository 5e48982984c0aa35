//! Positions in a document: the analysis counts 1-based lines and
//! characters; the protocol counts 0-based lines and UTF-16 code units.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

/// The text of line `line` (0-based), without its line break.
pub fn line_text(text: &str, line: usize) -> &str {
    text.split('\n')
        .nth(line)
        .map_or("", |line| line.strip_suffix('\r').unwrap_or(line))
}

/// The length of `text` in UTF-16 code units: a protocol column.
pub fn utf16_len(text: &str) -> u32 {
    u32::try_from(text.encode_utf16().count()).unwrap_or(u32::MAX)
}

/// The UTF-16 column of the character at `column` (0-based) of `line`.
fn utf16_column(line: &str, column: usize) -> u32 {
    let units: usize = line.chars().take(column).map(char::len_utf16).sum();
    u32::try_from(units).unwrap_or(u32::MAX)
}

/// The protocol's position of the analysis's 1-based `line:column`.
pub fn position(text: &str, line: usize, column: usize) -> Position {
    let line = line.saturating_sub(1);
    Position::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        utf16_column(line_text(text, line), column.saturating_sub(1)),
    )
}

/// The range of `width` characters from the analysis's `line:column`,
/// continuing on the next lines when the width goes past a line's end.
pub fn range(text: &str, line: usize, column: usize, width: usize) -> Range {
    let start = position(text, line, column);
    let mut line = line.saturating_sub(1);
    let mut column = column.saturating_sub(1);
    let mut remaining = width.max(1);
    loop {
        let length = line_text(text, line).chars().count();
        let left_on_line = length.saturating_sub(column);
        let more_lines = text.split('\n').count() > line + 1;
        if remaining <= left_on_line || !more_lines {
            column = (column + remaining).min(length.max(column));
            break;
        }
        // The line break counts as one character.
        remaining -= left_on_line + 1;
        line += 1;
        column = 0;
    }
    let end = Position::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        utf16_column(line_text(text, line), column),
    );
    Range::new(start, end)
}

/// The byte offset of a protocol position in `text`, clamped to the text.
pub fn offset(text: &str, position: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text[line_start..].find('\n') {
            Some(end) => line_start += end + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |end| line_start + end);
    let mut units = 0;
    for (index, character) in text[line_start..line_end].char_indices() {
        if units >= position.character as usize {
            return line_start + index;
        }
        units += character.len_utf16();
    }
    line_end
}

/// `text` after one change an editor sends: a range replaced, or the
/// whole text when the change has no range.
pub fn apply(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        Some(range) => {
            let start = offset(text, range.start);
            let end = offset(text, range.end).max(start);
            text.replace_range(start..end, &change.text);
        }
        None => *text = change.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units() {
        let text = "local s = 'é😀' return KEYS[1]\n";
        // `KEYS` is character 23 (1-based), after one character of two
        // UTF-16 units.
        assert_eq!(position(text, 1, 23), Position::new(0, 23));
        assert_eq!(
            offset(text, Position::new(0, 23)),
            text.find("KEYS").unwrap_or(0)
        );
    }

    #[test]
    fn a_range_past_the_line_end_goes_on() {
        let text = "ab\ncdef\n";
        assert_eq!(
            range(text, 1, 2, 4),
            Range::new(Position::new(0, 1), Position::new(1, 2))
        );
        assert_eq!(
            range(text, 2, 3, 50),
            Range::new(Position::new(1, 2), Position::new(2, 0))
        );
    }

    #[test]
    fn changes_apply_by_range_or_whole() {
        let mut text = "return KEYS[1]\n".to_owned();
        apply(
            &mut text,
            TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(0, 12), Position::new(0, 13))),
                range_length: None,
                text: "2".to_owned(),
            },
        );
        assert_eq!(text, "return KEYS[2]\n");
        // A range beyond the end is clamped, never a panic.
        apply(
            &mut text,
            TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(9, 0), Position::new(3, 7))),
                range_length: None,
                text: "x".to_owned(),
            },
        );
        assert_eq!(text, "return KEYS[2]\nx");
    }
}
