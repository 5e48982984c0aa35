//! The `#!lua flags=...` first line, checked the way Redis 7 reads it.

use super::diagnostic::Diagnostic;
use super::suggest;

/// The flags `#!lua flags=...` (and a function's `flags` table) accepts.
pub(crate) const FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// The flags a script declares in its shebang line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// The script starts with `#!`.
    pub has_shebang: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot_keys: bool,
}

impl ScriptFlags {
    /// Sets `flag`; false when there is no such flag.
    pub(crate) fn set(&mut self, flag: &str) -> bool {
        let field = match flag {
            "no-writes" => &mut self.no_writes,
            "allow-oom" => &mut self.allow_oom,
            "allow-stale" => &mut self.allow_stale,
            "no-cluster" => &mut self.no_cluster,
            "allow-cross-slot-keys" => &mut self.allow_cross_slot_keys,
            _ => return false,
        };
        *field = true;
        true
    }
}

/// The flags plus what is wrong with the line.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub flags: ScriptFlags,
    /// `name=…`: the file is a function library, not a script.
    pub library_name: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One whitespace-separated word of the shebang line and its 1-based column.
struct Word<'a> {
    text: &'a str,
    column: usize,
}

impl Word<'_> {
    fn width(&self) -> usize {
        self.text.chars().count()
    }
}

/// Reads the first line when it starts with `#!`.
pub(crate) fn parse(source: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let Some(line) = source
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("#!"))
    else {
        return parsed;
    };
    parsed.flags.has_shebang = true;
    let mut words = split_words(line, 3);
    let Some(engine) = words.next() else {
        parsed.diagnostics.push(missing_engine());
        return parsed;
    };
    if engine.text != "lua" {
        parsed.diagnostics.push(unknown_engine(&engine));
    }
    for word in words {
        read_option(&word, &mut parsed);
    }
    parsed
}

fn split_words(line: &str, first_column: usize) -> impl Iterator<Item = Word<'_>> {
    let mut start: Option<(usize, usize)> = None;
    let mut words = Vec::new();
    let characters = line.char_indices().chain([(line.len(), ' ')]);
    for (column, (byte, character)) in (first_column..).zip(characters) {
        match (character.is_whitespace(), start) {
            (true, Some((start_byte, start_column))) => {
                if let Some(text) = line.get(start_byte..byte) {
                    words.push(Word {
                        text,
                        column: start_column,
                    });
                }
                start = None;
            }
            (false, None) => start = Some((byte, column)),
            _ => {}
        }
    }
    words.into_iter()
}

fn read_option(word: &Word<'_>, parsed: &mut Parsed) {
    if let Some(list) = word.text.strip_prefix("flags=") {
        let mut column = word.column + "flags=".len();
        for flag in list.split(',') {
            let width = flag.chars().count();
            if !flag.is_empty() && !parsed.flags.set(flag) {
                parsed
                    .diagnostics
                    .push(unknown_flag(flag, column, width.max(1)));
            }
            column += width + 1;
        }
    } else if let Some(name) = word.text.strip_prefix("name=") {
        parsed.library_name = Some(name.to_string());
    } else {
        parsed.diagnostics.push(
            Diagnostic::error(
                1,
                word.column,
                word.width(),
                format!(
                    "unknown shebang option `{}`: Redis would refuse the script (Unknown lua shebang option)",
                    word.text
                ),
            )
            .with_hint("a script shebang accepts only `flags=` followed by comma-separated flags"),
        );
    }
}

/// A library's first line: `#!lua name=<library>`, nothing else.
#[derive(Debug, Default)]
pub(crate) struct LibraryLine {
    pub name: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads a library's shebang the way FUNCTION LOAD does; `None` when the
/// file has no shebang (then it is no library at all).
pub(crate) fn parse_library(source: &str) -> Option<LibraryLine> {
    let line = source.lines().next()?.strip_prefix("#!")?;
    let mut parsed = LibraryLine::default();
    let mut words = split_words(line, 3);
    match words.next() {
        None => parsed.diagnostics.push(missing_engine()),
        Some(engine) if engine.text != "lua" => parsed.diagnostics.push(unknown_engine(&engine)),
        Some(_) => {}
    }
    let mut names_library = false;
    for word in words {
        names_library |= word.text.starts_with("name=");
        match word.text.strip_prefix("name=") {
            Some(name) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                parsed.name = Some(name.to_string());
            }
            Some(name) => parsed.diagnostics.push(
                Diagnostic::error(1, word.column, word.width(), format!(
                    "`{name}` is not a valid library name: FUNCTION LOAD fails with \"Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\""
                ))
                .with_hint("use letters, digits and `_` only, e.g. `name=quota_lib`"),
            ),
            None => parsed.diagnostics.push(
                Diagnostic::error(1, word.column, word.width(), format!(
                    "`{}` is not valid in a library's first line: FUNCTION LOAD fails with \"Invalid metadata value given: {}\"",
                    word.text, word.text
                ))
                .with_hint(if word.text.starts_with("flags=") {
                    "a library's first line takes only `name=`; give each function its flags where it is registered: `redis.register_function{function_name = …, callback = …, flags = {'no-writes'}}`"
                } else {
                    "a library's first line takes only `name=`: `#!lua name=my_library`"
                }),
            ),
        }
    }
    if !names_library {
        parsed.diagnostics.push(
            Diagnostic::error(1, 1, line.chars().count() + 2, "the library's first line gives no name: FUNCTION LOAD fails with \"Library name was not given\"")
                .with_hint("name the library: `#!lua name=my_library`"),
        );
    }
    Some(parsed)
}

fn missing_engine() -> Diagnostic {
    Diagnostic::error(
        1,
        1,
        2,
        "the shebang line names no engine: Redis would refuse the script",
    )
    .with_hint("write `#!lua` or `#!lua flags=no-writes`, or remove the line")
}

fn unknown_engine(engine: &Word<'_>) -> Diagnostic {
    Diagnostic::error(
        1,
        engine.column,
        engine.width(),
        format!(
            "unknown script engine `{}` in the shebang: Redis only runs `lua`",
            engine.text
        ),
    )
    .with_hint("start the line with `#!lua`")
}

fn unknown_flag(flag: &str, column: usize, width: usize) -> Diagnostic {
    let allowed = FLAGS;
    let list = allowed.join(", ");
    let hint = match suggest::closest(flag, allowed.iter().copied()) {
        Some(near) => format!("did you mean `{near}`? allowed flags: {list}"),
        None => format!("allowed flags: {list}"),
    };
    Diagnostic::error(
        1,
        column,
        width,
        format!("unknown shebang flag `{flag}`: Redis would refuse the script"),
    )
    .with_hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_flags() {
        let parsed = parse(
            "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1",
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let flags = parsed.flags;
        assert!(flags.has_shebang && flags.no_writes && flags.allow_oom);
        assert!(flags.allow_stale && flags.no_cluster && flags.allow_cross_slot_keys);
    }

    #[test]
    fn plain_engine_and_empty_flags_are_fine() {
        assert!(parse("#!lua\nreturn 1").diagnostics.is_empty());
        assert!(parse("#!lua flags=\nreturn 1").diagnostics.is_empty());
        assert!(!parse("return 1").flags.has_shebang);
    }

    #[test]
    fn points_at_the_bad_flag() {
        let parsed = parse("#!lua flags=no-writes,no-write");
        let [diagnostic] = parsed.diagnostics.as_slice() else {
            panic!("{:?}", parsed.diagnostics)
        };
        assert_eq!((diagnostic.column, diagnostic.width), (23, 8));
        assert_eq!(
            diagnostic.message,
            "unknown shebang flag `no-write`: Redis would refuse the script"
        );
    }
}
