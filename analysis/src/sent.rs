//! The source the runtime sends for a script or a library: the `.lua` file
//! wrapped so that every error reply it *returns* carries
//! [`RETURNED_ERROR_MARK`] before its code.
//!
//! Redis answers a script call with an error in three ways: a refusal of
//! its own before the script runs (`NOSCRIPT`, `BUSY`, `MOVED`, …), an
//! error the script raised (Redis appends ` script: …, on
//! @user_script:N.`), or an error reply the script returns as its value
//! (`redis.error_reply(…)`, `{err = …}`, a caught error handed back). The
//! third reads exactly like the first: a script that returns
//! `{['err'] = 'NOSCRIPT No matching script'}` after a write would be taken
//! for a cache miss and run again. No analysis can see every way a table
//! gets an `err` field at run time, so the wrapper marks them instead: it
//! runs the file's code as a function, and when the value it returns is a
//! table whose raw `err` field is a string (the test Redis itself applies
//! to a returned table), prefixes that string with the mark. A reply
//! without the mark and without Redis's ` script:` suffix is therefore the
//! server's.
//!
//! The file's lines keep their numbers: the wrapper's opening shares the
//! first line of code (after a `#!lua` line, which stays first), and its
//! closing follows the last line. Errors Redis reports at
//! `user_script:N` still point at line `N` of the `.lua` file.
//!
//! ```
//! use redis_script_analysis::{Signature, analyze, sent};
//!
//! let source = "return redis.error_reply('CONFLICT expected 3')\n";
//! let analysis = analyze(source, &Signature::default());
//! let wrapped = sent::script(source, &analysis, false);
//! assert!(wrapped.lines().next().is_some_and(|line| line.ends_with(source.trim_end())));
//! assert!(wrapped.contains("rawset(reply, 'err', '~' .. message)"));
//! ```

use redis_script_codes::RETURNED_ERROR_MARK;

use crate::{Analysis, LibraryAnalysis, exactly_once};

/// The name the wrapper gives the script's body. It cannot clash with the
/// body's own names: the body cannot see it (it is being defined), and the
/// analysis refuses globals a script does not define.
pub(crate) const BODY: &str = "__redis_script_body";

/// The name of the library helper that wraps each registered callback.
const MARK_CALLBACK: &str = "__redis_script_mark";

/// The source sent for the script `source` (whose analysis, without
/// errors, is `analysis`): its body run as a function, marking a returned
/// error reply; with `exactly_once`, also recording and replaying its
/// replies (see [`exactly_once`]).
pub fn script(source: &str, analysis: &Analysis, exactly_once: bool) -> String {
    let (shebang, body) = split_shebang(source);
    let mut wrapped = String::with_capacity(source.len() + 640);
    wrapped.push_str(shebang);
    if !shebang.is_empty() && !shebang.ends_with('\n') {
        wrapped.push('\n');
    }
    // The main chunk may use `...` (it is always empty for a script); the
    // body declares it only then, because Lua 5.1 builds an `arg` table for
    // every call of a vararg function that does not use `...`.
    let varargs = if analysis.chunk_varargs { "..." } else { "" };
    if exactly_once {
        let parameters = if varargs.is_empty() {
            "KEYS, ARGV".to_owned()
        } else {
            format!("KEYS, ARGV, {varargs}")
        };
        wrapped.push_str(&format!("local function {BODY}({parameters}) "));
        wrapped.push_str(body);
        wrapped.push_str("\nend\n");
        wrapped.push_str(&exactly_once::reply_of_body(source));
    } else {
        wrapped.push_str(&format!("local function {BODY}({varargs}) "));
        wrapped.push_str(body);
        wrapped.push_str(&format!("\nend\nlocal reply = {BODY}({varargs})\n"));
    }
    wrapped.push_str(&mark_reply("reply"));
    wrapped.push_str("\nreturn reply\n");
    wrapped
}

/// The source sent for the library `source` (whose analysis, without
/// errors, is `analysis`): each registered callback wrapped so that a
/// returned error reply is marked. The definition of the wrapper opens the
/// first line after `#!lua name=…`, and each callback expression is
/// enclosed in a call of it on its own lines, so no line moves.
pub fn library(source: &str, analysis: &LibraryAnalysis) -> String {
    let mut insertions: Vec<(usize, &str)> = Vec::new();
    for function in &analysis.functions {
        let range = &function.callback;
        if range.start < range.end && range.end <= source.len() {
            insertions.push((range.start, "__redis_script_mark("));
            insertions.push((range.end, ")"));
        }
    }
    let helper = format!(
        "local function {MARK_CALLBACK}(callback) return function(keys, args) local reply = callback(keys, args) {} return reply end end; ",
        mark_reply("reply")
    );
    // The definition must come before the first registration: at the
    // start of the line after the shebang (the first line a library has).
    let after_shebang = source.find('\n').map_or(source.len(), |end| end + 1);
    insertions.push((after_shebang, &helper));
    // Later positions first, so earlier offsets stay valid; at one offset,
    // a closing `)` goes before an opening call.
    insertions.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut wrapped = source.to_owned();
    if after_shebang == source.len() && !source.ends_with('\n') {
        wrapped.push('\n');
    }
    for (offset, text) in insertions {
        let offset = offset.min(wrapped.len());
        if wrapped.is_char_boundary(offset) {
            wrapped.insert_str(offset, text);
        }
    }
    wrapped
}

/// One line of Lua that marks the error reply held in the local `reply`,
/// if it is one: Redis sends a returned table as an error when its raw
/// `err` field is a string.
fn mark_reply(reply: &str) -> String {
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
        let errors: Vec<_> = analysis.errors().map(|error| &error.message).collect();
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
        assert_eq!(lines[5], "local reply = __redis_script_body()");
        assert!(lines[6].starts_with("if type(reply) == 'table' then"));
        assert_eq!(lines[7], "return reply");
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
        assert!(wrapped.contains("local reply = __redis_script_body(...)\n"));
        let plain = wrapped_and_checked(
            "local function f(...) return ... end\nredis.call('SET', KEYS[1], f(1))",
            1,
            0,
            false,
        );
        assert!(plain.starts_with("local function __redis_script_body() "));
    }

    #[test]
    fn exactly_once_records_the_unmarked_reply_and_marks_what_it_returns() {
        let source = "redis.call('INCR', KEYS[1])\nreturn {err = 'GONE'}\n";
        let wrapped = script(source, &analysis_of(source, 1, 0), true);
        let record = wrapped.find("cmsgpack.pack(reply)").expect("records");
        let mark = wrapped.find("rawset(reply, 'err'").expect("marks");
        assert!(record < mark, "{wrapped}");
        assert!(wrapped.starts_with("local function __redis_script_body(KEYS, ARGV) "));
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
        let errors: Vec<_> = analysis.errors().map(|error| &error.message).collect();
        assert!(errors.is_empty(), "{errors:?}");
        analysis
    }

    #[test]
    fn library_callbacks_are_wrapped_in_place() {
        let source = "#!lua name=lib\nlocal function peek(keys, args)\n  return redis.call('GET', keys[1])\nend\nredis.register_function('peek', peek)\nredis.register_function{function_name = 'bump', callback = function(keys, args) return redis.call('INCR', keys[1]) end, flags = {}}\n";
        let wrapped = library(source, &library_of(source, &["peek", "bump"]));
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(source.lines().count(), lines.len(), "{wrapped}");
        assert_eq!(lines[0], "#!lua name=lib");
        assert!(lines[1].starts_with("local function __redis_script_mark(callback)"));
        assert!(lines[1].ends_with("end; local function peek(keys, args)"));
        assert_eq!(
            lines[4],
            "redis.register_function('peek', __redis_script_mark(peek))"
        );
        assert!(lines[5].contains(
            "callback = __redis_script_mark(function(keys, args) return redis.call('INCR', keys[1]) end), flags"
        ));
        assert!(
            crate::syntax::Prepared::new(&wrapped).parse().is_ok(),
            "{wrapped}"
        );
    }
}
