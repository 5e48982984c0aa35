//! The `#!lua flags=...` first line, checked the way Redis 7 reads it.

use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::suggest;

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
        match self.field(flag) {
            Some(field) => {
                *field = true;
                true
            }
            None => false,
        }
    }

    /// The names of the flags set, in [`FLAGS`] order.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        let mut flags = self.clone();
        FLAGS
            .iter()
            .copied()
            .filter(|name| flags.field(name).is_some_and(|set| *set))
            .collect()
    }

    /// The field of the flag named `flag`.
    fn field(&mut self, flag: &str) -> Option<&mut bool> {
        Some(match flag {
            "no-writes" => &mut self.no_writes,
            "allow-oom" => &mut self.allow_oom,
            "allow-stale" => &mut self.allow_stale,
            "no-cluster" => &mut self.no_cluster,
            "allow-cross-slot-keys" => &mut self.allow_cross_slot_keys,
            _ => return None,
        })
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

/// Reads the first line when it starts with `#!`.
pub(crate) fn parse(source: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let Some(line) = source.lines().next().filter(|line| line.starts_with("#!")) else {
        return parsed;
    };
    parsed.flags.has_shebang = true;
    let words = match split_arguments(line) {
        Ok(words) => words,
        Err(unbalanced) => {
            parsed.diagnostics.push(unbalanced_quote(
                unbalanced,
                "Invalid engine in script shebang",
            ));
            return parsed;
        }
    };
    let mut words = words.into_iter();
    if let Some(engine) = words.next() {
        // EVAL compares the engine case-sensitively, FUNCTION LOAD does not.
        if engine.text != "#!lua" {
            parsed.diagnostics.push(unknown_engine(&engine));
            if engine.text == "#!" {
                // `#! lua …`: the rest is not options but a misplaced engine.
                return parsed;
            }
        }
    }
    for word in words {
        read_option(&word, &mut parsed);
    }
    parsed
}

/// One argument of the shebang line as the server splits it: `text` has its
/// quotes and escapes resolved (`name="q"` is `name=q`), `column` (1-based)
/// and `width` are where it stands in the source.
struct Word {
    text: String,
    column: usize,
    width: usize,
}

/// The column of the quote the server finds unbalanced: a quote never
/// closed, or closed with something other than a space right after it.
struct Unbalanced(usize);

/// Splits the whole first line (`#!` included) the way the server splits
/// a shebang (and a command line): whitespace separates, and `"…"` (with
/// `\n`, `\xHH`, … escapes) or `'…'` (with `\'`) quote anywhere in a word.
fn split_arguments(line: &str) -> Result<Vec<Word>, Unbalanced> {
    let characters: Vec<char> = line.chars().collect();
    let mut words = Vec::new();
    let mut at = 0;
    loop {
        while characters.get(at).is_some_and(char::is_ascii_whitespace) {
            at += 1;
        }
        if at == characters.len() {
            return Ok(words);
        }
        let start = at;
        let mut bytes = Vec::new();
        while let Some(&character) = characters.get(at) {
            match character {
                c if c.is_ascii_whitespace() => break,
                '"' | '\'' => {
                    let closing =
                        read_quoted(&characters, at, &mut bytes).ok_or(Unbalanced(at + 1))?;
                    if characters
                        .get(closing + 1)
                        .is_some_and(|c| !c.is_ascii_whitespace())
                    {
                        return Err(Unbalanced(closing + 1));
                    }
                    at = closing + 1;
                }
                c => {
                    push_char(&mut bytes, c);
                    at += 1;
                }
            }
        }
        words.push(Word {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            column: start + 1,
            width: at - start,
        });
    }
}

/// Appends what the quote opening at `open` holds; the index of its closing
/// quote, or `None` when the line ends first.
fn read_quoted(characters: &[char], open: usize, bytes: &mut Vec<u8>) -> Option<usize> {
    let quote = characters[open];
    let mut at = open + 1;
    loop {
        let character = *characters.get(at)?;
        let next = characters.get(at + 1).copied();
        match (character, next) {
            (c, _) if c == quote => return Some(at),
            ('\\', Some('\'')) if quote == '\'' => {
                bytes.push(b'\'');
                at += 2;
            }
            ('\\', Some(escaped)) if quote == '"' => {
                let hex = |i: usize| characters.get(i).and_then(|c| c.to_digit(16));
                match (escaped, hex(at + 2), hex(at + 3)) {
                    ('x', Some(high), Some(low)) => {
                        bytes.extend(u8::try_from(high * 16 + low));
                        at += 4;
                        continue;
                    }
                    ('n', ..) => bytes.push(b'\n'),
                    ('r', ..) => bytes.push(b'\r'),
                    ('t', ..) => bytes.push(b'\t'),
                    ('b', ..) => bytes.push(0x08),
                    ('a', ..) => bytes.push(0x07),
                    (other, ..) => push_char(bytes, other),
                }
                at += 2;
            }
            (other, _) => {
                push_char(bytes, other);
                at += 1;
            }
        }
    }
}

fn push_char(bytes: &mut Vec<u8>, character: char) {
    bytes.extend_from_slice(character.encode_utf8(&mut [0; 4]).as_bytes());
}

fn read_option(word: &Word, parsed: &mut Parsed) {
    if let Some(list) = word.text.strip_prefix("flags=") {
        // The server splits a non-empty list on every comma, so an empty
        // flag (`flags=no-writes,`) is an unknown one; an empty list is none.
        let mut column = word.column + "flags=".len();
        for flag in list.split(',').filter(|_| !list.is_empty()) {
            let width = flag.chars().count();
            if !parsed.flags.set(flag) {
                parsed
                    .diagnostics
                    .push(unknown_flag(flag, column, width.max(1)));
            }
            column += width + 1;
        }
    } else if let Some(name) = library_name(&word.text) {
        parsed.library_name = Some(name.to_string());
    } else {
        parsed.diagnostics.push(
            Diagnostic::error(
                Code::Shebang,
                1,
                word.column,
                word.width,
                format!(
                    "unknown shebang option `{}`: Redis would refuse the script (Unknown lua shebang option)",
                    word.text
                ),
            )
            .with_help("a script shebang accepts only `flags=` followed by comma-separated flags"),
        );
    }
}

/// What follows `name=` (any case, as FUNCTION LOAD reads it).
fn library_name(word: &str) -> Option<&str> {
    let (key, name) = word.split_at_checked(5)?;
    key.eq_ignore_ascii_case("name=").then_some(name)
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
    let line = source
        .lines()
        .next()
        .filter(|line| line.starts_with("#!"))?;
    let mut parsed = LibraryLine::default();
    let words = match split_arguments(line) {
        Ok(words) => words,
        Err(unbalanced) => {
            parsed
                .diagnostics
                .push(unbalanced_quote(unbalanced, "Invalid library metadata"));
            return Some(parsed);
        }
    };
    let mut words = words.into_iter();
    let engine = words.next();
    let mut named: Option<Word> = None;
    for word in words {
        if library_name(&word.text).is_none() {
            parsed.diagnostics.push(
                Diagnostic::error(Code::LibraryName, 1, word.column, word.width, format!(
                    "`{}` is not valid in a library's first line: FUNCTION LOAD fails with \"Invalid metadata value given: {}\"",
                    word.text, word.text
                ))
                .with_help(if word.text.starts_with("flags=") {
                    "a library's first line takes only `name=`; give each function its flags where it is registered: `redis.register_function{function_name = …, callback = …, flags = {'no-writes'}}`"
                } else {
                    "a library's first line takes only `name=`: `#!lua name=my_library`"
                }),
            );
        } else if named.is_some() {
            parsed.diagnostics.push(
                Diagnostic::error(Code::LibraryName, 1, word.column, word.width, "the library is named twice: FUNCTION LOAD fails with \"Invalid metadata value, name argument was given multiple times\"")
                    .with_help("keep one `name=`"),
            );
        } else {
            named = Some(word);
        }
    }
    match named {
        None => parsed.diagnostics.push(
            Diagnostic::error(Code::LibraryName, 1, 1, line.chars().count(), "the library's first line gives no name: FUNCTION LOAD fails with \"Library name was not given\"")
                .with_help("name the library: `#!lua name=my_library`"),
        ),
        Some(word) => {
            let name = library_name(&word.text).unwrap_or_default();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                parsed.name = Some(name.to_string());
            } else {
                parsed.diagnostics.push(
                    Diagnostic::error(Code::LibraryName, 1, word.column, word.width, format!(
                        "`{name}` is not a valid library name: FUNCTION LOAD fails with \"Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\""
                    ))
                    .with_help("use letters, digits and `_` only, e.g. `name=quota_lib`"),
                );
            }
        }
    }
    if let Some(engine) = engine.filter(|engine| !engine.text.eq_ignore_ascii_case("#!lua")) {
        let name = engine.text.get(2..).unwrap_or_default();
        let as_script = unknown_engine(&engine);
        let what = if name.is_empty() {
            "the library's first line names no engine".to_string()
        } else {
            format!("unknown engine `{name}` in the library's first line")
        };
        let mut diagnostic = Diagnostic::error(
            Code::Shebang,
            as_script.line,
            as_script.column,
            as_script.width,
            format!("{what}: FUNCTION LOAD fails with \"Engine '{name}' not found\""),
        );
        diagnostic.help = as_script.help;
        parsed.diagnostics.push(diagnostic);
    }
    Some(parsed)
}

fn unbalanced_quote(Unbalanced(column): Unbalanced, server_error: &str) -> Diagnostic {
    Diagnostic::error(
        Code::Shebang,
        1,
        column,
        1,
        format!("unbalanced quote in the shebang line: Redis refuses the file ({server_error})"),
    )
    .with_help(
        "close the quote, and follow it by a space or the line's end: `#!lua name=\"my_lib\"`",
    )
}

fn unknown_engine(engine: &Word) -> Diagnostic {
    let name = engine.text.get(2..).unwrap_or_default();
    if name.is_empty() {
        return Diagnostic::error(
            Code::Shebang,
            1,
            1,
            2,
            "the shebang line names no engine: Redis would refuse the script",
        )
        .with_help(
            "write `#!lua` or `#!lua flags=no-writes` with no space after `#!`, or remove the line",
        );
    }
    Diagnostic::error(
        Code::Shebang,
        1,
        engine.column + 2,
        engine.width.saturating_sub(2).max(1),
        format!("unknown script engine `{name}` in the shebang: Redis only runs `lua`"),
    )
    .with_help("start the line with `#!lua`")
}

fn unknown_flag(flag: &str, column: usize, width: usize) -> Diagnostic {
    let allowed = FLAGS;
    let list = allowed.join(", ");
    let hint = match suggest::closest(flag, allowed.iter().copied()) {
        Some(near) => format!("did you mean `{near}`? allowed flags: {list}"),
        None => format!("allowed flags: {list}"),
    };
    Diagnostic::error(
        Code::Shebang,
        1,
        column,
        width,
        format!("unknown shebang flag `{flag}`: Redis would refuse the script"),
    )
    .with_help(hint)
}

/// The first line of a library given where a script is expected.
pub(crate) fn given_as_script(source: &str, name: &str) -> Diagnostic {
    let width = source.lines().next().map_or(1, |line| line.chars().count());
    Diagnostic::error(
        Code::WrongKindOfFile,
        1,
        1,
        width,
        format!(
            "this file is a function library (`#!lua name={name}`), not a script: EVAL refuses `name=`, the library is loaded with FUNCTION LOAD and its functions are called with FCALL"
        ),
    )
    .with_help(
        "declare it with `#[redis_library(path = …)]` on a module holding one `#[function(keys = N)]` declaration per registered function",
    )
}

/// A script given where a library is expected.
pub(crate) fn given_as_library(source: &str) -> Diagnostic {
    let width = source.lines().next().map_or(1, |line| line.chars().count());
    Diagnostic::error(
        Code::WrongKindOfFile,
        1,
        1,
        width,
        "this file is a script, not a function library: a library starts with `#!lua name=<library>` and registers its functions with `redis.register_function`",
    )
    .with_help(
        "declare a script with `#[redis_script(path = …, keys = N)]`; to make this file a library, add the `#!lua name=…` line and register each function",
    )
}

/// True when `source` starts the way a function library does
/// (`#!lua name=…`), or has a shebang and registers functions (a library
/// whose name is missing), so it is checked with [`analyze_library`](crate::analyze_library)
/// rather than as a script.
pub fn is_library(source: &str) -> bool {
    let first_line = parse(source);
    first_line.library_name.is_some()
        || (first_line.flags.has_shebang && source.contains("register_function"))
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

    fn library(source: &str) -> (Option<String>, Vec<String>) {
        let line = parse_library(source).unwrap_or_default();
        let messages = line
            .diagnostics
            .iter()
            .map(|d| format!("{}+{} {}", d.column, d.width, d.text()))
            .collect();
        (line.name, messages)
    }

    #[test]
    fn splits_and_unquotes_like_the_server() {
        let words = split_arguments(r#"#!lua name="q\x41" 'it\'s' a"b c"d"#);
        assert!(words.is_err(), "a quote closed by a letter is unbalanced");
        let Ok(words) = split_arguments(r#"#!lua  name="q\x41\n" 'it\'s'"#) else {
            panic!("balanced")
        };
        let texts: Vec<_> = words
            .iter()
            .map(|w| (w.text.as_str(), w.column, w.width))
            .collect();
        assert_eq!(
            texts,
            [("#!lua", 1, 5), ("name=qA\n", 8, 14), ("it's", 23, 7)]
        );
        assert!(matches!(
            split_arguments("#!lua name=\"x"),
            Err(Unbalanced(12))
        ));
    }

    #[test]
    fn library_lines_the_server_loads() {
        for line in [
            "#!lua name=lib",
            "#!LUA name=lib",
            "#!lua NAME=lib",
            "#!lua name=\"lib\"",
            "#!lua 'name=lib'",
        ] {
            assert_eq!(
                library(&format!("{line}\nx")),
                (Some("lib".to_string()), vec![]),
                "{line}"
            );
        }
        assert_eq!(
            parse("#!LUA name=lib\nx").library_name.as_deref(),
            Some("lib")
        );
    }

    #[test]
    fn library_lines_the_server_refuses() {
        let (_, messages) = library("#!lua name=foo name=bar\nx");
        assert_eq!(
            messages,
            [
                "16+8 the library is named twice: FUNCTION LOAD fails with \"Invalid metadata value, name argument was given multiple times\""
            ]
        );
        let (_, messages) = library("#!py name=x\nx");
        assert_eq!(
            messages,
            [
                "3+2 unknown engine `py` in the library's first line: FUNCTION LOAD fails with \"Engine 'py' not found\""
            ]
        );
        let (_, messages) = library("#!lua name=\"a b\"\nx");
        assert_eq!(messages.len(), 1);
        assert!(
            messages[0].starts_with("7+10 `a b` is not a valid library name"),
            "{messages:?}"
        );
        let (_, messages) = library("#!lua name=\"x\"y\nx");
        assert_eq!(
            messages,
            [
                "14+1 unbalanced quote in the shebang line: Redis refuses the file (Invalid library metadata)"
            ]
        );
    }

    #[test]
    fn script_engine_is_case_sensitive_and_flags_may_not_end_in_a_comma() {
        let message = |source: &str| {
            parse(source)
                .diagnostics
                .iter()
                .map(|d| format!("{}+{} {}", d.column, d.width, d.text()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            message("#!LUA\nreturn 1"),
            ["3+3 unknown script engine `LUA` in the shebang: Redis only runs `lua`"]
        );
        assert_eq!(
            message("#! lua\nreturn 1"),
            ["1+2 the shebang line names no engine: Redis would refuse the script"]
        );
        assert_eq!(
            message("#!lua flags=no-writes,\nreturn 1"),
            ["23+1 unknown shebang flag ``: Redis would refuse the script"]
        );
        assert!(message("#!lua flags=\"no-writes\"\nreturn 1").is_empty());
        assert!(parse("#!lua \"flags=no-writes\"\nreturn 1").flags.no_writes);
    }
}
