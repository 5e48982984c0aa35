//! The checker and the live server agree on what a script may do beyond
//! the command table: every snippet the checker refuses for this server's
//! release, the server refuses too (with the reply the message quotes), and
//! every neighbouring snippet the checker accepts, the server runs.

use redis_script_analysis::{Severity, Signature, Target, analyze};
use redis_script_test::{RedisServer, ServerFlavor};

use crate::releases::lacks_functions_blocking;

/// What Redis 7.0 and later answer a write to a protected table.
const READONLY: &str = "Attempt to modify a readonly table";

/// `(script, what the server's error says)`: refused on every release CI
/// runs. The checker's message quotes the server's words, but for
/// `set_repl()`, whose server message miscounts ("requires two arguments").
const REFUSED: &[(&str, &str)] = &[
    ("return redis.sha1hex()", "wrong number of arguments"),
    (
        "return redis.sha1hex('a', 'b')",
        "wrong number of arguments",
    ),
    (
        "return redis.error_reply()",
        "wrong number or type of arguments",
    ),
    (
        "return redis.status_reply(1)",
        "wrong number or type of arguments",
    ),
    (
        "redis.log(redis.LOG_WARNING)",
        "requires two arguments or more",
    ),
    ("redis.log(99, 'x')", "Invalid"),
    (
        "redis.log('warning', 'x')",
        "First argument must be a number",
    ),
    ("redis.set_repl(12345)", "Invalid replication flags"),
    ("redis.set_repl()", "set_repl()"),
    ("redis.setresp(4)", "RESP version must be 2 or 3"),
    ("setmetatable(_G, {})", READONLY),
    ("rawset(_G, 'x', 1)", READONLY),
    ("rawset(redis, 'x', 1)", READONLY),
    ("setmetatable(string, {})", READONLY),
    ("local g = getmetatable(_G)\ng.__index = {}", READONLY),
    (
        "return loadstring(string.dump(function() return 1 end))()",
        "attempt to call a nil value",
    ),
    ("redis.call('SELECT', -1)", "DB index is out of range"),
];

/// `redis.acl_check_cmd`, which Redis 7.0 added: `(script, what a release
/// with it answers)`, `None` for a script such a release runs. A release
/// without it (Redis 6.x) refuses both, calling a nil field, and the
/// checker targeting it refuses both for the missing member.
const ACL_CHECKS: &[(&str, Option<&str>)] = &[
    (
        "return redis.acl_check_cmd('SETT', 'k', 'v')",
        Some("Invalid command passed"),
    ),
    ("return redis.acl_check_cmd('set', KEYS[1], 'v')", None),
];

/// Scripts next to the refused ones that every release runs.
const ACCEPTED: &[&str] = &[
    "return redis.sha1hex('a')",
    "return redis.status_reply('OK')",
    "redis.log(redis.LOG_DEBUG, 'a', 1)\nredis.log('3', 'b')\nreturn 1",
    "redis.set_repl(redis.REPL_ALL)\nredis.set_repl(0)\nreturn 1",
    "redis.setresp(3)\nredis.setresp(2)\nreturn 1",
    "local t = setmetatable({}, {})\nrawset(t, 'a', 1)\nreturn t.a",
    "local ok = pcall(function() return undefined_on_purpose end)\nreturn ok and 1 or 0",
    "local t = setmetatable({}, {__index = function() return undefined_on_purpose end})\nreturn 1",
    "redis.call('SELECT', 15)\nreturn 1",
];

/// `(library, what FUNCTION LOAD answers)`: refused by every release.
const REFUSED_LIBRARIES: &[(&str, &str)] = &[
    (
        "#!lua name=a name=b\nredis.register_function('f', function() return 1 end)",
        "name argument was given multiple times",
    ),
    (
        "#!js name=a\nredis.register_function('f', function() return 1 end)",
        "Engine 'js' not found",
    ),
    (
        "#!lua name=\"a\nredis.register_function('f', function() return 1 end)",
        "Invalid library metadata",
    ),
    (
        "#!lua name=a\nredis.register_function{function_name = 'f', callback = function() return 1 end, description = {}}",
        "description argument given to redis.register_function must be a string",
    ),
    (
        "#!lua name=a\nredis.register_function('f', 'g')",
        "second argument to redis.register_function must be a function",
    ),
    (
        "#!lua name=a\nredis.register_function{function_name = 'f', callback = function() return 1 end, flags = 'no-writes'}",
        "flags argument to redis.register_function must be a table",
    ),
];

/// Libraries next to the refused ones that every release loads.
const LOADED_LIBRARIES: &[&str] = &[
    "#!LUA name=a\nredis.register_function('f', function() return 1 end)",
    "#!lua NAME=\"a\"\nredis.register_function{FUNCTION_NAME = 'f', Callback = function() return 1 end}",
    "#!lua name=a\nlocal api = redis\napi.register_function('f', function() return 1 end)",
];

/// Refused where the release refuses it (`XREAD`/`XREADGROUP` with `BLOCK`).
const BLOCKING_READS: &[&str] = &[
    "return redis.pcall('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')",
    "redis.pcall('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'MKSTREAM')\nreturn redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', KEYS[1], '>')",
];

/// Calls of commands newer releases added, each with what the script
/// needs to run where the command exists (one key, `{s}stream`).
const NEWER_COMMANDS: &[&str] = &[
    "return redis.call('HEXPIRE', KEYS[1], 10, 'FIELDS', 1, 'f')",
    "return redis.call('HGETEX', KEYS[1], 'EX', 10, 'FIELDS', 1, 'f')",
    "return redis.call('HGETDEL', KEYS[1], 'FIELDS', 1, 'f')",
    "return redis.call('XACKDEL', KEYS[1], 'g', 'IDS', 1, '0-1')",
    "return redis.call('DELIFEQ', KEYS[1], 'owner')",
    "return redis.call('MSETEX', 1, KEYS[1], 'v', 'PX', 500)",
    "return redis.call('DELEX', KEYS[1], 'IFEQ', 'owner')",
    "return redis.call('DIGEST', KEYS[1])",
];

/// Calls of options newer releases added to a command (Redis 6.2 added
/// `GT`/`LT` to `ZADD`, `GET` and `PXAT` to `SET`), and the same calls
/// without them, which every release runs.
const NEWER_OPTIONS: &[&str] = &[
    "return redis.call('ZADD', KEYS[1], 'GT', 1, 'm')",
    "return redis.call('ZADD', KEYS[1], 'lt', 'CH', 1, 'm')",
    "return redis.call('SET', KEYS[1], 'v', 'GET')",
    "return redis.call('SET', KEYS[1], 'v', 'PXAT', 4102444800000)",
    "return redis.call('ZADD', KEYS[1], 'CH', 1, 'm')",
    "return redis.call('ZADD', KEYS[1], 1, 'GT')",
    "return redis.call('SET', KEYS[1], 'v', 'NX')",
];

/// The live server's release, as a target of the checker.
pub(crate) fn target_of(server: &RedisServer) -> Target {
    let version = server.version();
    let name = match server.flavor() {
        ServerFlavor::Redis => format!("redis-{}.{}", version.major, version.minor),
        ServerFlavor::Valkey => format!("valkey-{}.{}", version.major, version.minor),
    };
    Target::parse(&name).unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// The checker's errors for `source`, under the live server's release.
pub(crate) fn checker_errors(source: &str, target: &Target) -> Vec<String> {
    let signature = Signature {
        keys: 1,
        allow_unused: true,
        target: target.clone(),
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| diagnostic.text())
        .collect()
}

/// What the server answers: the error's text, or `None` when the script
/// ran and replied with no error (also no error table from `redis.pcall`).
pub(crate) fn server_error(connection: &mut redis::Connection, source: &str) -> Option<String> {
    let () = redis::cmd("FLUSHALL").query(connection).expect("FLUSHALL");
    match redis::cmd("EVAL")
        .arg(source)
        .arg(1)
        .arg("{s}stream")
        .query::<redis::Value>(connection)
    {
        Err(error) => Some(error.to_string()),
        Ok(redis::Value::ServerError(error)) => Some(format!("{error:?}")),
        Ok(_) => None,
    }
}

#[test]
fn the_checker_refuses_what_the_live_server_refuses() {
    let server = RedisServer::start();
    let target = target_of(&server);
    let mut connection = server.client().get_connection().expect("connection");
    for (source, reply) in REFUSED {
        // Redis 7.0 made the globals and the libraries read-only: 6.x runs
        // these, and the checker refuses them on every target, since the
        // script breaks on the upgrade (the guide's page on Redis 6.x).
        if *reply == READONLY && crate::releases::before_redis_7() {
            assert!(
                !checker_errors(source, &target).is_empty(),
                "{source} under {target:?}"
            );
            continue;
        }
        let refusal = server_error(&mut connection, source)
            .unwrap_or_else(|| panic!("the server ran: {source}"));
        assert!(
            refusal.contains(reply),
            "{source}: the server said {refusal}"
        );
        let errors = checker_errors(source, &target);
        assert!(!errors.is_empty(), "{source}: the checker found nothing");
        let quoted = if source.contains("set_repl()") {
            "takes one argument"
        } else {
            reply
        };
        assert!(
            errors.iter().any(|error| error.contains(quoted)),
            "{source}: {errors:?}"
        );
    }
    for source in ACCEPTED {
        assert_eq!(server_error(&mut connection, source), None, "{source}");
        assert_eq!(
            checker_errors(source, &target),
            Vec::<String>::new(),
            "{source}"
        );
    }
    let has_acl_checks =
        server_error(&mut connection, "assert(redis.acl_check_cmd ~= nil)").is_none();
    for &(source, refusal) in ACL_CHECKS {
        let answer = server_error(&mut connection, source);
        let errors = checker_errors(source, &target);
        match (has_acl_checks, refusal) {
            (true, Some(reply)) => {
                assert!(
                    answer.is_some_and(|answer| answer.contains(reply)),
                    "{source}"
                );
                assert!(
                    errors.iter().any(|error| error.contains(reply)),
                    "{source}: {errors:?}"
                );
            }
            (true, None) => {
                assert_eq!(answer, None, "{source}");
                assert_eq!(errors, Vec::<String>::new(), "{source}");
            }
            (false, _) => {
                assert!(
                    answer.is_some_and(|answer| answer.contains("a nil value")),
                    "{source}"
                );
                assert!(
                    errors.iter().any(|error| error.contains("acl_check_cmd")),
                    "{source} under {target:?}: {errors:?}"
                );
            }
        }
    }
}

/// The checker, targeting the live server's release, refuses a command
/// that release lacks, and accepts one it has: the server answers
/// "unknown command" exactly for the calls the checker refuses.
#[test]
fn newer_commands_are_refused_exactly_where_the_release_lacks_them() {
    let server = RedisServer::start();
    let target = target_of(&server);
    let mut connection = server.client().get_connection().expect("connection");
    let mut ran = 0;
    for source in NEWER_COMMANDS {
        let unknown = server_error(&mut connection, source)
            .is_some_and(|error| error.to_ascii_lowercase().contains("unknown"));
        let errors = checker_errors(source, &target);
        if unknown {
            assert!(
                errors.iter().any(|error| error.contains("exists since")),
                "{source}: the server lacks the command, the checker said {errors:?} under {target:?}"
            );
        } else {
            assert_eq!(errors, Vec::<String>::new(), "{source} under {target:?}");
            ran += 1;
        }
    }
    // No release has them all (DELIFEQ is Valkey's, DELEX Redis').
    assert!(ran < NEWER_COMMANDS.len(), "{ran} ran");
}

/// The checker, targeting the live server's release, says a call passes
/// an option the release does not have exactly where the server refuses
/// the call (Redis 6.0: "ERR syntax error", or a word read as a score
/// that is not a number), and accepts it where the server runs it.
#[test]
fn newer_options_are_refused_exactly_where_the_release_lacks_them() {
    let server = RedisServer::start();
    let target = target_of(&server);
    let mut connection = server.client().get_connection().expect("connection");
    let mut refused = 0;
    for source in NEWER_OPTIONS {
        let answer = server_error(&mut connection, source);
        let errors = checker_errors(source, &target);
        match answer {
            Some(answer) => {
                assert!(
                    answer.contains("syntax error") || answer.contains("not a valid float"),
                    "{source}: {answer}"
                );
                assert!(
                    errors.len() == 1 && errors[0].contains("option on"),
                    "{source}: the server said {answer}, the checker {errors:?} under {target:?}"
                );
                refused += 1;
            }
            None => assert_eq!(errors, Vec::<String>::new(), "{source} under {target:?}"),
        }
    }
    // Redis 6.0 lacks the four newer options; every later release has them.
    let expected = if target.to_string() == "redis-6.0" {
        4
    } else {
        0
    };
    assert_eq!(refused, expected, "under {target:?}");
}

#[test]
fn blocking_stream_reads_are_refused_exactly_where_the_release_refuses_them() {
    let server = RedisServer::start();
    let target = target_of(&server);
    let mut connection = server.client().get_connection().expect("connection");
    for source in BLOCKING_READS {
        let server_refuses = server_error(&mut connection, source)
            .is_some_and(|error| error.contains("is not allowed with BLOCK option from scripts"));
        let checker_refuses = checker_errors(source, &target)
            .iter()
            .any(|error| error.contains("is refused inside scripts"));
        assert_eq!(
            checker_refuses, server_refuses,
            "{source}: the checker and {target:?} disagree"
        );
    }
}

fn library_errors(source: &str) -> Vec<String> {
    redis_script_analysis::analyze_library(source, &Default::default())
        .diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| diagnostic.text())
        .collect()
}

#[test]
fn the_checker_reads_a_library_first_line_and_registrations_as_function_load_does() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    if lacks_functions_blocking(
        &mut connection,
        "server_refusals::the_checker_reads_a_library_first_line_and_registrations_as_function_load_does",
    ) {
        return;
    }
    let mut load = |source: &str| {
        redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg("REPLACE")
            .arg(source)
            .query::<String>(&mut connection)
            .map_err(|error| error.to_string())
    };
    for (source, reply) in REFUSED_LIBRARIES {
        // Valkey names the table `server` in its messages; the checker
        // quotes Redis's words.
        let refusal = load(source)
            .expect_err(source)
            .replace("server.register_function", "redis.register_function");
        assert!(
            refusal.contains(reply),
            "{source}: the server said {refusal}"
        );
        let errors = library_errors(source);
        assert!(
            errors.iter().any(|error| error.contains(reply)),
            "{source}: {errors:?}"
        );
    }
    for source in LOADED_LIBRARIES {
        assert_eq!(load(source).as_deref(), Ok("a"), "{source}");
        assert_eq!(library_errors(source), Vec::<String>::new(), "{source}");
    }
}
