//! The leading comment block: documentation for the generated function.

use super::Signature;
use super::diagnostic::Diagnostic;

/// The comment block at the top of the script (after any shebang line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// Every comment line, without the `--` and one following space.
    pub doc: Vec<String>,
    /// `-- KEYS[1] = lock key` entries.
    pub keys: Vec<ParamDoc>,
    /// `-- ARGV[2]: ttl ms` entries.
    pub args: Vec<ParamDoc>,
}

/// One documented parameter: `-- KEYS[index] = text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDoc {
    /// The 1-based index inside KEYS or ARGV.
    pub index: usize,
    pub text: String,
    /// The 1-based line of the comment.
    pub line: usize,
    /// The 1-based column (in characters) of `KEYS[`/`ARGV[` on that line.
    pub column: usize,
}

impl Header {
    /// The header line documenting `KEYS[index]` (or `ARGV[index]`).
    pub(crate) fn line_of(&self, keys: bool, index: usize) -> Option<usize> {
        let entries = if keys { &self.keys } else { &self.args };
        entries
            .iter()
            .find(|entry| entry.index == index)
            .map(|entry| entry.line)
    }
}

/// Reads the comment lines before the first line of code. A blank line
/// after some comments ends the block.
pub(crate) fn parse(source: &str) -> Header {
    let mut header = Header::default();
    let mut lines = source.lines().enumerate().peekable();
    if lines.peek().is_some_and(|(_, line)| line.starts_with("#!")) {
        lines.next();
    }
    let mut in_block_comment = false;
    for (index, raw) in lines {
        let line_number = index + 1;
        let line = raw.trim();
        let text = if in_block_comment {
            if let Some(before) = line.strip_suffix("]]") {
                in_block_comment = false;
                before.trim_end_matches("--")
            } else {
                line
            }
        } else if let Some(rest) = line.strip_prefix("--[[") {
            in_block_comment = !rest.ends_with("]]");
            rest.trim_end_matches("]]")
        } else if let Some(rest) = line.strip_prefix("--") {
            rest
        } else if line.is_empty() && header.doc.is_empty() {
            continue;
        } else {
            break;
        };
        let text = text.strip_prefix(' ').unwrap_or(text).trim_end();
        record_entry(&mut header, text, raw, line_number);
        header.doc.push(text.to_string());
    }
    header
}

/// Records `KEYS[n] = text` / `ARGV[n]: text` entries of a comment line
/// that starts with one; several may share a line, separated by commas.
fn record_entry(header: &mut Header, text: &str, raw: &str, line: usize) {
    let mut rest = text;
    while let Some((table, index, after)) = entry_start(rest) {
        let description = after.trim_start().trim_start_matches(['=', ':', '-']);
        let end = next_entry(description).unwrap_or(description.len());
        let (own, following) = description.split_at(end);
        let written = format!("{table}[{index}]");
        let column = raw
            .find(&written)
            .and_then(|byte| raw.get(..byte))
            .map_or(1, |before| before.chars().count() + 1);
        let entry = ParamDoc {
            index,
            text: own
                .trim()
                .trim_end_matches([',', ';'])
                .trim_end()
                .to_string(),
            line,
            column,
        };
        match table {
            "KEYS" => header.keys.push(entry),
            _ => header.args.push(entry),
        }
        rest = following;
    }
}

/// `KEYS[n]` or `ARGV[n]` at the start of `text`: the table, the index and
/// what follows the closing bracket.
fn entry_start(text: &str) -> Option<(&'static str, usize, &str)> {
    let (table, rest) = if let Some(rest) = text.strip_prefix("KEYS[") {
        ("KEYS", rest)
    } else {
        ("ARGV", text.strip_prefix("ARGV[")?)
    };
    let (digits, after) = rest.split_once(']')?;
    let index = digits.trim().parse::<usize>().ok()?;
    Some((table, index, after))
}

/// Where the next entry starts: after a `,` or `;` separator.
fn next_entry(text: &str) -> Option<usize> {
    text.char_indices()
        .filter(|(_, character)| *character == ',' || *character == ';')
        .map(|(at, separator)| at + separator.len_utf8())
        .find_map(|after| {
            let tail = text.get(after..)?;
            let skipped = tail.len() - tail.trim_start().len();
            entry_start(tail.trim_start()).map(|_| after + skipped)
        })
}

/// Notes for header entries that document more keys or arguments than the
/// Rust function declares.
pub(crate) fn contradictions(header: &Header, signature: &Signature) -> Vec<Diagnostic> {
    let keys = header
        .keys
        .iter()
        .filter(|entry| !signature.variadic_keys && entry.index > signature.keys)
        .map(|entry| contradiction(entry, "KEYS", signature.keys, "key"));
    let args = header
        .args
        .iter()
        .filter(|entry| !signature.variadic_args && entry.index > signature.args)
        .map(|entry| contradiction(entry, "ARGV", signature.args, "argument"));
    keys.chain(args).collect()
}

fn contradiction(entry: &ParamDoc, table: &str, declared: usize, noun: &str) -> Diagnostic {
    let count = plural(declared, noun);
    let width = format!("{table}[{}]", entry.index).len();
    Diagnostic::note(
        entry.line,
        entry.column,
        width,
        format!(
            "the header documents `{table}[{}]`, but the Rust function declares {count}",
            entry.index
        ),
    )
    .with_hint(format!(
        "declare {} in the Rust function (or a variadic {noun} parameter), or fix the comment",
        plural(entry.index, noun)
    ))
}

/// `1 key`, `2 keys`, `no keys`.
pub(crate) fn plural(count: usize, noun: &str) -> String {
    match count {
        0 => format!("no {noun}s"),
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "#!lua flags=no-writes\n-- Release a lock.\n--\n-- KEYS[1] = lock key\n-- ARGV[1]: owner token\n--[[ ARGV[2] - ttl ms ]]\n\nlocal x = 1\n-- not header\n";

    #[test]
    fn reads_doc_lines_and_parameter_entries() {
        let header = parse(SCRIPT);
        assert_eq!(
            header.doc,
            [
                "Release a lock.",
                "",
                "KEYS[1] = lock key",
                "ARGV[1]: owner token",
                "ARGV[2] - ttl ms"
            ]
        );
        assert_eq!(
            header.keys,
            [ParamDoc {
                index: 1,
                text: "lock key".into(),
                line: 4,
                column: 4,
            }]
        );
        let args: Vec<_> = header
            .args
            .iter()
            .map(|entry| (entry.index, entry.text.as_str()))
            .collect();
        assert_eq!(args, [(1, "owner token"), (2, "ttl ms")]);
    }

    #[test]
    fn reads_several_entries_on_one_line() {
        let header = parse("-- KEYS[1] = lock, ARGV[1] = token, ARGV[2] = ttl in ms\nreturn 1");
        let keys: Vec<_> = header
            .keys
            .iter()
            .map(|e| (e.index, e.text.as_str()))
            .collect();
        let args: Vec<_> = header
            .args
            .iter()
            .map(|e| (e.index, e.text.as_str()))
            .collect();
        assert_eq!(keys, [(1, "lock")]);
        assert_eq!(args, [(1, "token"), (2, "ttl in ms")]);
    }

    #[test]
    fn notes_documented_parameters_beyond_the_signature() {
        let header = parse(SCRIPT);
        let signature = Signature {
            keys: 1,
            args: 1,
            ..Signature::default()
        };
        let notes = contradictions(&header, &signature);
        let [note] = notes.as_slice() else {
            panic!("{notes:?}")
        };
        assert_eq!(
            note.message,
            "the header documents `ARGV[2]`, but the Rust function declares 1 argument"
        );
        assert_eq!(note.line, 6);
    }
}
