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
//! applies) is replaced by a new error table, whose `err` is
//! [`RETURNED_ERROR_MARK`] then that string; a raised error is caught
//! where it is raised, and returned as [`RAISED_ERROR_MARK`], the message
//! the server would have written, and the line of the file that raised
//! it. A reply without a mark is therefore the server's.
//!
//! The wrapper also keeps the server from running the script's code after
//! the script has ended. The server turns the returned value into a reply
//! outside any protected call, and some of its reads go through the
//! metatables of the tables it reads: Redis 7.0.5 and later, and every
//! Valkey, read the `source`, `line` and `ignore_error_stats_update`
//! fields of each error table in the reply (the reply itself, an array
//! element, a RESP3 map key or value, a set member) with `lua_getfield`;
//! Redis before 6.2.8, and 7.0.0 to 7.0.4, read every field they look up
//! in every table with `lua_gettable`. An `__index` that raises there ends
//! the server process (a Lua panic), and one that calls `redis.call`
//! writes after the script ended. So the wrapper never hands the server a
//! table of the script's that has a metatable: the marked error reply is
//! the wrapper's own table, and when the file names one of the ways to a
//! metatable ([`may_end_with_metatables`]), the reply first goes through a
//! copier, which hands back the same value when no table reachable from it
//! has a metatable, and otherwise a copy of its raw content made of new
//! tables. The copier walks the whole reply in Lua: on Redis 7.0.15, a
//! reply of 1,000 strings takes 222 µs of server time instead of 128, and
//! 270 µs when it has to be copied. Scripts that cannot give a table a
//! metatable are sent without it, and pay nothing.
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
//! errors marked (and its reply copied, as a script's is). Only
//! `redis-script`'s calls use the twins, whose names carry a hash of the
//! sent code, so a call never runs another version of the library. A
//! function called by its own name runs as written, unprotected: a client
//! other than `redis-script` that calls a function returning a table with
//! a metatable can still end the server.
//!
//! ```
//! use redis_script_analysis::{Signature, analyze, sent};
//!
//! let source = "return redis.error_reply('CONFLICT expected 3')\n";
//! let analysis = analyze(source, &Signature::default());
//! let wrapped = sent::script(source, &analysis, false);
//! assert!(wrapped.lines().next().is_some_and(|line| line.ends_with(source.trim_end())));
//! assert!(wrapped.contains("xpcall(__redis_script_body, __redis_script_raised)"));
//! assert!(wrapped.contains("reply = {err = '~' .. message"));
//! // This script cannot set a metatable: its reply is not copied.
//! assert!(!wrapped.contains("__redis_script_plain"));
//!
//! let source = "return setmetatable({err = 'GONE'}, {__index = function() error('boom') end})\n";
//! let analysis = analyze(source, &Signature::default());
//! assert!(sent::may_end_with_metatables(source));
//! let wrapped = sent::script(source, &analysis, false);
//! assert!(wrapped.contains("if ran then reply = __redis_script_plain(reply)"));
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

/// The name of the function that hands the server a reply without
/// metatables (see [`may_end_with_metatables`]).
const PLAIN: &str = "__redis_script_plain";

/// The names through which a script can end with a table that has a
/// metatable, or reach one: `setmetatable` sets one, `getmetatable` reaches
/// an existing one (and what it holds), `_G` and `getfenv` are the globals
/// table (which has a metatable, and holds `setmetatable` for `rawget` or
/// an index built at run time), `loadstring` and `load` compile code from a
/// string built at run time, and `debug`, `require`, `package` and `module`
/// are other ways in that the servers leave undefined today (a script
/// naming them fails the checks anyway). No other value a script can reach
/// has a metatable that can run code: the servers hand scripts `KEYS`,
/// `ARGV`, replies and errors as plain tables, and the only library table
/// that gets one is a JSON array decoded after
/// `cjson.decode_array_with_array_mt(true)` (Redis 8.6, a setting that
/// lasts past the script that set it), whose metatable is a fresh
/// read-only `{__is_cjson_array = true}` without metamethods.
const METATABLE_ROUTES: &[&str] = &[
    "setmetatable",
    "getmetatable",
    "_G",
    "getfenv",
    "loadstring",
    "load",
    "debug",
    "require",
    "package",
    "module",
];

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
    let plain = may_end_with_metatables(source);
    if plain {
        wrapped.push_str(&plain_copier(true));
        wrapped.push('\n');
    }
    if exactly_once {
        wrapped.push_str(&exactly_once::reply_of_body(source, plain));
    } else {
        wrapped.push_str(&format!(
            "local ran, reply = xpcall({BODY}, {RAISED})\n{}\n",
            ending("ran", "reply", plain)
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
    // handler and `xpcall` run when the twin is called. Every twin of the
    // library copies its replies without metatables when any part of the
    // file could give one a metatable.
    let plain = may_end_with_metatables(source);
    let copier = if plain {
        format!("{} ", plain_copier(false))
    } else {
        String::new()
    };
    let helper = format!(
        "{} {copier}local function {TWIN}(name, flags, callback) local run_keys, run_args local function run() return callback(run_keys, run_args) end redis.register_function{{function_name = name .. '{TWIN_SUFFIX}{tag}', callback = function(keys, args) run_keys, run_args = keys, args local ran, reply = xpcall(run, {RAISED}) run_keys, run_args = nil, nil {} return reply end, flags = flags, description = 'redis-script calls ' .. name .. ' by this name: the same callback, every error it ends with marked'}} return callback end; ",
        raised_handler(),
        ending("ran", "reply", plain),
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
/// `ignore_error_stats_update` is kept (the field `redis.call` sets on the
/// error of a failed command): the server then counts that error once, for
/// the command, and not again for the script's reply.
///
/// Redis before 7.0 (no `redis.REDIS_VERSION_NUM`) raises the error of a
/// failed `redis.call` as a plain string, the command's error reply
/// (`WRONGTYPE Operation against…`), and its own errors of a misused
/// `redis.call` as `@user_script: <line>: <text>`. There the handler reads
/// a string that starts with an upper-case code word as that error, code
/// included, and the second form as an `ERR` with the text, as Redis 7.0
/// and later read the error tables they raise for both; so a string raised
/// with `error('CONFLICT x', 0)` keeps its code `CONFLICT` on Redis 6.x,
/// and is `ERR CONFLICT x` on later servers.
pub(crate) fn raised_handler() -> String {
    format!(
        "local function {RAISED}(raised) \
local message = type(raised) == 'table' and rawget(raised, 'err') \
if type(message) ~= 'string' and type(message) ~= 'number' then \
local kind = type(raised) \
if kind == 'string' and type(redis) == 'table' and rawget(redis, 'REDIS_VERSION_NUM') == nil then \
message = string.match(raised, '^@user_script: %d+: (.*)$') \
if message then message = 'ERR ' .. message \
elseif string.find(raised, '^%u[%u%d_]*$') or string.find(raised, '^%u[%u%d_]* ') then message = raised \
else message = 'ERR ' .. raised end \
elseif kind == 'string' or kind == 'number' then message = 'ERR ' .. raised \
elseif kind == 'nil' or kind == 'boolean' then message = 'ERR ' .. tostring(raised) \
else message = 'ERR unknown error' end \
end \
local line \
for level = 3, 40 do local _, where = pcall(error, '', level) line = string.match(where, ':(%d+): $') if line then break end end \
return {{err = '{RAISED_ERROR_MARK}' .. message .. '{LINE_SEPARATOR}' .. (line or '{UNKNOWN_LINE}'), \
ignore_error_stats_update = type(raised) == 'table' and rawget(raised, 'ignore_error_stats_update') == true or nil}} \
end"
    )
}

/// One line of Lua that leaves in `reply` what the script ends with, after
/// `{ran}, {reply} = xpcall(…)`: a returned reply copied without
/// metatables when `plain` (the copier, [`plain_copier`], is defined), and
/// marked when it is an error; a raised error is already marked by the
/// handler, in a table of the handler's own, unless the handler itself
/// failed (Lua then hands back a string such as "error in error
/// handling"), which is marked here.
pub(crate) fn ending(ran: &str, reply: &str, plain: bool) -> String {
    let copy = if plain {
        format!("{reply} = {PLAIN}({reply}) ")
    } else {
        String::new()
    };
    format!(
        "if {ran} then {copy}{} elseif type({reply}) ~= 'table' then {reply} = {} end",
        mark_returned(reply),
        raised_without_line("ERR ", &format!("tostring({reply})"))
    )
}

/// Whether the script (or library) `source` could end with a table that
/// has a metatable: whether it names anywhere, comments and strings
/// included, one of the ways to a metatable: `setmetatable`,
/// `getmetatable`, `_G`, `getfenv`, `loadstring`, `load`, `debug`,
/// `require`, `package` or `module`.
///
/// The servers read some fields of a returned table with `lua_gettable` or
/// `lua_getfield`, which run its metatable's `__index` after the script
/// has ended, outside any protected call: an error raised there ends the
/// server process (a Lua panic), and a `redis.call` there runs after the
/// script. Redis 7.0.5 and later (and every Valkey) do it for the
/// `source`, `line` and `ignore_error_stats_update` fields of each error
/// table in the reply, at any depth; Redis before 6.2.8, and 7.0.0 to
/// 7.0.4, for every field of every table. The wrapper hands the server a
/// copy without metatables instead, but copying costs a walk of the whole
/// reply in Lua, so it is only emitted when this says the script could
/// need it.
///
/// The decision is textual, and sound for the sandbox as the servers set
/// it up: a script can only give a table a metatable through a function
/// it names or through a table holding one, and each way to reach one is
/// a name of the list (the servers hand scripts `KEYS`, `ARGV`, replies
/// and errors as plain tables, and the globals table, which holds
/// `setmetatable` and has a metatable itself, is reachable only as `_G` or
/// through `getfenv`). A name in Lua is a maximal run of ASCII letters,
/// digits and `_` (the servers leave Lua in the C locale), so the source
/// is split at every other character, and a word of the list anywhere (in
/// a comment, a string, or a longer expression such as `x.load`) counts.
/// On Redis 6, whose globals and library tables any script may change, a
/// script of another client could leave `setmetatable` under another
/// name; such a client can end the server by itself anyway.
pub fn may_end_with_metatables(source: &str) -> bool {
    source
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| METATABLE_ROUTES.contains(&word))
}

/// One line of Lua defining [`PLAIN`]: given what the script returned, it
/// gives back the same value when no table reachable from it (through
/// keys and values, read raw) has a metatable, and otherwise a deep copy
/// of it, made of new tables without metatables, with the same raw keys
/// and values. Tables reached twice (shared, or in a cycle) are copied
/// once, so the copy has the same shape and the server converts it as it
/// would have converted the original read raw (a cycle still ends at the
/// server's stack limit). Both walks keep their own stack of tables to
/// visit, so no nesting depth overflows Lua's call stack.
///
/// With `captured` (a script), the functions the copier calls are captured
/// when the wrapper starts, before the script's code runs, so a script
/// cannot replace them (Redis 6 leaves its globals writable). A library
/// cannot capture them: while it loads, the servers give it only the
/// load-time API, and reading `next` raises; its functions run on Redis 7
/// and later, whose globals are read-only.
///
/// Whether a table has a metatable is `getmetatable(t) ~= nil`: a
/// protected metatable hands back its `__metatable` field instead, which
/// is never `nil` when present. A protected metatable cannot be removed
/// (`setmetatable(t, nil)` raises), so the copier never tries: it builds
/// new tables.
pub(crate) fn plain_copier(captured: bool) -> String {
    let capture = if captured {
        "local next, type, getmetatable = next, type, getmetatable "
    } else {
        ""
    };
    format!(
        "local {PLAIN} do {capture}\
local function has_metatables(root) \
local seen, pending, count = {{[root] = true}}, {{root}}, 1 \
while count > 0 do \
local visited = pending[count] pending[count] = nil count = count - 1 \
if getmetatable(visited) ~= nil then return true end \
for key, value in next, visited do \
if type(key) == 'table' and not seen[key] then seen[key] = true count = count + 1 pending[count] = key end \
if type(value) == 'table' and not seen[value] then seen[value] = true count = count + 1 pending[count] = value end \
end \
end \
return false \
end \
local function copied(root) \
local copies, pending, count = {{}}, {{}}, 0 \
local function copy_of(value) \
if type(value) ~= 'table' then return value end \
local copy = copies[value] \
if copy == nil then copy = {{}} copies[value] = copy count = count + 1 pending[count] = value end \
return copy \
end \
local result = copy_of(root) \
while count > 0 do \
local original = pending[count] pending[count] = nil count = count - 1 \
local copy = copies[original] \
for key, value in next, original do copy[copy_of(key)] = copy_of(value) end \
end \
return result \
end \
{PLAIN} = function(reply) if type(reply) == 'table' and has_metatables(reply) then return copied(reply) end return reply end \
end"
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
/// string. The marked error is a new table holding what the server reads
/// of an error reply (its text, and whether to leave it out of the error
/// statistics), so that the script's own table is never written to (a
/// library's table outlives the call, and would be marked again by the
/// next one) and the server never reads a table of the script's with
/// `lua_getfield`, which runs metamethods outside any protected call.
fn mark_returned(reply: &str) -> String {
    format!(
        "if type({reply}) == 'table' then local message = rawget({reply}, 'err') if type(message) == 'string' then {reply} = {{err = '{RETURNED_ERROR_MARK}' .. message, ignore_error_stats_update = rawget({reply}, 'ignore_error_stats_update') == true or nil}} end end"
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
        // A file that names `setmetatable` (here in a comment) gets the
        // copier on a line of its own, after the handler's and before the
        // body runs, and its reply is copied before it is marked.
        for second in ["", "-- setmetatable is only named here"] {
            let source =
                format!("local n = redis.call('INCR', KEYS[1])\n{second}\nreturn n + ARGV[1]\n");
            let wrapped = wrapped_and_checked(&source, 1, 1, false);
            let mut lines: Vec<&str> = wrapped.lines().collect();
            let copied = !second.is_empty();
            if copied {
                assert_eq!(lines.remove(6), plain_copier(true));
            }
            assert_eq!(
                lines[0],
                "local function __redis_script_body() local n = redis.call('INCR', KEYS[1])"
            );
            assert_eq!(lines[1], second);
            assert_eq!(lines[2], "return n + ARGV[1]");
            assert_eq!(lines[3], "");
            assert_eq!(lines[4], "end");
            assert!(lines[5].starts_with("local function __redis_script_raised(raised) "));
            assert_eq!(
                lines[6],
                "local ran, reply = xpcall(__redis_script_body, __redis_script_raised)"
            );
            let ending = if copied {
                "if ran then reply = __redis_script_plain(reply) if type(reply) == 'table' then"
            } else {
                "if ran then if type(reply) == 'table' then"
            };
            assert!(lines[7].starts_with(ending), "{}", lines[7]);
            assert_eq!(lines[8], "return reply");
            assert_eq!(lines.len(), 9);
        }
    }

    #[test]
    fn raised_errors_are_returned_marked_with_their_line() {
        let handler = raised_handler();
        assert!(!handler.contains('\n'), "one line: {handler}");
        assert!(handler.contains("return {err = '^' .. message .. ' @' .. (line or '?')"));
        // Tables are read raw: no metamethod runs inside the handler.
        assert!(handler.contains("rawget(raised, 'err')"));
        assert!(!handler.contains("raised.err"));
        // The flag `redis.call` sets on a failed command's error, under
        // the name the server reads.
        assert!(handler.contains(
            "ignore_error_stats_update = type(raised) == 'table' and rawget(raised, 'ignore_error_stats_update') == true or nil"
        ));
        // A failed handler leaves a string, which the ending marks.
        assert!(ending("ran", "reply", false).contains(
            "elseif type(reply) ~= 'table' then reply = {err = '^ERR ' .. tostring(reply) .. ' @?'} end"
        ));
    }

    #[test]
    fn a_returned_error_is_marked_in_a_new_table() {
        let marked = ending("ran", "reply", false);
        assert!(marked.contains(
            "reply = {err = '~' .. message, ignore_error_stats_update = rawget(reply, 'ignore_error_stats_update') == true or nil}"
        ), "{marked}");
        // The script's table is never written to.
        assert!(!marked.contains("rawset"), "{marked}");
    }

    #[test]
    fn metatables_are_looked_for_by_name() {
        for source in [
            "return setmetatable({err = 'x'}, {})",
            "local t = {} getmetatable(t)",
            "return _G",
            "return rawget(_G, 'set' .. 'metatable')",
            "return getfenv(1)",
            "return loadstring(ARGV[1])()",
            "local f = load(function() end)",
            "return t.load",
            "-- setmetatable is not used here",
            "local s = 'setmetatable'",
            "return debug",
            "return package.loaded",
            "#!lua name=lib\nlocal function f() return setmetatable({}, {}) end",
        ] {
            assert!(may_end_with_metatables(source), "{source}");
        }
        // Longer names, and names that only contain one of the words.
        for source in [
            "return redis.call('GET', KEYS[1])",
            "local payload = cjson.decode(ARGV[1]) return payload",
            "local loaded, _GET, x_G = 1, 2, 3 return loaded + _GET + x_G",
            "local my_setmetatable = 1 return my_setmetatable",
            "local unload = ARGV[1] return unload",
            "return {double = 1.5}",
        ] {
            assert!(!may_end_with_metatables(source), "{source}");
        }
    }

    #[test]
    fn a_script_that_cannot_set_metatables_is_sent_without_the_copier() {
        let wrapped = wrapped_and_checked("return {redis.call('GET', KEYS[1])}", 1, 0, false);
        assert!(!wrapped.contains(PLAIN), "{wrapped}");
        let once = wrapped_and_checked("return {redis.call('INCR', KEYS[1])}", 1, 0, true);
        assert!(!once.contains(PLAIN), "{once}");
    }

    #[test]
    fn the_copier_reads_raw_and_builds_new_tables() {
        let copier = plain_copier(true);
        assert!(!copier.contains('\n'), "one line: {copier}");
        assert!(copier.starts_with(
            "local __redis_script_plain do local next, type, getmetatable = next, type, getmetatable "
        ));
        // A library's copier reads the globals when a twin runs: they are
        // not there while the library loads.
        assert_eq!(
            plain_copier(false),
            copier.replacen(
                "local next, type, getmetatable = next, type, getmetatable ",
                "",
                1
            )
        );
        // Tables are walked with `next` (raw) and never indexed through a
        // metamethod: the only tables indexed are the copier's own.
        assert!(copier.contains("for key, value in next, visited do"));
        assert!(copier.contains("for key, value in next, original do"));
        assert!(!copier.contains("pairs("), "{copier}");
        // A protected metatable is detected (its `__metatable` field is
        // handed back, never nil), and never removed.
        assert!(copier.contains("if getmetatable(visited) ~= nil then return true end"));
        assert!(!copier.contains("setmetatable"), "{copier}");
        // Shared tables and cycles are copied once.
        assert!(copier.contains(
            "local copy = copies[value] if copy == nil then copy = {} copies[value] = copy"
        ));
        // A reply without metatables is handed back as it is.
        assert!(copier.contains(
            "__redis_script_plain = function(reply) if type(reply) == 'table' and has_metatables(reply) then return copied(reply) end return reply end end"
        ));
        // Balanced: every block the copier opens, it closes.
        let words: Vec<&str> = copier
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        let opened = words
            .iter()
            .filter(|word| matches!(**word, "do" | "then" | "function"))
            .count();
        let loops = words
            .iter()
            .filter(|word| matches!(**word, "while" | "for"))
            .count();
        let closed = words.iter().filter(|word| **word == "end").count();
        // `while … do` and `for … do` open one block with their `do`.
        assert_eq!(opened, closed, "{copier}");
        assert!(loops > 0);
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
        // The second names `setmetatable`: its reply is copied before it
        // is marked, with the copier defined before the body runs.
        for (source, copied) in [
            (
                "redis.call('INCR', KEYS[1])\nreturn {err = 'GONE'}\n",
                false,
            ),
            (
                "redis.call('INCR', KEYS[1])\nreturn setmetatable({err = 'GONE'}, {__index = function() error('boom') end})\n",
                true,
            ),
        ] {
            let wrapped = script(source, &analysis_of(source, 1, 0), true);
            let run = wrapped
                .find("xpcall(function() return __redis_script_body(keys, arguments) end, __redis_script_raised)")
                .expect("runs the body under xpcall");
            let mark = wrapped
                .find("reply = {err = '~' .. message")
                .expect("marks");
            let record = wrapped.find("cmsgpack.pack(reply)").expect("records");
            assert!(run < mark && mark < record, "{wrapped}");
            let copy = wrapped.find("reply = __redis_script_plain(reply)");
            let defined = wrapped.find("local __redis_script_plain do");
            assert_eq!(copy.is_some(), copied, "{wrapped}");
            assert!(
                copy.is_none_or(|copy| run < copy && copy < mark),
                "{wrapped}"
            );
            assert!(defined.is_none_or(|defined| defined < run), "{wrapped}");
            assert!(wrapped.starts_with("local function __redis_script_body(KEYS, ARGV) "));
            assert!(wrapped.contains("redis.pcall('SET', record"), "{wrapped}");
        }
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
    fn a_library_that_can_set_metatables_copies_every_twin_reply() {
        let source = "#!lua name=lib\nlocal boom = {__index = function() error('boom') end}\nredis.register_function('bump', function(keys, args) redis.call('INCR', keys[1]) return setmetatable({err = 'x'}, boom) end)\n";
        let sent = library(source, &library_of(source, &["bump"]));
        let lines: Vec<&str> = sent.source.lines().collect();
        assert_eq!(source.lines().count(), lines.len(), "{}", sent.source);
        // The copier is defined on the helper's line, before the file's
        // first line of code, and every twin copies its reply.
        assert!(lines[1].contains(&plain_copier(false)), "{}", lines[1]);
        assert!(lines[1].ends_with(
            "return callback end; local boom = {__index = function() error('boom') end}"
        ));
        assert!(
            lines[1].contains("if ran then reply = __redis_script_plain(reply) if type(reply)"),
            "{}",
            lines[1]
        );
        assert!(
            crate::source::syntax::Prepared::new(&sent.source)
                .parse()
                .is_ok(),
            "{}",
            sent.source
        );
        // The sent library reads no global while it loads that the
        // load-time API lacks (which FUNCTION LOAD refuses); a copier that
        // captured its functions would.
        let load_time = |source: &str| -> Vec<String> {
            analyze_library(source, &LibrarySignature::default())
                .errors()
                .map(|error| error.text())
                .filter(|text| text.contains("while the library loads"))
                .collect()
        };
        assert_eq!(load_time(&sent.source), Vec::<String>::new());
        assert!(!load_time(&format!("#!lua name=lib\n{}\n", plain_copier(true))).is_empty());
        // A library that cannot has no copier.
        let plain = "#!lua name=lib\nredis.register_function('bump', function(keys, args) return redis.call('INCR', keys[1]) end)\n";
        let sent = library(plain, &library_of(plain, &["bump"]));
        assert!(!sent.source.contains(PLAIN), "{}", sent.source);
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
