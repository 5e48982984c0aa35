//! The leading comment block: documentation for the generated function.

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

/// One documented parameter: `-- KEYS[index] = text`, or `-- KEYS[index..]
/// = text` for a variadic list from that index on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDoc {
    /// The 1-based index inside KEYS or ARGV.
    pub index: usize,
    /// `KEYS[index..]`: every element from `index` on.
    pub variadic: bool,
    pub text: String,
    /// The 1-based line of the comment.
    pub line: usize,
    /// The 1-based column (in characters) of `KEYS[`/`ARGV[` on that line.
    pub column: usize,
}

impl Header {
    /// Reads the comment lines before the first line of code (after any
    /// `#!lua` line). A blank line after some comments ends the block.
    pub fn parse(source: &str) -> Header {
        parse(source)
    }

    /// The arguments the header calls a key prefix (`-- ARGV[1] = key
    /// prefix (hash-tagged)`): keys built by appending to them are
    /// checked like keys built from KEYS.
    pub fn key_prefix_args(&self) -> std::collections::BTreeSet<usize> {
        self.args
            .iter()
            .filter(|doc| !doc.variadic && doc.text.to_ascii_lowercase().contains("key prefix"))
            .map(|doc| doc.index)
            .collect()
    }

    /// The header line documenting `KEYS[index]` (or `ARGV[index]`).
    pub(crate) fn line_of(&self, keys: bool, index: usize) -> Option<usize> {
        let entries = if keys { &self.keys } else { &self.args };
        entries
            .iter()
            .find(|entry| entry.index == index)
            .map(|entry| entry.line)
    }
}

/// The fixed count and whether a variadic list follows: the first
/// variadic entry ends the fixed ones.
pub(crate) fn documented_count(entries: &[ParamDoc]) -> (usize, bool) {
    match entries
        .iter()
        .filter(|entry| entry.variadic)
        .map(|entry| entry.index)
        .min()
    {
        Some(first_variadic) => (first_variadic.saturating_sub(1), true),
        None => (
            entries.iter().map(|entry| entry.index).max().unwrap_or(0),
            false,
        ),
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
    while let Some((table, index, variadic, after)) = entry_start(rest) {
        let description = after.trim_start().trim_start_matches(['=', ':', '-']);
        let end = next_entry(description).unwrap_or(description.len());
        let (own, following) = description.split_at(end);
        let written = format!("{table}[{index}");
        let column = raw
            .find(&written)
            .and_then(|byte| raw.get(..byte))
            .map_or(1, |before| before.chars().count() + 1);
        let entry = ParamDoc {
            index,
            variadic,
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

/// `KEYS[n]`, `ARGV[n]` or a variadic `KEYS[n..]` (also `KEYS[n...]`,
/// `KEYS[n..m]`) at the start of `text`: the table, the index, whether it
/// is variadic and what follows the closing bracket.
fn entry_start(text: &str) -> Option<(&'static str, usize, bool, &str)> {
    let (table, rest) = if let Some(rest) = text.strip_prefix("KEYS[") {
        ("KEYS", rest)
    } else {
        ("ARGV", text.strip_prefix("ARGV[")?)
    };
    let (inside, after) = rest.split_once(']')?;
    let (digits, variadic) = match inside.split_once("..") {
        Some((digits, _)) => (digits, true),
        None => (inside, false),
    };
    let index = digits.trim().parse::<usize>().ok()?;
    Some((table, index, variadic, after))
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const SCRIPT: &str = "#!lua flags=no-writes\n-- Release a lock.\n--\n-- KEYS[1] = lock key\n-- ARGV[1]: owner token\n--[[ ARGV[2] - ttl ms ]]\n\nlocal x = 1\n-- not header\n";

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
                variadic: false,
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
}
