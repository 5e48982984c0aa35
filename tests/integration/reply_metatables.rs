//! A script that returns a table with a metatable can end the server
//! process: after the script has returned, the server reads some fields of
//! the reply with `lua_gettable`/`lua_getfield`, which run the metatable's
//! `__index` outside any protected call. A raise there is a Lua panic (the
//! server exits), and a `redis.call` there runs after the script ended.
//! Which fields, per release (from the servers' `script_lua.c`, and the
//! probes below):
//!
//! * Redis 7.0.5 and later, every Valkey: the `source`, `line` and
//!   `ignore_error_stats_update` fields of each error table of the reply
//!   (a table whose raw `err` is a string), at any depth: the reply
//!   itself, an array element, a RESP3 map key or value, a set member.
//!   Every other read is raw.
//! * Redis before 6.2.8, and 7.0.0 to 7.0.4: every field the conversion
//!   looks up (`err`, `ok`, `double`, `map`, `set`, … and each array
//!   index) of every table, through `lua_gettable`. Redis 6 looks no
//!   further into an error table, so a present `err` is read without
//!   `__index`.
//! * Redis 6.2.8 to 6.2.x: nothing (every read is raw).
//!
//! No release calls `__len` or any other metamethod on a reply.
//!
//! The raw script kills the release where that release's reads reach its
//! metatable; the same script sent by `redis-script` (whose wrapper hands
//! the server a copy without metatables) never does, through every kind
//! of connection, exactly once, and as a library function.

use std::time::{Duration, Instant};

use redis::Value;
use redis::aio::ConnectionLike;
use redis_script::{Error, redis_library, redis_script};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, ServerFlavor};

use crate::releases::before_redis_6_2;

/// The script of the report: an error table whose `__index` raises.
const RETURNED_ERROR: &str =
    "return setmetatable({err='x'},{__index=function() error('boom') end})";

/// The same error table as an element of an array.
const NESTED_ERROR: &str =
    "return {1, setmetatable({err = 'x'}, {__index = function() error('boom') end})}";

/// A table that is no error reply, whose `__index` raises.
const PLAIN_TABLE: &str = "return setmetatable({}, {__index = function() error('boom') end})";

/// An error table whose `__index` writes `KEYS[1]`, and does not raise.
const WRITES_AFTER: &str = "return setmetatable({err = 'x'}, {__index = function() redis.call('SET', KEYS[1], 'written after the script ended') end})";

/// What Lua's panic handler prints (on the server's standard error) as the
/// server exits, on the releases whose Lua prints it (Debian's Redis 8.0
/// and 8.6 exit with status 1 and print nothing).
const PANIC: &str = "PANIC: unprotected error in call to Lua API";

/// Which tables of a reply a release reads through their metatables, after
/// the script has ended.
#[derive(Debug, Clone, Copy)]
struct Reads {
    /// Every field of every table (`lua_gettable`).
    every_table: bool,
    /// The extra fields of each error table (`lua_getfield`).
    error_fields: bool,
}

fn reads_of(server: &RedisServer) -> Reads {
    let version = server.version();
    let release = (version.major, version.minor, version.patch);
    match server.flavor() {
        // Forked from Redis 7.2.4.
        ServerFlavor::Valkey => Reads {
            every_table: false,
            error_fields: true,
        },
        ServerFlavor::Redis => Reads {
            every_table: release < (6, 2, 8) || ((7, 0, 0)..=(7, 0, 4)).contains(&release),
            error_fields: release >= (7, 0, 0),
        },
    }
}

fn release_of(server: &RedisServer) -> String {
    let version = server.version();
    format!(
        "{:?} {}.{}.{}",
        server.flavor(),
        version.major,
        version.minor,
        version.patch
    )
}

/// Waits up to 5 s for `server` to exit; whether it did.
fn exits(server: &RedisServer) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.is_running() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Sends `setup` then `command` to a throwaway server, and checks that the
/// server exits with the Lua panic of `__index` exactly when `dies`, and
/// otherwise answers and keeps running.
fn probe(what: &str, setup: &[redis::Cmd], command: &redis::Cmd, dies: bool) {
    let server = RedisServer::start();
    let release = release_of(&server);
    let mut connection = server.client().get_connection().expect("connection");
    for step in setup {
        let _: Value = step
            .query(&mut connection)
            .unwrap_or_else(|error| panic!("{release}: {what}: setting up: {error}"));
    }
    let answer = command.query::<Value>(&mut connection);
    if dies {
        assert!(
            exits(&server),
            "{release}: {what}: the server was expected to exit, and answered {answer:?}"
        );
        let log = server.log_tail(20);
        assert!(
            !log.contains(PANIC) || log.contains("boom"),
            "{release}: {what}: the server panicked for another reason:\n{log}"
        );
    } else {
        match &answer {
            Ok(_) => {}
            Err(error) if error.code().is_some() => {}
            Err(error) => panic!("{release}: {what}: no answer: {error}"),
        }
        assert!(
            server.is_running(),
            "{release}: {what}: the server was expected to survive:\n{}",
            server.log_tail(20)
        );
        let pong: String = redis::cmd("PING")
            .query(&mut connection)
            .expect("PING after the script");
        assert_eq!(pong, "PONG", "{release}: {what}");
    }
}

fn eval(script: &str) -> redis::Cmd {
    let mut command = redis::cmd("EVAL");
    command.arg(script).arg(0);
    command
}

/// The hazard, as the scripts run unwrapped: each release dies exactly
/// where its reads reach the metatable, and only of the raise in
/// `__index` (the same script whose `__index` returns instead never ends
/// the server).
#[test]
fn a_raw_script_ends_the_server_where_its_reads_reach_the_metatable() {
    let reads = reads_of(&RedisServer::start());
    // Redis 6 reads a present `err` field through `lua_gettable`, which
    // finds it without `__index`; Redis 7 and every Valkey then read the
    // error table's other fields with `lua_getfield`. Without `err`, only
    // `lua_gettable` everywhere reaches `__index`.
    let probes = [
        ("the error table", RETURNED_ERROR, reads.error_fields),
        ("the nested error table", NESTED_ERROR, reads.error_fields),
        ("a table without `err`", PLAIN_TABLE, reads.every_table),
    ];
    for (what, script, dies) in probes {
        probe(what, &[], &eval(script), dies);
        let harmless = script.replace("error('boom')", "return nil");
        probe(&format!("{what}, harmless"), &[], &eval(&harmless), false);
    }
}

/// On releases that read an error table's fields through `__index`, a
/// `redis.call` there runs after the script has ended (the script itself
/// writes nothing).
#[test]
fn a_raw_script_can_write_after_it_ended() {
    let server = RedisServer::start();
    let release = release_of(&server);
    let reads = reads_of(&server);
    let mut connection = server.client().get_connection().expect("connection");
    let reply = redis::cmd("EVAL")
        .arg(WRITES_AFTER)
        .arg(1)
        .arg("after")
        .query::<Value>(&mut connection);
    assert!(
        matches!(&reply, Err(error) if error.code() == Some("x")),
        "{release}: {reply:?}"
    );
    let written: Option<String> = redis::cmd("GET")
        .arg("after")
        .query(&mut connection)
        .expect("GET");
    assert_eq!(
        written.is_some(),
        reads.error_fields,
        "{release}: written after the script ended: {written:?}"
    );
}

/// The library file loaded as it is, as a client other than
/// `redis-script` loads it: a function called by its own name ends the
/// server like the raw script (the sent library keeps it as written too;
/// only its twin is protected).
#[test]
fn a_raw_library_function_ends_the_server_too() {
    let server = RedisServer::start();
    let release = release_of(&server);
    let reads = reads_of(&server);
    let mut load = redis::cmd("FUNCTION");
    load.arg("LOAD").arg(LIBRARY_FILE);
    if server.version().major < 7 {
        // Redis 6 has no functions.
        let mut connection = server.client().get_connection().expect("connection");
        let error = load
            .query::<Value>(&mut connection)
            .expect_err("FUNCTION before Redis 7");
        assert!(
            error.to_string().contains("unknown command"),
            "{release}: {error}"
        );
        return;
    }
    drop(server);
    for function in ["raising_index", "nested_raising_index"] {
        let mut call = redis::cmd("FCALL");
        call.arg(function).arg(1).arg("runs");
        probe(function, &[load.clone()], &call, reads.error_fields);
    }
}

/// The library `raising_index_lib`, as its file says.
const LIBRARY_FILE: &str = include_str!("../lua/metatables/raising_index_lib.lua");

/// Counts its runs, then returns `{err = 'BOOM the script returned
/// this error'}` with a metatable whose `__index` writes and raises.
#[redis_script(
    path = "lua/metatables/raising_index.lua",
    keys = 1,
    // The metatable is what this test is about.
    allow(returned_metatable)
)]
async fn raising_index(counter: &str) -> i64;

/// The same, exactly once.
#[redis_script(
    path = "lua/metatables/raising_index.lua",
    keys = 1,
    exactly_once,
    allow(returned_metatable)
)]
async fn raising_index_once(counter: &str) -> i64;

/// Counts its runs, then returns `{runs, <that error table>}`.
#[redis_script(
    path = "lua/metatables/nested_raising_index.lua",
    keys = 1,
    allow(returned_metatable)
)]
async fn nested_raising_index(counter: &str) -> Value;

/// The two scripts as library functions.
#[redis_library(
    path = "lua/metatables/raising_index_lib.lua",
    allow(returned_metatable)
)]
mod raising_index_lib {
    #[function(keys = 1)]
    pub async fn raising_index(counter: &str) -> i64;

    #[function(keys = 1)]
    pub async fn nested_raising_index(counter: &str) -> redis::Value;
}

/// The raw `err` text of the error the scripts return.
const RETURNED: &str = "BOOM the script returned this error";

/// The raw `err` text of the nested error.
const NESTED: &str = "BOOM a nested error";

/// What shows that a server is the same process, started once: its
/// process id, its run id, and its uptime (which never goes back).
#[derive(Debug, PartialEq)]
struct Identity {
    process_id: String,
    run_id: String,
    uptime_in_seconds: u64,
}

fn identity(server: &RedisServer) -> Identity {
    let info = server.info("server");
    let field = |name: &str| {
        info.get(name)
            .cloned()
            .unwrap_or_else(|| panic!("INFO server has no {name}: {info:?}"))
    };
    Identity {
        process_id: field("process_id"),
        run_id: field("run_id"),
        uptime_in_seconds: field("uptime_in_seconds").parse().expect("uptime"),
    }
}

/// The call ended with the error the script returned, unchanged.
fn assert_returned(what: &str, result: Result<i64, Error>) {
    let error = match result {
        Err(error @ Error::Script { raised: false, .. }) => error,
        other => panic!("{what}: expected the returned error, got {other:?}"),
    };
    let text = format!(
        "{} {}",
        error.code().unwrap_or_default(),
        error.message().unwrap_or_default()
    );
    assert_eq!(text, RETURNED, "{what}: {error:?}");
    assert!(error.may_have_executed(), "{what}: {error:?}");
}

/// The reply is `{1, <the nested error>}`.
fn assert_nested(what: &str, result: Result<Value, Error>) {
    match result {
        Ok(Value::Array(elements)) => match elements.as_slice() {
            [Value::Int(1), Value::ServerError(error)] => {
                let text = format!("{} {}", error.code(), error.details().unwrap_or_default());
                assert_eq!(text, NESTED, "{what}: {error:?}");
            }
            other => panic!("{what}: {other:?}"),
        },
        other => panic!("{what}: expected an array, got {other:?}"),
    }
}

/// The counter holds `runs`, and nothing else wrote it: `__index` never
/// ran.
async fn assert_runs<C: ConnectionLike>(what: &str, connection: &mut C, counter: &str, runs: i64) {
    let value: Option<String> = redis::cmd("GET")
        .arg(counter)
        .query_async(connection)
        .await
        .expect("GET");
    assert_eq!(value, Some(runs.to_string()), "{what}: {counter}");
}

/// Every way `redis-script` sends the scripts, on `connection` to the
/// servers `nodes`: each call ends as the script's file says, and every
/// node is still the same process afterwards.
async fn every_call_keeps_the_servers_up<C: ConnectionLike + Send>(
    connection: &mut C,
    nodes: &[&RedisServer],
    how: &str,
) {
    let release = release_of(nodes[0]);
    let what = |call: &str| format!("{release}, {how}: {call}");
    let before: Vec<Identity> = nodes.iter().map(|node| identity(node)).collect();

    assert_returned(
        &what("script"),
        raising_index(connection, "metatables:{script}").await,
    );
    assert_runs(&what("script"), connection, "metatables:{script}", 1).await;

    assert_nested(
        &what("nested"),
        nested_raising_index(connection, "metatables:{nested}").await,
    );
    assert_runs(&what("nested"), connection, "metatables:{nested}", 1).await;

    // Sent again, an exactly-once call replays the recorded error.
    let once = raising_index_once::call("metatables:{once}");
    for attempt in ["exactly once", "exactly once, replayed"] {
        assert_returned(&what(attempt), once.invoke(connection).await);
    }
    assert_runs(&what("exactly once"), connection, "metatables:{once}", 1).await;

    if nodes[0].version().major >= 7 {
        assert_returned(
            &what("function"),
            raising_index_lib::raising_index(connection, "metatables:{function}").await,
        );
        assert_runs(&what("function"), connection, "metatables:{function}", 1).await;
        assert_nested(
            &what("nested function"),
            raising_index_lib::nested_raising_index(connection, "metatables:{nested-function}")
                .await,
        );
        assert_runs(
            &what("nested function"),
            connection,
            "metatables:{nested-function}",
            1,
        )
        .await;
    }

    let pong: String = redis::cmd("PING")
        .query_async(connection)
        .await
        .expect("PING");
    assert_eq!(pong, "PONG", "{}", what("PING"));
    for (node, before) in nodes.iter().zip(before) {
        assert!(node.is_running(), "{}: {}", what("after"), node.addr());
        let after = identity(node);
        assert_eq!(
            (&after.process_id, &after.run_id),
            (&before.process_id, &before.run_id),
            "{}: {} is another process",
            what("after"),
            node.addr()
        );
        assert!(
            after.uptime_in_seconds >= before.uptime_in_seconds,
            "{}: {} restarted: {before:?} then {after:?}",
            what("after"),
            node.addr()
        );
    }
}

#[tokio::test]
async fn a_multiplexed_connection_keeps_the_server_up() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    every_call_keeps_the_servers_up(&mut connection, &[&server], "multiplexed connection").await;
}

#[tokio::test]
async fn a_connection_manager_keeps_the_server_up() {
    let server = RedisServer::start();
    let mut manager =
        redis::aio::ConnectionManager::new_with_config(server.client(), patience::manager_config())
            .await
            .expect("connection manager");
    every_call_keeps_the_servers_up(&mut manager, &[&server], "ConnectionManager").await;
}

#[tokio::test]
async fn the_cluster_client_keeps_every_node_up() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    let nodes: Vec<&RedisServer> = cluster.nodes().iter().collect();
    every_call_keeps_the_servers_up(&mut connection, &nodes, "cluster client").await;
}

/// The scripts and the library are sent with the copier: each names
/// `setmetatable`.
#[test]
fn the_files_are_sent_with_the_copier() {
    use redis_script_analysis::sent::may_end_with_metatables;
    for source in [
        include_str!("../lua/metatables/raising_index.lua"),
        include_str!("../lua/metatables/nested_raising_index.lua"),
        LIBRARY_FILE,
    ] {
        assert!(may_end_with_metatables(source));
    }
    for sent in [
        raising_index::SCRIPT.source(),
        raising_index_once::SCRIPT.source(),
        nested_raising_index::SCRIPT.source(),
        raising_index_lib::LIBRARY.source(),
    ] {
        assert!(sent.contains("__redis_script_plain(reply)"), "{sent}");
    }
}

/// A call of `script` with the one key `key`, whose reply is read as is.
fn call_with_key(
    script: &'static redis_script::Script,
    key: &str,
) -> redis_script::Call<Value, Error> {
    let mut keys = redis_script::__private_v3::Keys::new();
    keys.push(&key);
    redis_script::__private_v3::start_call(script, keys)
}

/// The marked error is a table of the wrapper's own: a library's error
/// table that outlives the call is never written to, so each call (and
/// the function other clients call by its own name) reads it unmarked.
#[tokio::test]
async fn a_library_error_table_is_never_marked_in_place() {
    let server = RedisServer::start();
    if server.version().major < 7 {
        // No functions before Redis 7 (`a_raw_library_function_ends_the_server_too`
        // checks that FUNCTION is unknown there).
        return;
    }
    let signature = redis_script_analysis::Signature {
        keys: 1,
        allow_unused: true,
        ..redis_script_analysis::Signature::default()
    };
    let source = "#!lua name=gone_lib\nlocal GONE = {err = 'GONE for good'}\nredis.register_function('gone', function(keys, args) return GONE end)\n";
    let twin = crate::built::function("gone_lib", "gone", source, &signature);
    let mut connection = server.connection().await;
    for attempt in 0..3 {
        match call_with_key(twin, "k").invoke(&mut connection).await {
            Err(error @ Error::Script { raised: false, .. }) => {
                assert_eq!(
                    (error.code(), error.message()),
                    (Some("GONE"), Some("for good")),
                    "call {attempt}: {error:?}"
                );
            }
            other => panic!("call {attempt}: {other:?}"),
        }
    }
    let direct = redis::cmd("FCALL")
        .arg("gone")
        .arg(1)
        .arg("k")
        .query_async::<Value>(&mut connection)
        .await;
    assert!(
        matches!(&direct, Err(error) if error.code() == Some("GONE")),
        "{direct:?}"
    );
}

/// A command that fails inside a script is counted once in the server's
/// error statistics, for the command: the raised error the wrapper
/// returns keeps the flag (`ignore_error_stats_update`, Redis 7 and later)
/// that tells the server not to count it again.
#[tokio::test]
async fn a_failed_command_is_counted_once() {
    let server = RedisServer::start();
    let signature = redis_script_analysis::Signature {
        keys: 1,
        ..redis_script_analysis::Signature::default()
    };
    let (script, _) = crate::built::script(
        "incr_text",
        "return redis.call('INCR', KEYS[1])",
        &signature,
        false,
    );
    let mut connection = server.connection().await;
    let () = redis::cmd("SET")
        .arg("text")
        .arg("not a number")
        .query_async(&mut connection)
        .await
        .expect("SET");
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut connection)
        .await
        .expect("CONFIG RESETSTAT");
    match call_with_key(script, "text").invoke(&mut connection).await {
        Err(error @ Error::Script { raised: true, .. }) => {
            assert_eq!(error.code(), Some("ERR"), "{error:?}");
        }
        other => panic!("{other:?}"),
    }
    if before_redis_6_2() {
        eprintln!(
            "reply_metatables::a_failed_command_is_counted_once: Redis before 6.2 has no INFO errorstats to count in"
        );
        return;
    }
    let errors = server.info("errorstats");
    assert_eq!(
        errors.get("errorstat_ERR").map(String::as_str),
        Some("count=1"),
        "{errors:?}"
    );
    // The cold path's `NOSCRIPT` is counted too; the marked reply is not,
    // but on Redis 6, whose `redis.call` sets no such flag.
    let marked: Vec<&String> = errors.keys().filter(|name| name.contains('^')).collect();
    assert_eq!(
        !marked.is_empty(),
        server.version().major < 7,
        "{}: {errors:?}",
        release_of(&server)
    );
}
