//! The source the runtime sends for a script or a library: the `.lua` file
//! wrapped so that every error it ends with, returned or raised, carries a
//! mark before its text ([`redis_script_codes::marks`]).
//!
//! Redis answers a script call with an error in three ways: a refusal of
//! its own before the script runs (`NOSCRIPT`, `BUSY`, `MOVED`, …), an
//! error the script raised, or an error reply the script returns as its
//! value (`redis.error_reply(…)`, `{err = …}`, a caught error handed back).
//! The second and third can read exactly like the first: a script that
//! returns `{['err'] = 'NOSCRIPT No matching script'}`, or raises it
//! through `table.sort(t, error)`, after a write would be taken for a cache
//! miss and run again. No analysis can see every way a table gets an `err`
//! field at run time, and the suffix servers append to raised errors
//! differs between releases and call frames, so the wrapper marks them
//! instead: it runs the file's code as a function under `xpcall`. A
//! returned table whose raw `err` field is a string (the test Redis itself
//! applies) gets [`RETURNED_ERROR_MARK`] before that string; a raised error
//! is caught where it is raised, and returned as [`RAISED_ERROR_MARK`],
//! the message the server would have written, and the line of the file
//! that raised it. A reply without a mark is therefore the server's.
//!
//! The file's lines keep their numbers: the wrapper's opening shares the
//! first line of code (after a `#!lua` line, which stays first), and its
//! closing follows the last line. The handler finds the raising line from
//! Lua itself (the line `error('', level)` reports for each frame above
//! it), since scripts have no `debug` library: the first frame of Lua code
//! above the raise is the line reported, also when a C function such as
//! `table.sort` raised it.
//!
//! A library is wrapped differently, so that other clients see it as its
//! file says: each registered function stays as written, and the library
//! also registers, for each, a twin named
//! [`SentLibrary::function_name`] that runs the same callback with its
//! errors marked. Only `redis-script`'s calls use the twins, whose names
//! carry a hash of the sent code, so a call never runs another version of
//! the library.
//!
//! ```
//! use redis_script_analysis::{Signature, analyze, sent};
//!
//! let source = "return redis.error_reply('CONFLICT expected 3')\n";
//! let analysis = analyze(source, &Signature::default());
//! let wrapped = sent::script(source, &analysis, false);
//! assert!(wrapped.lines().next().is_some_and(|line| line.ends_with(source.trim_end())));
//! assert!(wrapped.contains("xpcall(__redis_script_body, __redis_script_raised)"));
//! assert!(wrapped.contains("rawset(reply, 'err', '~' .. message)"));
//! ```

use redis_script_codes::marks::{
    LINE_SEPARATOR, RAISED_ERROR_MARK, RETURNED_ERROR_MARK, UNKNOWN_LINE,
};

use crate::domain::analysis::Analysis;
use crate::domain::library::LibraryAnalysis;
use crate::emit::exactly_once;
use crate::source::shebang::ScriptFlags;

/// The name the wrapper gives the script's body. It cannot clash with the
/// body's own names: the body cannot see it (it is being defined), and the
/// analysis refuses globals a script does not define.
pub(crate) const BODY: &str = "__redis_script_body";

/// The name of the error handler the body runs under.
pub(crate) const RAISED: &str = "__redis_script_raised";

/// The name of the library helper that registers a function's twin.
const TWIN: &str = "__redis_script_twin";

/// What a twin's name adds to its function's name, before the tag.
const TWIN_SUFFIX: &str = "__redis_script_";

/// How many hex digits of the sent library's SHA1 the tag keeps.
const TAG_LENGTH: usize = 12;

/// The source sent for the script `source` (whose analysis, without
/// errors, is `analysis`): its body run as a function under `xpcall`,
/// marking the error it ends with; with `exactly_once`, also recording and
/// replaying its replies (see [`exactly_once`]).
pub fn script(source: &str, analysis: &Analysis, exactly_once: bool) -> String {
    let (shebang, body) = split_shebang(source);
    let mut wrapped = String::with_capacity(source.len() + 1200);
    wrapped.push_str(shebang);
    if !shebang.is_empty() && !shebang.ends_with('\n') {
        wrapped.push('\n');
    }
    // The main chunk may use `...` (it is always empty for a script); the
    // body declares it only then, because Lua 5.1 builds an `arg` table for
    // every call of a vararg function that does not use `...`.
    let varargs = if analysis.chunk_varargs { "..." } else { "" };
    let parameters = match (exactly_once, varargs) {
        (false, varargs) => varargs.to_owned(),
        (true, "") => "KEYS, ARGV".to_owned(),
        (true, varargs) => format!("KEYS, ARGV, {varargs}"),
    };
    wrapped.push_str(&format!("local function {BODY}({parameters}) "));
    wrapped.push_str(body);
    wrapped.push_str("\nend\n");
    wrapped.push_str(&raised_handler());
    wrapped.push('\n');
    if exactly_once {
        wrapped.push_str(&exactly_once::reply_of_body(source));
    } else {
        wrapped.push_str(&format!(
            "local ran, reply = xpcall({BODY}, {RAISED})\n{}\n",
            ending("ran", "reply")
        ));
    }
    wrapped.push_str("return reply\n");
    wrapped
}

/// A library as sent with `FUNCTION LOAD`, and the names `redis-script`
/// calls its functions by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentLibrary {
    /// The code sent.
    pub source: String,
    /// The first hex digits of the SHA1 of the code sent (with a
    /// placeholder where the tag itself goes): what makes the twins' names
    /// differ between versions of the library.
    tag: String,
}

impl SentLibrary {
    /// The name of the twin of the function `registered` (as the file
    /// registers it): what `redis-script` calls with `FCALL`.
    ///
    /// ```
    /// use redis_script_analysis::{DeclaredFunction, LibrarySignature, Signature, analyze_library, sent};
    ///
    /// let source = "#!lua name=lib\nredis.register_function('bump', function(keys, args) return redis.call('INCR', keys[1]) end)\n";
    /// let signature = LibrarySignature {
    ///     functions: vec![DeclaredFunction {
    ///         name: "bump".to_owned(),
    ///         signature: Signature { keys: 1, ..Signature::default() },
    ///     }],
    ///     ..LibrarySignature::default()
    /// };
    /// let sent = sent::library(source, &analyze_library(source, &signature));
    /// let name = sent.function_name("bump");
    /// assert!(name.starts_with("bump__redis_script_"));
    /// assert!(sent.source.contains(&name[4..]));
    /// ```
    pub fn function_name(&self, registered: &str) -> String {
        format!("{registered}{TWIN_SUFFIX}{}", self.tag)
    }
}

/// The source sent for the library `source` (whose analysis, without
/// errors, is `analysis`): the file, unchanged for other clients, with a
/// twin registered beside each function that runs its callback with every
/// error marked. The helper that registers twins opens the first line
/// after `#!lua name=…`, and each callback expression is enclosed in a
/// call of it on its own lines, so no line moves.
pub fn library(source: &str, analysis: &LibraryAnalysis) -> SentLibrary {
    // The tag is the SHA1 of the code with a placeholder where the tag
    // goes: any change to the file or to the wrapper changes it.
    let placeholder = "0".repeat(TAG_LENGTH);
    let template = wrap_library(source, analysis, &placeholder);
    let digest = sha1_smol::Sha1::from(template.as_bytes())
        .digest()
        .to_string();
    let tag = digest[..TAG_LENGTH].to_owned();
    SentLibrary {
        source: wrap_library(source, analysis, &tag),
        tag,
    }
}

fn wrap_library(source: &str, analysis: &LibraryAnalysis, tag: &str) -> String {
    let mut insertions: Vec<(usize, String)> = Vec::new();
    for function in &analysis.functions {
        let range = &function.callback;
        if range.start < range.end && range.end <= source.len() {
            insertions.push((
                range.start,
                format!(
                    "{TWIN}('{}', {}, ",
                    function.name,
                    flags_table(&function.flags)
                ),
            ));
            insertions.push((range.end, ")".to_owned()));
        }
    }
    // Only the load-time API is reachable while the library loads: the
    // helper calls `redis.register_function` and nothing else then; the
    // handler and `xpcall` run when the twin is called.
    let helper = format!(
        "{} local function {TWIN}(name, flags, callback) local run_keys, run_args local function run() return callback(run_keys, run_args) end redis.register_function{{function_name = name .. '{TWIN_SUFFIX}{tag}', callback = function(keys, args) run_keys, run_args = keys, args local ran, reply = xpcall(run, {RAISED}) run_keys, run_args = nil, nil {} return reply end, flags = flags, description = 'redis-script calls ' .. name .. ' by this name: the same callback, every error it ends with marked'}} return callback end; ",
        raised_handler(),
        ending("ran", "reply"),
    );
    // The definition must come before the first registration: at the
    // start of the line after the shebang (the first line a library has).
    let after_shebang = source.find('\n').map_or(source.len(), |end| end + 1);
    insertions.push((after_shebang, helper));
    // Later positions first, so earlier offsets stay valid (no two
    // insertions share an offset: callbacks do not touch each other or the
    // line start the helper goes to).
    insertions.sort_by_key(|insertion| std::cmp::Reverse(insertion.0));
    let mut wrapped = source.to_owned();
    if after_shebang == source.len() && !source.ends_with('\n') {
        wrapped.push('\n');
    }
    for (offset, text) in insertions {
        let offset = offset.min(wrapped.len());
        if wrapped.is_char_boundary(offset) {
            wrapped.insert_str(offset, &text);
        }
    }
    wrapped
}

/// The flags of a registration as a Lua table: `{'no-writes'}`.
fn flags_table(flags: &ScriptFlags) -> String {
    let names: Vec<String> = flags
        .names()
        .into_iter()
        .map(|name| format!("'{name}'"))
        .collect();
    format!("{{{}}}", names.join(", "))
}

/// One line of Lua defining the error handler the body runs under. It
/// runs where the error was raised, with the stack intact, and returns the
/// reply the script ends with: the error's message as the server writes
/// it (a table's `err` field, `ERR ` and the text of anything else),
/// marked, with the line of the first frame of Lua code above the raise.
/// `error('', level)` reports that line for the frame `level` (an empty
/// text for a C function); level 3 is the function that raised, seen from
/// the `pcall` inside the handler. It reads tables raw and never calls a
/// metamethod, so that it cannot fail itself. A table's
/// `ignore_err_stats_update` is kept: the server counts a failed command's
/// error once, in the command's statistics.
pub(crate) fn raised_handler() -> String {
    format!(
        "local function {RAISED}(raised) \
local message = type(raised) == 'table' and rawget(raised, 'err') \
if type(message) ~= 'string' and type(message) ~= 'number' then \
local kind = type(raised) \
if kind == 'string' or kind == 'number' then message = 'ERR ' .. raised \
elseif kind == 'nil' or kind == 'boolean' then message = 'ERR ' .. tostring(raised) \
else message = 'ERR unknown error' end \
end \
local line \
for level = 3, 40 do local _, where = pcall(error, '', level) line = string.match(where, ':(%d+): $') if line then break end end \
return {{err = '{RAISED_ERROR_MARK}' .. message .. '{LINE_SEPARATOR}' .. (line or '{UNKNOWN_LINE}'), \
ignore_err_stats_update = type(raised) == 'table' and rawget(raised, 'ignore_err_stats_update') or nil}} \
end"
    )
}

/// One line of Lua that leaves in `reply` what the script ends with, after
/// `{ran}, {reply} = xpcall(…)`: a returned error reply marked; a raised
/// error is already marked by the handler, unless the handler itself
/// failed (Lua then hands back a string such as "error in error
/// handling"), which is marked here.
pub(crate) fn ending(ran: &str, reply: &str) -> String {
    format!(
        "if {ran} then {} elseif type({reply}) ~= 'table' then {reply} = {} end",
        mark_returned(reply),
        raised_without_line("ERR ", &format!("tostring({reply})"))
    )
}

/// A Lua table constructor of a raised error no line of the script raised
/// (the wrapper's own): `text` (literal) then the Lua `expression`, marked.
pub(crate) fn raised_without_line(text: &str, expression: &str) -> String {
    format!(
        "{{err = '{RAISED_ERROR_MARK}{text}' .. {expression} .. '{LINE_SEPARATOR}{UNKNOWN_LINE}'}}"
    )
}

/// Lua that marks the error reply held in `reply`, if it is one: Redis
/// sends a returned table as an error when its raw `err` field is a
/// string.
fn mark_returned(reply: &str) -> String {
    format!(
        "if type({reply}) == 'table' then local message = rawget({reply}, 'err') if type(message) == 'string' then rawset({reply}, 'err', '{RETURNED_ERROR_MARK}' .. message) end end"
    )
}

/// The `#!lua …` first line (with its line break) and the rest.
pub(crate) fn split_shebang(source: &str) -> (&str, &str) {
    if !source.starts_with("#!") {
        return ("", source);
    }
    match source.find('\n') {
        Some(end) => source.split_at(end + 1),
        None => (source, ""),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{DeclaredFunction, LibrarySignature, Signature, analyze, analyze_library};

    /// The analysis of a script of `keys` keys and `args` arguments, which
    /// must have no errors.
    pub(crate) fn analysis_of(source: &str, keys: usize, args: usize) -> Analysis {
        let analysis = analyze(
            source,
            &Signature {
                keys,
                args,
                ..Signature::default()
            },
        );
        let errors: Vec<_> = analysis.errors().map(|error| error.text()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        analysis
    }

    /// The source sent for a script of `keys` keys and `args` arguments
    /// (`exactly_once`: wrapped in the code that records its reply), which
    /// must itself pass the checks, with one more key and argument (the
    /// record and its TTL) when exactly once: valid Lua that calls only
    /// what the sandbox offers.
    pub(crate) fn wrapped_and_checked(
        source: &str,
        keys: usize,
        args: usize,
        exactly_once: bool,
    ) -> String {
        let wrapped = script(source, &analysis_of(source, keys, args), exactly_once);
        let record = usize::from(exactly_once);
        let check = analyze(
            &wrapped,
            &Signature {
                keys: keys + record,
                args: args + record,
                allow_unused: true,
                dynamic_keys: exactly_once,
                ..Signature::default()
            },
        );
        let errors: Vec<_> = check
            .errors()
            .map(|error| error.render("wrapped.lua", &wrapped))
            .collect();
        assert!(errors.is_empty(), "{wrapped}\n{errors:#?}");
        assert!(!exactly_once || !check.read_only, "the record is written");
        wrapped
    }

    #[test]
    fn the_body_keeps_its_line_numbers() {
        let source = "local n = redis.call('INCR', KEYS[1])\n\nreturn n + ARGV[1]\n";
        let wrapped = wrapped_and_checked(source, 1, 1, false);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(
            lines[0],
            "local function __redis_script_body() local n = redis.call('INCR', KEYS[1])"
        );
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "return n + ARGV[1]");
        assert_eq!(lines[3], "");
        assert_eq!(lines[4], "end");
        assert!(lines[5].starts_with("local function __redis_script_raised(raised) "));
        assert_eq!(
            lines[6],
            "local ran, reply = xpcall(__redis_script_body, __redis_script_raised)"
        );
        assert!(lines[7].starts_with("if ran then if type(reply) == 'table' then"));
        assert_eq!(lines[8], "return reply");
        assert_eq!(lines.len(), 9);
    }

    #[test]
    fn raised_errors_are_returned_marked_with_their_line() {
        let handler = raised_handler();
        assert!(!handler.contains('\n'), "one line: {handler}");
        assert!(handler.contains("return {err = '^' .. message .. ' @' .. (line or '?')"));
        // Tables are read raw: no metamethod runs inside the handler.
        assert!(handler.contains("rawget(raised, 'err')"));
        assert!(!handler.contains("raised.err"));
        // A failed handler leaves a string, which the ending marks.
        assert!(ending("ran", "reply").contains(
            "elseif type(reply) ~= 'table' then reply = {err = '^ERR ' .. tostring(reply) .. ' @?'} end"
        ));
    }

    #[test]
    fn a_shebang_stays_the_first_line() {
        let source = "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])";
        let wrapped = wrapped_and_checked(source, 1, 0, false);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines[0], "#!lua flags=no-writes");
        assert!(lines[1].ends_with(") return redis.call('GET', KEYS[1])"));
        assert_eq!(lines[2], "end");
        // The wrapper writes nothing: a read-only script stays read-only.
        assert!(
            analyze(
                &wrapped,
                &Signature {
                    keys: 1,
                    ..Signature::default()
                }
            )
            .read_only
        );
    }

    #[test]
    fn a_last_line_comment_does_not_swallow_the_closing() {
        let wrapped =
            wrapped_and_checked("redis.call('SET', KEYS[1], ARGV[1]) -- done", 1, 1, false);
        assert!(wrapped.contains("-- done\nend\n"));
    }

    #[test]
    fn varargs_of_the_chunk_stay_legal() {
        let wrapped =
            wrapped_and_checked("redis.call('SET', KEYS[1], select('#', ...))", 1, 0, false);
        assert!(wrapped.starts_with("local function __redis_script_body(...) "));
        assert!(
            wrapped.contains(
                "local ran, reply = xpcall(__redis_script_body, __redis_script_raised)\n"
            )
        );
        let plain = wrapped_and_checked(
            "local function f(...) return ... end\nredis.call('SET', KEYS[1], f(1))",
            1,
            0,
            false,
        );
        assert!(plain.starts_with("local function __redis_script_body() "));
    }

    #[test]
    fn exactly_once_records_what_it_returns_marked() {
        let source = "redis.call('INCR', KEYS[1])\nreturn {err = 'GONE'}\n";
        let wrapped = script(source, &analysis_of(source, 1, 0), true);
        let run = wrapped
            .find("xpcall(function() return __redis_script_body(keys, arguments) end, __redis_script_raised)")
            .expect("runs the body under xpcall");
        let mark = wrapped.find("rawset(reply, 'err'").expect("marks");
        let record = wrapped.find("cmsgpack.pack(reply)").expect("records");
        assert!(run < mark && mark < record, "{wrapped}");
        assert!(wrapped.starts_with("local function __redis_script_body(KEYS, ARGV) "));
        assert!(wrapped.contains("redis.pcall('SET', record"), "{wrapped}");
    }

    fn library_of(source: &str, functions: &[&str]) -> LibraryAnalysis {
        let analysis = analyze_library(
            source,
            &LibrarySignature {
                functions: functions
                    .iter()
                    .map(|name| DeclaredFunction {
                        name: (*name).to_owned(),
                        signature: Signature {
                            keys: 1,
                            allow_unused: true,
                            ..Signature::default()
                        },
                    })
                    .collect(),
                ..LibrarySignature::default()
            },
        );
        let errors: Vec<_> = analysis.errors().map(|error| error.text()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        analysis
    }

    #[test]
    fn library_functions_stay_as_written_and_get_marked_twins() {
        let source = "#!lua name=lib\nlocal function peek(keys, args)\n  return redis.call('GET', keys[1])\nend\nredis.register_function('peek', peek)\nredis.register_function{function_name = 'look', callback = function(keys, args) return redis.call('EXISTS', keys[1]) end, flags = {'no-writes', 'allow-oom'}}\n";
        let sent = library(source, &library_of(source, &["peek", "look"]));
        let wrapped = &sent.source;
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(source.lines().count(), lines.len(), "{wrapped}");
        assert_eq!(lines[0], "#!lua name=lib");
        assert!(lines[1].starts_with("local function __redis_script_raised(raised) "));
        assert!(lines[1].ends_with("return callback end; local function peek(keys, args)"));
        assert_eq!(
            lines[4],
            "redis.register_function('peek', __redis_script_twin('peek', {}, peek))"
        );
        assert!(lines[5].contains(
            "callback = __redis_script_twin('look', {'no-writes', 'allow-oom'}, function(keys, args) return redis.call('EXISTS', keys[1]) end), flags = {'no-writes', 'allow-oom'}"
        ));
        assert!(
            crate::source::syntax::Prepared::new(wrapped)
                .parse()
                .is_ok(),
            "{wrapped}"
        );
        // The twins' names carry the tag written in the code.
        let peek = sent.function_name("peek");
        let tag = peek
            .strip_prefix("peek__redis_script_")
            .expect("a twin's name");
        assert_eq!(tag.len(), TAG_LENGTH);
        assert!(tag.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(wrapped.contains(&format!("name .. '__redis_script_{tag}'")));
        assert_eq!(
            sent.function_name("look"),
            format!("look__redis_script_{tag}")
        );
    }

    #[test]
    fn another_version_of_a_library_has_other_twins() {
        let first = "#!lua name=lib\nredis.register_function('bump', function(keys, args) return redis.call('INCR', keys[1]) end)\n";
        let second = first.replace("INCR", "INCRBY");
        let second = second.replace("keys[1])", "keys[1], 2)");
        let one = library(first, &library_of(first, &["bump"]));
        let other = library(&second, &library_of(&second, &["bump"]));
        assert_ne!(one.function_name("bump"), other.function_name("bump"));
        assert_eq!(
            one,
            library(first, &library_of(first, &["bump"])),
            "the same file gives the same code"
        );
    }
}
