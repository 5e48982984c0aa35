//! A script cannot pass its own error off as a refusal of the server.
//!
//! Each script counts its executions, then ends with an error made by one
//! route (returned: a bracketed key, a computed key, a table built
//! elsewhere, decoded JSON or MessagePack, a caught error handed back;
//! raised: directly, through a C function such as `table.sort`, again
//! after `pcall`, `xpcall` or a coroutine caught it) carrying the server's
//! own words for `NOSCRIPT`, `BUSY`, `Function not found`, `MOVED`… Every
//! call must run the script exactly once (cold, warm, with refusal retries
//! on, declared `exactly_once`, as a library function, on redis-rs's
//! cluster client, in a batch beside an unrelated write) and end saying
//! that it may have run.
//!
//! The fixed cases below are the routes one by one, declared with
//! `#[redis_script]` as a user would; the differential test generates
//! thousands of scripts from random combinations of routes, carriers and
//! wordings, runs them on the live server in every mode, and compares
//! what the server delivered with what the analysis said the script could
//! end with.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use redis::Value;
use redis_script::__private_v3::{Keys, push_argument, start_call, start_call_with_id};
use redis_script::{
    Batch, Call, CallId, Deployed, Error, OnConflict, RetryRefusals, Script, ServerFeature,
};
use redis_script::{redis_library, redis_script};
use redis_script_analysis::Signature;
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, Stats};
use redis_script_tests::get;

use crate::built;
use crate::releases::{before_redis_7, lacks_functions};

/// The server's own words, code first, for the refusals the runtime or
/// redis-rs acts on.
const WORDINGS: &[&str] = &[
    "NOSCRIPT No matching script. Please use EVAL.",
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
    "BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
    "ERR Function not found",
    "MOVED 3999 127.0.0.1:6381",
    "ASK 3999 127.0.0.1:6381",
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "CLUSTERDOWN The cluster is down",
    "LOADING Redis is loading the dataset in memory",
    "READONLY You can't write against a read only replica.",
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    "OOM command not allowed when used memory > 'maxmemory'.",
    "NOPERM User default has no permissions to run the 'evalsha' command",
    "ERR unknown command 'EVALSHA_RO', with args beginning with: ",
    "EXECABORT Transaction discarded because of previous errors.",
    "CONFLICT expected 3 found 4",
];

/// Refusal retries on, with no wait worth speaking of.
fn retries() -> RetryRefusals {
    RetryRefusals::new(5).with_delays(Duration::from_millis(1), Duration::from_millis(1))
}

/// The code a client reads from `wording`.
fn code_of(wording: &str) -> &str {
    redis_script_codes::split_error_reply(wording).0
}

// ---------------------------------------------------------------------------
// Every route, declared as a user would
// ---------------------------------------------------------------------------

#[redis_script(path = "lua/forged/bracket_literal.lua", keys = 1)]
async fn bracket_literal(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/bracket_computed.lua", keys = 1)]
async fn bracket_computed(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/table_elsewhere.lua", keys = 1)]
async fn table_elsewhere(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/cjson_decode.lua", keys = 1)]
async fn cjson_decode(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/cmsgpack_unpack.lua", keys = 1)]
async fn cmsgpack_unpack(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/pcall_select.lua", keys = 1)]
async fn pcall_select(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/pcall_caught.lua", keys = 1)]
async fn pcall_caught(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/coroutine_caught.lua", keys = 1)]
async fn coroutine_caught(counter: &str, message: &str) -> Value;

#[redis_script(
    path = "lua/forged/index_metatable.lua",
    keys = 1,
    // The metatable is the forgery this test is about.
    allow(returned_metatable)
)]
async fn index_metatable(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_direct.lua", keys = 1)]
async fn raise_direct(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_table_sort.lua", keys = 1)]
async fn raise_table_sort(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_table_foreach.lua", keys = 1)]
async fn raise_table_foreach(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_string_gsub.lua", keys = 1)]
async fn raise_string_gsub(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_pcall_again.lua", keys = 1)]
async fn raise_pcall_again(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_xpcall_again.lua", keys = 1)]
async fn raise_xpcall_again(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/raise_coroutine_again.lua", keys = 1)]
async fn raise_coroutine_again(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/newindex_raise.lua", keys = 1)]
async fn newindex_raise(counter: &str, message: &str) -> Value;

/// The `table.sort` route, declared `exactly_once`.
#[redis_script(path = "lua/forged/raise_table_sort.lua", keys = 1, exactly_once)]
async fn raise_table_sort_once(counter: &str, message: &str) -> Value;

#[redis_library(path = "lua/forged/forged_lib.lua")]
mod forged_lib {
    #[function(keys = 1)]
    pub async fn forge_reply(counter: &str, message: &str) -> redis::Value;
    #[function(keys = 1)]
    pub async fn forge_raise(counter: &str, message: &str) -> redis::Value;
}

/// A route's typed call, as its `call` companion makes it.
type MakeCall = fn(&str, &str) -> Call<Value, Error>;

/// How a route's script ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ends {
    /// It returns an error reply whose code is the wording's.
    Returned,
    /// It raises an error whose code is the wording's, at this line.
    Raised(u32),
    /// It raises the wording as a string, at this line: the code is `ERR`
    /// and the message holds the wording.
    RaisedText(u32),
    /// It returns the wording as a plain string.
    Text,
    /// It returns an empty array.
    EmptyArray,
}

/// Checks that a call of a route that ends as `ends` with `wording` got
/// what the route made, saying that it ran.
fn assert_ending(what: &str, wording: &str, ends: Ends, result: Result<Value, Error>) {
    match (result, ends) {
        (Err(error), Ends::Returned | Ends::Raised(_) | Ends::RaisedText(_)) => {
            assert!(
                error.may_have_executed() && !error.is_refusal(),
                "{what}, {wording:?}: {error:?}"
            );
            let (code, line, raised) = match ends {
                Ends::Raised(line) => (code_of(wording), Some(line), true),
                Ends::RaisedText(line) => ("ERR", Some(line), true),
                _ => (code_of(wording), None, false),
            };
            assert_eq!(error.code(), Some(code), "{what}: {error:?}");
            assert_eq!(
                error.location().map(|location| location.line),
                line,
                "{what}: {error:?}"
            );
            assert!(
                matches!(error, Error::Script { raised: was, .. } if was == raised),
                "{what}: {error:?}"
            );
            if ends != Ends::Returned {
                assert!(
                    error.message().is_some_and(
                        |message| wording.ends_with(message) || message.ends_with(wording)
                    ),
                    "{what}: {error:?}"
                );
            }
        }
        (Ok(reply), Ends::Text) => {
            assert_eq!(reply, Value::BulkString(wording.as_bytes().to_vec()));
        }
        (Ok(reply), Ends::EmptyArray) => assert_eq!(reply, Value::Array(vec![])),
        (other, _) => panic!("{what}, {wording:?}: {other:?}"),
    }
}

/// Runs `make` cold (after `SCRIPT FLUSH`) and warm with every wording,
/// refusal retries on, and checks that each call ran once and ended as
/// `ends` says.
async fn each_wording_runs_once(name: &str, make: MakeCall, ends: Ends) {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    for (index, wording) in WORDINGS.iter().enumerate() {
        let counter = format!("{{forged}}:{name}:{index}");
        server.script_flush();
        for (round, path) in ["cold", "warm"].into_iter().enumerate() {
            let result = make(&counter, wording)
                .retry_refusals(retries())
                .invoke(&mut connection)
                .await;
            let executions = get(&mut connection, &counter).await;
            assert_eq!(
                executions,
                Some(round as i64 + 1),
                "{name}, {path}, {wording:?}: ran once per call ({result:?})"
            );
            assert_ending(&format!("{name}, {path}"), wording, ends, result);
        }
    }
}

#[tokio::test]
async fn a_bracketed_literal_key_cannot_forge_a_refusal() {
    each_wording_runs_once("bracket_literal", bracket_literal::call, Ends::Returned).await;
}

#[tokio::test]
async fn a_computed_key_cannot_forge_a_refusal() {
    each_wording_runs_once("bracket_computed", bracket_computed::call, Ends::Returned).await;
}

#[tokio::test]
async fn a_table_built_elsewhere_cannot_forge_a_refusal() {
    each_wording_runs_once("table_elsewhere", table_elsewhere::call, Ends::Returned).await;
}

#[tokio::test]
async fn decoded_json_cannot_forge_a_refusal() {
    each_wording_runs_once("cjson_decode", cjson_decode::call, Ends::Returned).await;
}

#[tokio::test]
async fn decoded_messagepack_cannot_forge_a_refusal() {
    each_wording_runs_once("cmsgpack_unpack", cmsgpack_unpack::call, Ends::Returned).await;
}

/// Redis's `pcall` hands back a caught error table's message, not the
/// table: `select(2, pcall(…))` ends with a plain string. Redis 6.x's
/// `pcall` is Lua's own, which hands back the table: the script returns
/// an error reply.
#[tokio::test]
async fn a_pcall_result_passed_through_is_a_plain_string() {
    let ends = if before_redis_7() {
        Ends::Returned
    } else {
        Ends::Text
    };
    each_wording_runs_once("pcall_select", pcall_select::call, ends).await;
}

/// How a string raised without a position at `line` reads: an `ERR` with
/// the string as its message, but on Redis 6.x, where `redis.call` raises
/// a failed command's error that way, the error the string spells.
fn raised_text(line: u32) -> Ends {
    if before_redis_7() {
        Ends::Raised(line)
    } else {
        Ends::RaisedText(line)
    }
}

#[tokio::test]
async fn a_caught_error_returned_as_is_cannot_forge_a_refusal() {
    each_wording_runs_once("pcall_caught", pcall_caught::call, Ends::Returned).await;
    each_wording_runs_once("coroutine_caught", coroutine_caught::call, Ends::Returned).await;
}

/// Redis reads a returned table's raw `err` field: a metatable's `__index`
/// makes no error reply, and the script's reply is an empty array.
#[tokio::test]
async fn an_index_metamethod_makes_no_error_reply() {
    each_wording_runs_once("index_metatable", index_metatable::call, Ends::EmptyArray).await;
}

/// Valkey 9.1 writes no SHA1 in the suffix of a raised error: the raise
/// the runtime once told by that suffix.
#[tokio::test]
async fn a_raised_table_cannot_forge_a_refusal() {
    each_wording_runs_once("raise_direct", raise_direct::call, Ends::Raised(5)).await;
}

/// Raised from a C frame, the server's suffix names no line of the script
/// (`on =[C]:-1`); the mark still names the line that called the C
/// function.
#[tokio::test]
async fn an_error_raised_through_a_c_function_cannot_forge_a_refusal() {
    each_wording_runs_once("raise_table_sort", raise_table_sort::call, Ends::Raised(7)).await;
    each_wording_runs_once(
        "raise_table_foreach",
        raise_table_foreach::call,
        Ends::Raised(6),
    )
    .await;
    each_wording_runs_once("raise_string_gsub", raise_string_gsub::call, raised_text(6)).await;
}

#[tokio::test]
async fn an_error_caught_and_raised_again_cannot_forge_a_refusal() {
    each_wording_runs_once(
        "raise_pcall_again",
        raise_pcall_again::call,
        if before_redis_7() {
            // Redis 6.x's `pcall` caught the table itself, raised again.
            Ends::Raised(7)
        } else {
            Ends::RaisedText(7)
        },
    )
    .await;
    each_wording_runs_once(
        "raise_xpcall_again",
        raise_xpcall_again::call,
        Ends::Raised(11),
    )
    .await;
    each_wording_runs_once(
        "raise_coroutine_again",
        raise_coroutine_again::call,
        Ends::Raised(9),
    )
    .await;
}

/// A table whose `__newindex` keeps the server from adding its suffix:
/// the handler reads it raw and marks it like any other.
#[tokio::test]
async fn a_raise_past_the_servers_suffix_is_marked_too() {
    each_wording_runs_once("newindex_raise", newindex_raise::call, Ends::Raised(6)).await;
}

/// The mark is in the source sent, so every connection reads it: a
/// `ConnectionManager` and a blocking connection get what the multiplexed
/// connection gets, raised and returned alike.
#[tokio::test]
async fn every_connection_kind_reads_the_marks() {
    let server = RedisServer::start();
    let mut manager =
        redis::aio::ConnectionManager::new_with_config(server.client(), patience::manager_config())
            .await
            .expect("ConnectionManager");
    let mut blocking = server.client().get_connection().expect("connection");
    let routes: [(&str, MakeCall, Ends); 2] = [
        ("raise_table_sort", raise_table_sort::call, Ends::Raised(7)),
        ("bracket_computed", bracket_computed::call, Ends::Returned),
    ];
    for (name, make, ends) in routes {
        for (index, wording) in WORDINGS.iter().enumerate() {
            let counter = format!("{{forged}}:kinds:{name}:{index}");
            let result = make(&counter, wording)
                .retry_refusals(retries())
                .invoke(&mut manager)
                .await;
            assert_ending(&format!("{name}, ConnectionManager"), wording, ends, result);
            let result = make(&counter, wording)
                .retry_refusals(retries())
                .invoke_blocking(&mut blocking);
            assert_ending(&format!("{name}, blocking"), wording, ends, result);
            assert_eq!(
                get(&mut manager, &counter).await,
                Some(2),
                "{name}, {wording:?}: once per call"
            );
        }
    }
}

/// A raising body of an `exactly_once` script is recorded: the call sent
/// again with its id gets the same error, and the body ran once.
#[tokio::test]
async fn an_exactly_once_script_records_the_error_it_raised() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    for (index, wording) in WORDINGS.iter().enumerate() {
        let counter = format!("{{forged}}:once:{index}");
        if index % 2 == 0 {
            server.script_flush();
        }
        let call = raise_table_sort_once::call(&counter, wording).retry_refusals(retries());
        for send in ["first", "again"] {
            let result = call.invoke(&mut connection).await;
            assert_eq!(
                get(&mut connection, &counter).await,
                Some(1),
                "{send}, {wording:?}: ran once ({result:?})"
            );
            assert_ending(&format!("once, {send}"), wording, Ends::Raised(7), result);
        }
    }
}

/// A library function's errors, returned or raised, are marked for this
/// crate's calls: its `ERR Function not found` never makes the runtime
/// load the library and call again. Another client calling the function
/// by its own name sees what the file says, unmarked.
#[tokio::test]
async fn a_function_cannot_forge_a_refusal_and_others_see_the_file() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    if lacks_functions(
        &mut connection,
        "forged_refusals::a_function_cannot_forge_a_refusal_and_others_see_the_file",
    )
    .await
    {
        return;
    }
    let deployed = forged_lib::LIBRARY
        .deploy(&mut connection, OnConflict::Refuse)
        .await
        .expect("deploy");
    assert_eq!(deployed.deployed, Deployed::Loaded);
    type MakeFunction = fn(&str, &str) -> Call<Value, Error>;
    let functions: [(&str, MakeFunction, Ends); 2] = [
        ("forge_reply", forged_lib::forge_reply::call, Ends::Returned),
        (
            "forge_raise",
            forged_lib::forge_raise::call,
            Ends::Raised(11),
        ),
    ];
    for (name, make, ends) in functions {
        for (index, wording) in WORDINGS.iter().enumerate() {
            let counter = format!("{{forged}}:{name}:{index}");
            let result = make(&counter, wording)
                .retry_refusals(retries())
                .invoke(&mut connection)
                .await;
            assert_eq!(get(&mut connection, &counter).await, Some(1), "{wording}");
            assert_ending(name, wording, ends, result);

            // Another client: the function by its own name, as the file
            // wrote it.
            let plain: redis::RedisResult<Value> = redis::cmd("FCALL")
                .arg(name)
                .arg(1)
                .arg(&counter)
                .arg(wording)
                .query_async(&mut connection)
                .await;
            let error = match plain {
                Ok(Value::ServerError(error)) => error,
                Err(error) => match error.into_server_errors().as_deref() {
                    Some([(_, error)]) => error.clone(),
                    other => panic!("{name}: {other:?}"),
                },
                other => panic!("{name}: {other:?}"),
            };
            assert_eq!(error.code(), code_of(wording), "{name}: {error:?}");
            assert_eq!(get(&mut connection, &counter).await, Some(2), "{wording}");
        }
    }
    // What a reviewer sees of the deployed library: each function, and
    // its twin saying what it is for.
    let listed: Value = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg("forged_lib")
        .query_async(&mut connection)
        .await
        .expect("FUNCTION LIST");
    let text = format!("{listed:?}");
    for script in [
        &forged_lib::forge_reply::SCRIPT,
        &forged_lib::forge_raise::SCRIPT,
    ] {
        let twin = script.function_name().expect("a function");
        assert!(text.contains(twin), "{twin} in {text}");
    }
    assert!(text.contains("every error it ends with marked"), "{text}");
}

/// redis-rs's cluster client acts on the codes it knows (it follows
/// `MOVED`/`ASK`, waits and sends again after `TRYAGAIN`, `LOADING`,
/// `MASTERDOWN`, `CLUSTERDOWN`, refreshes its map after `READONLY`): a
/// marked code is none of them. Every raise route with every wording runs
/// once, alone and in a pipeline beside an unrelated write of the same
/// slot, which runs once too.
#[tokio::test]
async fn the_cluster_client_never_sends_a_raised_error_again() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    let routes: [(&str, MakeCall, Ends); 4] = [
        ("raise_direct", raise_direct::call, Ends::Raised(5)),
        ("raise_table_sort", raise_table_sort::call, Ends::Raised(7)),
        (
            "raise_coroutine_again",
            raise_coroutine_again::call,
            Ends::Raised(9),
        ),
        (
            "forge_raise",
            forged_lib::forge_raise::call,
            Ends::Raised(11),
        ),
    ];
    // Redis 6.x: the function's route proves the clear error instead.
    let without_functions = lacks_functions(
        &mut cluster.connection().await,
        "forged_refusals::the_cluster_client_never_sends_a_raised_error_again (its function route)",
    )
    .await;
    for (name, make, ends) in routes {
        if without_functions && name == "forge_raise" {
            continue;
        }
        for (index, wording) in WORDINGS.iter().enumerate() {
            let counter = format!("{{forged}}:{name}:{index}");
            let result = make(&counter, wording).invoke(&mut connection).await;
            assert_eq!(
                get(&mut connection, &counter).await,
                Some(1),
                "{name}, {wording:?}: {result:?}"
            );
            assert_ending(name, wording, ends, result);

            let unrelated = format!("{{forged}}:{name}:{index}:unrelated");
            let mut batch = Batch::pipeline();
            let write = batch.add_command::<i64>(redis::cmd("INCR").arg(&unrelated).to_owned());
            let raise = batch.add(make(&counter, wording)).expect("one slot");
            let mut replies = batch.run(&mut connection).await.expect("the batch runs");
            assert_eq!(replies.take(write).ok(), Some(1), "{name}, {wording:?}");
            assert_ending(name, wording, ends, replies.take(raise));
            assert_eq!(
                (
                    get(&mut connection, &counter).await,
                    get(&mut connection, &unrelated).await
                ),
                (Some(2), Some(1)),
                "{name}, {wording:?}: each ran once"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The differential test
// ---------------------------------------------------------------------------

/// How a generated script makes a table that may be an error reply,
/// holding the message `M` (a Lua string expression).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Maker {
    NamedField,
    BracketLiteral,
    BracketConcatenated,
    BracketFromArgv,
    AssignDot,
    AssignBracket,
    AssignFromArgv,
    Rawset,
    RawsetFromArgv,
    ErrorReply,
    Cjson,
    Cmsgpack,
    Resp3Map,
    Loadstring,
    IndexMetatable,
    NumberField,
}

impl Maker {
    const ALL: [Maker; 16] = [
        Maker::NamedField,
        Maker::BracketLiteral,
        Maker::BracketConcatenated,
        Maker::BracketFromArgv,
        Maker::AssignDot,
        Maker::AssignBracket,
        Maker::AssignFromArgv,
        Maker::Rawset,
        Maker::RawsetFromArgv,
        Maker::ErrorReply,
        Maker::Cjson,
        Maker::Cmsgpack,
        Maker::Resp3Map,
        Maker::Loadstring,
        Maker::IndexMetatable,
        Maker::NumberField,
    ];

    /// A Lua expression for the table, with `message` the Lua expression
    /// of its text. `ARGV[1]` is `'err'`; `KEYS[2]` is a scratch hash.
    fn lua(self, message: &str) -> String {
        match self {
            Maker::NamedField => format!("{{err = {message}}}"),
            Maker::BracketLiteral => format!("{{['err'] = {message}}}"),
            Maker::BracketConcatenated => format!("{{[('e' .. 'rr')] = {message}}}"),
            Maker::BracketFromArgv => format!("{{[ARGV[1]] = {message}}}"),
            Maker::AssignDot => {
                format!("(function() local t = {{}} t.err = {message} return t end)()")
            }
            Maker::AssignBracket => {
                format!("(function() local t = {{}} t['err'] = {message} return t end)()")
            }
            Maker::AssignFromArgv => {
                format!("(function() local t = {{}} t[ARGV[1]] = {message} return t end)()")
            }
            Maker::Rawset => format!("rawset({{}}, 'err', {message})"),
            Maker::RawsetFromArgv => format!("rawset({{}}, ARGV[1], {message})"),
            Maker::ErrorReply => format!("redis.error_reply({message})"),
            Maker::Cjson => format!("cjson.decode(cjson.encode({{err = {message}}}))"),
            Maker::Cmsgpack => format!("cmsgpack.unpack(cmsgpack.pack({{err = {message}}}))"),
            Maker::Resp3Map => format!(
                "(function() redis.setresp(3) redis.call('HSET', KEYS[2], 'err', {message}) \
                 local map = redis.call('HGETALL', KEYS[2]).map redis.setresp(2) return map end)()"
            ),
            Maker::Loadstring => {
                format!("loadstring('return {{err = ' .. string.format('%q', {message}) .. '}}')()")
            }
            Maker::IndexMetatable => {
                format!("setmetatable({{}}, {{__index = {{err = {message}}}}})")
            }
            Maker::NumberField => "{err = 42}".to_owned(),
        }
    }
}

/// How the table reaches the end of the script: returned, or raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Carrier {
    Direct,
    Local,
    Helper,
    Nested,
    ArrayElement,
    PcallError,
    SelectPcall,
    XpcallHandler,
    CoroutineResume,
    Raised,
    RaisedNewindex,
    RaisedByTableSort,
    RaisedByTableForeach,
    RaisedByGsub,
    RaisedAgainAfterPcall,
    RaisedAgainAfterXpcall,
    RaisedAgainAfterCoroutine,
    RaisedInHelper,
    CommandError,
}

impl Carrier {
    const ALL: [Carrier; 19] = [
        Carrier::Direct,
        Carrier::Local,
        Carrier::Helper,
        Carrier::Nested,
        Carrier::ArrayElement,
        Carrier::PcallError,
        Carrier::SelectPcall,
        Carrier::XpcallHandler,
        Carrier::CoroutineResume,
        Carrier::Raised,
        Carrier::RaisedNewindex,
        Carrier::RaisedByTableSort,
        Carrier::RaisedByTableForeach,
        Carrier::RaisedByGsub,
        Carrier::RaisedAgainAfterPcall,
        Carrier::RaisedAgainAfterXpcall,
        Carrier::RaisedAgainAfterCoroutine,
        Carrier::RaisedInHelper,
        Carrier::CommandError,
    ];

    /// The statements that end the script with `made`.
    fn lua(self, made: &str) -> String {
        match self {
            Carrier::Direct => format!("return {made}"),
            Carrier::Local => format!("local reply = {made}\nreturn reply"),
            Carrier::Helper => {
                format!("local function make()\n  return {made}\nend\nreturn make()")
            }
            Carrier::Nested => format!("local holder = {{inner = {made}}}\nreturn holder.inner"),
            Carrier::ArrayElement => format!("local list = {{{made}}}\nreturn list[1]"),
            Carrier::PcallError => {
                format!("local ok, caught = pcall(error, {made})\nreturn caught")
            }
            Carrier::SelectPcall => {
                format!("return select(2, pcall(function() error({made}) end))")
            }
            Carrier::XpcallHandler => format!(
                "local ok, caught = xpcall(function() error({made}) end, function(raised) return raised end)\nreturn caught"
            ),
            Carrier::CoroutineResume => format!(
                "local ok, caught = coroutine.resume(coroutine.create(function() error({made}) end))\nreturn caught"
            ),
            Carrier::Raised => format!("error({made})"),
            Carrier::RaisedNewindex => {
                format!("error(setmetatable({made}, {{__newindex = function() end}}))")
            }
            Carrier::RaisedByTableSort => format!("table.sort({{1, {made}}}, error)\nreturn 0"),
            Carrier::RaisedByTableForeach => {
                format!("table.foreach({{[{made}] = 1}}, error)\nreturn 0")
            }
            // `error` called with each match: the made table's `err` text
            // when it has one, raised as a string.
            Carrier::RaisedByGsub => format!(
                "local made = {made}\nlocal text = type(made) == 'table' and rawget(made, 'err')\nstring.gsub(type(text) == 'string' and text or 'x', '.+', error)\nreturn 0"
            ),
            Carrier::RaisedAgainAfterPcall => {
                format!("local ok, caught = pcall(error, {made})\nerror(caught)")
            }
            Carrier::RaisedAgainAfterXpcall => format!(
                "local ok, caught = xpcall(function() error({made}) end, function(raised) return raised end)\nerror(caught)"
            ),
            Carrier::RaisedAgainAfterCoroutine => format!(
                "local ok, caught = coroutine.resume(coroutine.create(function() error({made}) end))\nerror(caught)"
            ),
            Carrier::RaisedInHelper => {
                format!("local function fail()\n  error({made})\nend\nfail()\nreturn 0")
            }
            // A command's own error, caught and returned: `KEYS[3]` holds
            // a word, so INCR fails with `ERR value is not an integer`.
            Carrier::CommandError => "return redis.pcall('INCR', KEYS[3])".to_owned(),
        }
    }

    /// Whether the script ends by raising (an error escapes its body).
    fn raises(self) -> bool {
        matches!(
            self,
            Carrier::Raised
                | Carrier::RaisedNewindex
                | Carrier::RaisedByTableSort
                | Carrier::RaisedByTableForeach
                | Carrier::RaisedByGsub
                | Carrier::RaisedAgainAfterPcall
                | Carrier::RaisedAgainAfterXpcall
                | Carrier::RaisedAgainAfterCoroutine
                | Carrier::RaisedInHelper
        )
    }
}

/// One generated script.
#[derive(Debug, Clone)]
struct Case {
    maker: Maker,
    carrier: Carrier,
    wording: &'static str,
    /// The message as a Lua literal, or read from `ARGV[2]`.
    literal: bool,
}

impl Case {
    /// The body: counts its run, then ends with the made table.
    fn body(&self) -> String {
        let message = if self.literal {
            format!("{:?}", self.wording)
        } else {
            "ARGV[2]".to_owned()
        };
        format!(
            "redis.call('INCR', KEYS[1])\n{}\n",
            self.carrier.lua(&self.maker.lua(&message))
        )
    }

    fn source(&self) -> String {
        format!(
            "-- A generated script: counts its run, then ends with an error.\n{}",
            self.body()
        )
    }

    /// The same body as the one function of a library; the callback names
    /// its keys and arguments `KEYS` and `ARGV`, so the body reads them as
    /// a script does.
    fn library_source(&self) -> String {
        format!(
            "#!lua name=forged_generated\nredis.register_function('generated', function(KEYS, ARGV)\n{}end)\n",
            self.body()
        )
    }
}

fn cases() -> impl Strategy<Value = Case> {
    (
        proptest::sample::select(Maker::ALL.to_vec()),
        proptest::sample::select(Carrier::ALL.to_vec()),
        proptest::sample::select(WORDINGS.to_vec()),
        any::<bool>(),
    )
        .prop_map(|(maker, carrier, wording, literal)| Case {
            maker,
            carrier,
            wording,
            literal,
        })
}

/// The generated script's signature: three keys (the counter, a scratch
/// hash, a word) and two arguments (`'err'`, the wording).
fn generated_signature() -> Signature {
    Signature {
        keys: 3,
        args: 2,
        allow_unused: true,
        ..Signature::default()
    }
}

/// A call of a generated script (or function) with `keys` and the
/// wording; with `id`, as an exactly-once call.
fn call_of(
    script: &'static Script,
    keys: [&str; 3],
    wording: &str,
    id: Option<CallId>,
) -> Call<Value, Error> {
    let mut encoded = Keys::new();
    for key in keys {
        encoded.push(&key);
    }
    let mut call = match id {
        Some(id) => start_call_with_id::<Value, Error>(script, encoded, id),
        None => start_call::<Value, Error>(script, encoded),
    };
    push_argument(&mut call, &"err");
    push_argument(&mut call, &wording);
    call
}

/// How many generated scripts the test runs on each server.
const GENERATED: u32 = 4_000;

/// Every how many generated scripts one also runs as a library function.
const AS_FUNCTION_EVERY: u64 = 4;

/// How the calls of the generated scripts ended.
#[derive(Debug, Default)]
struct Endings {
    /// An error reply the script returned.
    returned_errors: u32,
    /// An error the script raised, with its line.
    raised_errors: u32,
    replies: u32,
    /// Calls made as an exactly-once script, and as a library function.
    exactly_once_calls: u32,
    function_calls: u32,
    /// Deploys of a generated library that a server without Redis
    /// Functions (Redis 6.x) answered with `Error::Unsupported`.
    functions_unsupported: u32,
}

#[test]
fn generated_errors_never_pass_for_refusals() {
    let server = RedisServer::start();
    // Redis 6.x: each library deploy proves the clear error instead.
    let without_functions = before_redis_7();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let connection = RefCell::new(runtime.block_on(server.connection()));
    let config = Config {
        cases: GENERATED,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..Config::default()
    };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let combinations: RefCell<BTreeMap<(Maker, Carrier), u32>> = RefCell::default();
    let ends = RefCell::new(Endings::default());
    let index = Cell::new(0u64);
    let outcome = runner.run(&cases(), |case| {
        index.set(index.get() + 1);
        let index = index.get();
        let source = case.source();
        let signature = generated_signature();
        let (script, analysis) = built::script("generated", &source, &signature, false);
        let (once, _) = built::script("generated_once", &source, &signature, true);
        let function = index.is_multiple_of(AS_FUNCTION_EVERY).then(|| {
            built::function(
                "forged_generated",
                "generated",
                &case.library_source(),
                &signature,
            )
        });
        let counter = format!("{{gen}}:count:{index}");
        let hash = format!("{{gen}}:hash:{index}");
        let keys = [counter.as_str(), hash.as_str(), "{gen}:word"];
        let connection = &mut *connection.borrow_mut();
        let ends = &mut *ends.borrow_mut();
        runtime.block_on(async {
            let () = redis::cmd("SET")
                .arg(keys[2])
                .arg("word")
                .query_async(connection)
                .await
                .expect("SET");
            if index.is_multiple_of(500) {
                server.script_flush();
            }
            let mut runs = 0;
            // Cold or warm, then warm, refusal retries on.
            for _ in 0..2 {
                let result = call_of(script, keys, case.wording, None)
                    .retry_refusals(retries())
                    .invoke(connection)
                    .await;
                runs += 1;
                let executions = get(connection, keys[0]).await;
                prop_assert_eq!(
                    executions,
                    Some(runs),
                    "ran once per call: {:?}\n{}",
                    result,
                    source
                );
                check_outcome(&case, &analysis, &result, &source, ends)?;
            }
            // Exactly once: the same call sent twice runs once.
            let call = call_of(once, keys, case.wording, Some(CallId::generate()))
                .retry_refusals(retries());
            for _ in 0..2 {
                let result = call.invoke(connection).await;
                ends.exactly_once_calls += 1;
                prop_assert_eq!(
                    get(connection, keys[0]).await,
                    Some(runs + 1),
                    "exactly once: ran once for both sends: {:?}\n{}",
                    result,
                    source
                );
                check_outcome(&case, &analysis, &result, &source, ends)?;
            }
            runs += 1;
            if let Some(function) = function {
                let library = function.library().expect("a function");
                let deployed = library.deploy(connection, OnConflict::Replace).await;
                if without_functions {
                    prop_assert!(
                        matches!(
                            deployed,
                            Err(Error::Unsupported {
                                feature: ServerFeature::Functions,
                                ..
                            })
                        ),
                        "deploy without Functions: {:?}",
                        deployed
                    );
                    ends.functions_unsupported += 1;
                    return Ok(());
                }
                prop_assert!(
                    deployed.is_ok(),
                    "deploy: {:?}\n{}",
                    deployed,
                    case.library_source()
                );
                let result = call_of(function, keys, case.wording, None)
                    .retry_refusals(retries())
                    .invoke(connection)
                    .await;
                ends.function_calls += 1;
                prop_assert_eq!(
                    get(connection, keys[0]).await,
                    Some(runs + 1),
                    "as a function, ran once: {:?}\n{}",
                    result,
                    case.library_source()
                );
                check_outcome(&case, &analysis, &result, &source, ends)?;
            }
            Ok(())
        })?;
        *combinations
            .borrow_mut()
            .entry((case.maker, case.carrier))
            .or_default() += 1;
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    let combinations = combinations.into_inner();
    let ends = ends.into_inner();
    let total: u32 = combinations.values().sum();
    eprintln!(
        "{total} generated scripts over {} combinations of route and carrier, each run cold, warm, \
         exactly once and one in {AS_FUNCTION_EVERY} as a library function, on {}: {ends:?}; \
         no error taken for a refusal, every returned code foreseen, every raised one with its line",
        combinations.len(),
        server.binary().display()
    );
    assert_eq!(total, GENERATED);
    assert_eq!(combinations.len(), Maker::ALL.len() * Carrier::ALL.len());
    // The generator reaches every way a call can end, each many times.
    for (what, count) in [
        ("returned errors", ends.returned_errors),
        ("raised errors", ends.raised_errors),
        ("replies", ends.replies),
        (
            "calls of functions (deploys refused as unsupported before Redis 7.0)",
            ends.function_calls + ends.functions_unsupported,
        ),
    ] {
        assert!(count >= 500, "only {count} {what}: {ends:?}");
    }
}

/// The promises about one call: an error says it may have run; a raised
/// error names its line, a returned one's code is one the analysis said
/// the script could end with.
fn check_outcome(
    case: &Case,
    analysis: &redis_script_analysis::Analysis,
    result: &Result<Value, Error>,
    source: &str,
    ends: &mut Endings,
) -> Result<(), TestCaseError> {
    let error = match result {
        Ok(_) => {
            prop_assert!(!case.carrier.raises(), "a raise ended well\n{}", source);
            ends.replies += 1;
            return Ok(());
        }
        Err(error) => error,
    };
    prop_assert!(
        error.may_have_executed() && !error.is_refusal(),
        "taken for a refusal: {:?}\n{}",
        error,
        source
    );
    let Error::Script {
        raised,
        location,
        code,
        ..
    } = error
    else {
        return Err(TestCaseError::fail(format!(
            "not the script's error: {error:?}\n{source}"
        )));
    };
    prop_assert_eq!(
        *raised,
        case.carrier.raises(),
        "raised or returned: {:?}\n{}",
        error,
        source
    );
    if *raised {
        prop_assert!(
            location.is_some(),
            "a raise without its line: {:?}\n{}",
            error,
            source
        );
        ends.raised_errors += 1;
    } else {
        let codes = &analysis.error_codes;
        prop_assert!(
            codes.may_return(code),
            "the analysis says {:?}, the server delivered {}\n{}",
            codes,
            code,
            source
        );
        ends.returned_errors += 1;
    }
    Ok(())
}
