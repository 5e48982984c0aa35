//! The leading comment block: documentation for the generated function.

use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::text::plural_or_no;
use crate::{DeclaredBy, Signature};

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

    /// The keys and arguments the header documents, as a signature:
    /// `-- KEYS[2] = …` declares two keys, `-- ARGV[2..] = …` one argument
    /// followed by a variadic list. `None` when it documents neither.
    pub fn documented_signature(&self) -> Option<Signature> {
        if self.keys.is_empty() && self.args.is_empty() {
            return None;
        }
        let (keys, variadic_keys) = documented_count(&self.keys);
        let (args, variadic_args) = documented_count(&self.args);
        Some(Signature {
            keys,
            args,
            variadic_keys,
            variadic_args,
            key_prefix_args: self.key_prefix_args(),
            declared_by: DeclaredBy::Header,
            ..Signature::default()
        })
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
fn documented_count(entries: &[ParamDoc]) -> (usize, bool) {
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

/// Notes for header entries that document more keys or arguments than the
/// Rust function (or the command line) declares.
pub(crate) fn contradictions(header: &Header, signature: &Signature) -> Vec<Diagnostic> {
    if signature.declared_by == DeclaredBy::Header {
        return Vec::new();
    }
    let keys = header
        .keys
        .iter()
        .filter(|entry| !signature.variadic_keys && entry.index > signature.keys)
        .map(|entry| contradiction(entry, "KEYS", signature, "key"));
    let args = header
        .args
        .iter()
        .filter(|entry| !signature.variadic_args && entry.index > signature.args)
        .map(|entry| contradiction(entry, "ARGV", signature, "argument"));
    keys.chain(args).collect()
}

fn contradiction(entry: &ParamDoc, table: &str, signature: &Signature, noun: &str) -> Diagnostic {
    let declared = if table == "KEYS" {
        signature.keys
    } else {
        signature.args
    };
    let count = plural_or_no(declared, noun);
    let written = if entry.variadic {
        format!("{table}[{}..]", entry.index)
    } else {
        format!("{table}[{}]", entry.index)
    };
    let hint = match signature.declared_by {
        DeclaredBy::CommandLine => {
            let option = if table == "KEYS" { "--keys" } else { "--args" };
            let wanted = if entry.variadic {
                format!("{}+", entry.index.saturating_sub(1))
            } else {
                entry.index.to_string()
            };
            format!("pass `{option} {wanted}`, or fix the comment")
        }
        DeclaredBy::HostCall => "pass it in the call, or fix the comment".to_owned(),
        DeclaredBy::Configuration => {
            let setting = if table == "KEYS" { "keys" } else { "args" };
            format!(
                "set `{setting}` in the section of `redis-script.toml` for this file, or fix the comment"
            )
        }
        _ => format!(
            "declare {} in the Rust function (or a variadic {noun} parameter), or fix the comment",
            plural_or_no(entry.index, noun)
        ),
    };
    Diagnostic::warning(
        Code::HeaderContradiction,
        entry.line,
        entry.column,
        written.len(),
        format!(
            "the header documents `{written}`, but {} declares {count}",
            signature.declared_by.subject()
        ),
    )
    .with_help(hint)
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

    #[test]
    fn documents_a_signature() {
        let documented = |source: &str| {
            parse(source).documented_signature().map(|signature| {
                (
                    signature.keys,
                    signature.variadic_keys,
                    signature.args,
                    signature.variadic_args,
                )
            })
        };
        assert_eq!(documented(SCRIPT), Some((1, false, 2, false)));
        assert_eq!(
            documented("-- KEYS[1] = lock\n-- KEYS[2..] = more locks\nreturn 1"),
            Some((1, true, 0, false))
        );
        assert_eq!(
            documented("-- ARGV[1...] = members\n-- ARGV[1..n] = same\nreturn 1"),
            Some((0, false, 0, true))
        );
        assert_eq!(
            documented("-- ARGV[3] = ttl, KEYS[2] = b\nreturn 1"),
            Some((2, false, 3, false))
        );
        assert_eq!(documented("-- Just a description.\nreturn 1"), None);
        assert_eq!(documented("return 1 -- KEYS[1] = too late"), None);
        let signature = parse(SCRIPT).documented_signature();
        assert_eq!(
            signature.map(|signature| signature.declared_by),
            Some(DeclaredBy::Header)
        );
    }

    #[test]
    fn command_line_contradictions_name_the_option() {
        let header = parse("-- KEYS[1] = a\n-- KEYS[2..] = more\n-- ARGV[2] = ttl\nreturn 1");
        let signature = Signature {
            keys: 1,
            args: 1,
            declared_by: DeclaredBy::CommandLine,
            ..Signature::default()
        };
        let found: Vec<_> = contradictions(&header, &signature)
            .into_iter()
            .map(|note| (note.text(), note.help.unwrap_or_default()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "the header documents `KEYS[2..]`, but the command line declares 1 key"
                        .to_string(),
                    "pass `--keys 1+`, or fix the comment".to_string()
                ),
                (
                    "the header documents `ARGV[2]`, but the command line declares 1 argument"
                        .to_string(),
                    "pass `--args 2`, or fix the comment".to_string()
                ),
            ]
        );
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
