//! What the servers refuse inside scripts beyond the command table: the
//! `redis.*` helpers' argument rules, options refused in scripts, writes to
//! the protected tables, and a protected read of an undefined global.

use crate::tests::target_checks::signature;
use crate::{Severity, analyze};

/// `(severity, message)` of every diagnostic that is not a finding of the
/// value classes, which these snippets do not test.
fn diagnostics(source: &str, target: &str) -> Vec<(Severity, String)> {
    // Each snippet reads the one key and argument the signature declares.
    let source = format!("local _, _ = KEYS[1], ARGV[1]\n{source}");
    analyze(&source, &signature(1, 1, target))
        .diagnostics
        .iter()
        .filter(|d| {
            d.finding()
                .is_none_or(|name| name == "protected_global_read")
        })
        .map(|d| (d.severity, d.text()))
        .collect()
}

#[track_caller]
fn assert_error(source: &str, target: &str, expected: &str) {
    let found = diagnostics(source, target);
    assert_eq!(
        found,
        vec![(Severity::Error, expected.to_owned())],
        "{source}"
    );
}

#[track_caller]
fn assert_silent(source: &str) {
    assert_eq!(diagnostics(source, "any"), Vec::new(), "{source}");
}

#[test]
fn helper_arguments_that_can_never_pass() {
    let cases = [
        (
            "return redis.sha1hex()",
            "`redis.sha1hex` takes one argument, the text to hash: given no argument, it fails with \"wrong number of arguments\"",
        ),
        (
            "return redis.sha1hex('a', 'b')",
            "`redis.sha1hex` takes one argument, the text to hash: given 2 arguments, it fails with \"wrong number of arguments\"",
        ),
        (
            "return redis.error_reply()",
            "`redis.error_reply` takes one string: given no argument, it returns the error reply \"wrong number or type of arguments\" instead",
        ),
        (
            "return redis.status_reply(1)",
            "`redis.status_reply` takes a string, not a number: it returns the error reply \"wrong number or type of arguments\" instead",
        ),
        (
            "redis.log(redis.LOG_WARNING)\nreturn 1",
            "`redis.log` takes a level and a message: given one argument, it fails with \"redis.log() requires two arguments or more\"",
        ),
        (
            "redis.log(99, 'x')\nreturn 1",
            "99 is not a log level: `redis.log` fails with \"Invalid log level\"",
        ),
        (
            "redis.log('warning', 'x')\nreturn 1",
            "the first argument of `redis.log` is the level, a number, not 'warning': it fails with \"First argument must be a number (log level)\"",
        ),
        (
            "redis.set_repl(12345)\nreturn 1",
            "12345 is not a combination of replication flags: `redis.set_repl` fails with \"Invalid replication flags\"",
        ),
        (
            "redis.set_repl()\nreturn 1",
            "`redis.set_repl` takes one argument, the replication flags; given no argument, it fails",
        ),
        (
            "redis.setresp(4)\nreturn 1",
            "`redis.setresp(4)` fails with \"RESP version must be 2 or 3\"",
        ),
        (
            "return redis.acl_check_cmd('SETT', 'k', 'v')",
            "`SETT` is not a command: `redis.acl_check_cmd` fails with \"Invalid command passed to redis.acl_check_cmd()\"",
        ),
        (
            "return server.sha1hex()",
            "`server.sha1hex` takes one argument, the text to hash: given no argument, it fails with \"wrong number of arguments\"",
        ),
    ];
    for (source, expected) in cases {
        assert_error(source, "any", expected);
    }
}

#[test]
fn helper_calls_the_servers_accept() {
    for source in [
        "return redis.sha1hex(ARGV[1] or '')",
        "return redis.sha1hex(unpack(ARGV))",
        "return redis.error_reply('CONFLICT at ' .. KEYS[1])",
        "return redis.status_reply(ARGV[1] or 'OK')",
        "redis.log(redis.LOG_NOTICE, 'a', 1, 'b')\nreturn 1",
        "redis.log(3, 'x')\nredis.log('2', 'y')\nreturn 1",
        "redis.set_repl(redis.REPL_AOF + redis.REPL_REPLICA)\nredis.set_repl(3)\nredis.set_repl(0)\nreturn 1",
        "redis.setresp(3)\nredis.setresp(2)\nreturn 1",
        "return redis.acl_check_cmd('set', KEYS[1], 'v')",
        "return redis.acl_check_cmd(unpack(ARGV))",
    ] {
        assert_silent(source);
    }
}

#[test]
fn xread_block_is_refused_where_the_server_refuses_it() {
    let source = "return redis.call('XREAD', 'COUNT', 1, 'BLOCK', 0, 'STREAMS', KEYS[1], '$')";
    assert_error(
        source,
        "redis-7.0",
        "`XREAD` with `BLOCK` is refused inside scripts on redis-7.0: the call fails with \"XREAD command is not allowed with BLOCK option from scripts\"",
    );
    assert_error(
        "return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'block', 0, 'STREAMS', KEYS[1], '>')",
        "valkey-7.2",
        "`XREADGROUP` with `BLOCK` is refused inside scripts on valkey-7.2: the call fails with \"XREADGROUP command is not allowed with BLOCK option from scripts\"",
    );
    // Accepted (and not waiting) since Redis 7.4 and Valkey 8.0.
    assert!(diagnostics(source, "redis-7.4,valkey-8.1").is_empty());
    // The default target: a warning that names where it fails.
    let lenient = diagnostics(source, "any");
    assert!(
        matches!(lenient.as_slice(), [(Severity::Warning, message)] if message.contains("on redis-7.0, redis-7.2, valkey-7.2")),
        "{lenient:?}"
    );
    // After STREAMS come keys and IDs, whatever their text.
    let after_streams = "return redis.call('XREAD', 'STREAMS', KEYS[1], 'block')";
    assert!(diagnostics(after_streams, "redis-7.0").is_empty());
}

#[test]
fn writes_to_the_protected_tables() {
    assert_error(
        "setmetatable(_G, {})\nreturn 1",
        "any",
        "`setmetatable(_G, …)` changes the read-only `_G` table: Redis fails with \"Attempt to modify a readonly table\"",
    );
    assert_error(
        "rawset(redis, 'x', 1)\nreturn 1",
        "any",
        "`rawset(redis, …)` changes the read-only `redis` table: Redis fails with \"Attempt to modify a readonly table\"",
    );
    assert_silent(
        "local t = setmetatable({}, {__index = function() return 0 end})\nrawset(t, 'a', 1)\nreturn t.a",
    );
}

#[test]
fn a_protected_read_of_an_undefined_global_is_a_warning() {
    let found = diagnostics("return pcall(function() return foo end)", "any");
    assert!(
        matches!(found.as_slice(), [(Severity::Warning, message)] if message.contains("`foo` is not defined") && message.contains("the `pcall` around this function catches")),
        "{found:?}"
    );
    // The arguments themselves are read before `pcall` protects anything.
    assert_error(
        "local ok = pcall(tostring, foo)\nreturn 1",
        "any",
        "`foo` is not defined: Redis fails with \"Script attempted to access nonexistent global variable 'foo'\"",
    );
    // Outside the protected function, the read is an error again.
    let found = diagnostics(
        "local ok = pcall(function() return 1 end)\nreturn foo",
        "any",
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, Severity::Error);
}

#[test]
fn a_read_of_an_undefined_global_in_a_metamethod_is_a_warning() {
    let found = diagnostics(
        "local a = setmetatable({}, {__index = function() return foo end})\nreturn a",
        "any",
    );
    assert!(
        matches!(found.as_slice(), [(Severity::Warning, message)] if message.contains("`foo` is not defined") && message.contains("when this metamethod runs:")),
        "{found:?}"
    );
}

#[test]
fn the_metatable_of_globals_is_read_only_too() {
    let refused = "changes the read-only `getmetatable(_G)` table: Redis fails with \"Attempt to modify a readonly table\"";
    assert_error(
        "local g = getmetatable(_G)\ng.__index = {}\nreturn 1",
        "any",
        &format!("assignment to `getmetatable(_G).__index` {refused}"),
    );
    assert_error(
        "rawset(getmetatable(_G), 'x', 1)\nreturn 1",
        "any",
        &format!("`rawset(getmetatable(_G), …)` {refused}"),
    );
    // Only `_G` has a metatable; a script's own tables are its own.
    assert_silent("local t = setmetatable({}, {})\ngetmetatable(t).__index = {}\nreturn 1");
}

#[test]
fn loadstring_of_compiled_lua_returns_nil() {
    let found = diagnostics(
        "local f = loadstring(string.dump(function() return 1 end))\nreturn 1",
        "any",
    );
    // Beside the warning every `loadstring` gets.
    assert!(
        found.contains(&(Severity::Error, "`loadstring` of compiled Lua (`string.dump`): Redis compiles only source text, so `loadstring` returns nil and calling its result fails with \"attempt to call a nil value\"".to_owned())),
        "{found:?}"
    );
}

#[test]
fn select_of_a_database_the_server_has_not() {
    assert_error(
        "redis.call('SELECT', -1)\nreturn 1",
        "any",
        "`SELECT -1`: there is no negative database, the call fails with \"DB index is out of range\"",
    );
    let found = diagnostics("redis.call('SELECT', 16)\nreturn 1", "any");
    assert!(
        matches!(found.as_slice(), [(Severity::Warning, message)] if message.starts_with("`SELECT 16`: a server has 16 databases")),
        "{found:?}"
    );
    assert_silent("redis.call('SELECT', 15)\nreturn 1");
}

#[test]
fn writes_under_eval_ro() {
    let mut read_only = signature(1, 1, "any");
    read_only.read_only = true;
    let messages = |source: &str| -> Vec<(Severity, String)> {
        crate::analyze(source, &read_only)
            .diagnostics
            .iter()
            .map(|d| (d.severity, d.text()))
            .collect()
    };
    assert_eq!(
        messages("redis.call('SET', KEYS[1], ARGV[1])\nreturn 1"),
        [(Severity::Error, "`SET` is a write command, but the script runs with EVAL_RO (`--read-only`): Redis refuses it (Write commands are not allowed from read-only scripts)".to_owned())]
    );
    // `redis.pcall` returns the refusal: the script runs, so a warning.
    let found = messages("local reply = redis.pcall('SET', KEYS[1], ARGV[1])\nreturn reply.err");
    assert!(
        matches!(found.as_slice(), [(Severity::Warning, message)] if message.ends_with("and this `redis.pcall` always returns that error reply")),
        "{found:?}"
    );
}
