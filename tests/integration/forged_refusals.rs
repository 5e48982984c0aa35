//! A script cannot pass its own error reply off as a refusal of the server.
//!
//! Each script counts its executions, then ends with an error reply made
//! by one route (a bracketed key, a computed key, a table built elsewhere,
//! decoded JSON or MessagePack, a caught error handed back, a raise that
//! escapes Redis's ` script: …` suffix) carrying the server's own words
//! for `NOSCRIPT`, `BUSY`, `Function not found`, `MOVED`… Every call must
//! run the script exactly once (cold, warm, with refusal retries on) and
//! end saying that it may have run.
//!
//! The fixed cases below are the routes one by one, declared with
//! `#[redis_script]` as a user would; the differential test generates
//! ten thousand scripts from random combinations of routes, carriers and
//! wordings, runs them on the live server, and compares what the server
//! delivered with what the analysis said the script could end with.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use redis::Value;
use redis_script::__private_v2::{Keys, push_argument, start_call};
use redis_script::{Call, Deployed, Error, OnConflict, RetryRefusals, Script};
use redis_script::{redis_library, redis_script};
use redis_script_analysis::{Signature, analyze, sent};
use redis_script_test::{RedisServer, Stats};
use redis_script_tests::get;

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

#[redis_script(path = "lua/forged/newindex_raise.lua", keys = 1)]
async fn newindex_raise(counter: &str, message: &str) -> Value;

#[redis_script(path = "lua/forged/index_metatable.lua", keys = 1)]
async fn index_metatable(counter: &str, message: &str) -> Value;

#[redis_library(path = "lua/forged/forged_lib.lua")]
mod forged_lib {
    #[function(keys = 1)]
    pub async fn forge_reply(counter: &str, message: &str) -> redis::Value;
}

/// A route's typed call, as its `call` companion makes it.
type MakeCall = fn(&str, &str) -> Call<Value, Error>;

/// How a route's script ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ends {
    /// With an error reply whose code is the wording's.
    Error,
    /// With the wording as a plain string.
    Text,
    /// With an empty array.
    EmptyArray,
}

/// Runs `make` cold (after `SCRIPT FLUSH`) and warm with every wording,
/// refusal retries on, and checks that each call ran once, ended as
/// `ends` says, and that an error says it may have run.
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
            match (result, ends) {
                (Err(error), Ends::Error) => {
                    assert!(
                        error.may_have_executed() && !error.is_refusal(),
                        "{name}, {path}, {wording:?}: {error:?}"
                    );
                    assert_eq!(error.code(), Some(code_of(wording)), "{name}: {error:?}");
                }
                (Ok(reply), Ends::Text) => {
                    assert_eq!(reply, Value::BulkString(wording.as_bytes().to_vec()));
                }
                (Ok(reply), Ends::EmptyArray) => assert_eq!(reply, Value::Array(vec![])),
                (other, _) => panic!("{name}, {path}, {wording:?}: {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn a_bracketed_literal_key_cannot_forge_a_refusal() {
    each_wording_runs_once("bracket_literal", bracket_literal::call, Ends::Error).await;
}

#[tokio::test]
async fn a_computed_key_cannot_forge_a_refusal() {
    each_wording_runs_once("bracket_computed", bracket_computed::call, Ends::Error).await;
}

#[tokio::test]
async fn a_table_built_elsewhere_cannot_forge_a_refusal() {
    each_wording_runs_once("table_elsewhere", table_elsewhere::call, Ends::Error).await;
}

#[tokio::test]
async fn decoded_json_cannot_forge_a_refusal() {
    each_wording_runs_once("cjson_decode", cjson_decode::call, Ends::Error).await;
}

#[tokio::test]
async fn decoded_messagepack_cannot_forge_a_refusal() {
    each_wording_runs_once("cmsgpack_unpack", cmsgpack_unpack::call, Ends::Error).await;
}

/// Redis's `pcall` hands back a caught error table's message, not the
/// table: `select(2, pcall(…))` ends with a plain string.
#[tokio::test]
async fn a_pcall_result_passed_through_is_a_plain_string() {
    each_wording_runs_once("pcall_select", pcall_select::call, Ends::Text).await;
}

#[tokio::test]
async fn a_caught_error_returned_as_is_cannot_forge_a_refusal() {
    each_wording_runs_once("pcall_caught", pcall_caught::call, Ends::Error).await;
    each_wording_runs_once("coroutine_caught", coroutine_caught::call, Ends::Error).await;
}

/// Redis reads a returned table's raw `err` field: a metatable's `__index`
/// makes no error reply, and the script's reply is an empty array.
#[tokio::test]
async fn an_index_metamethod_makes_no_error_reply() {
    each_wording_runs_once("index_metatable", index_metatable::call, Ends::EmptyArray).await;
}

/// The one error the mark cannot reach: raised with a table whose
/// `__newindex` keeps Redis from adding ` script: …`. The analysis sees
/// the metatable, so the script is sent with its body every time and no
/// reply of it is taken for a refusal.
#[tokio::test]
async fn a_raise_that_escapes_the_suffix_is_still_taken_as_run() {
    assert!(!newindex_raise::SCRIPT.is_read_only());
    let server = RedisServer::start();
    server.reset_stats();
    each_wording_runs_once("newindex_raise", newindex_raise::call, Ends::Error).await;
    let server_calls = (server.calls("evalsha"), server.calls("eval"));
    // `each_wording_runs_once` started its own server: this one saw nothing.
    assert_eq!(server_calls, (0, 0));
    let call = newindex_raise::call("{forged}:n", "BUSY x");
    let sent: Vec<Vec<u8>> = call
        .command()
        .args_iter()
        .take(1)
        .filter_map(|argument| match argument {
            redis::Arg::Simple(bytes) => Some(bytes.to_vec()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, [b"EVAL".to_vec()], "sent with its body");
}

/// A library function's returned error replies are marked too: its
/// `ERR Function not found` never makes the runtime load the library and
/// call again.
#[tokio::test]
async fn a_function_cannot_forge_a_refusal() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let deployed = forged_lib::LIBRARY
        .deploy(&mut connection, OnConflict::Refuse)
        .await
        .expect("deploy");
    assert_eq!(deployed, Deployed::Loaded);
    for (index, wording) in WORDINGS.iter().enumerate() {
        let counter = format!("{{forged}}:function:{index}");
        let result = forged_lib::forge_reply::call(&counter, wording)
            .retry_refusals(retries())
            .invoke(&mut connection)
            .await;
        assert_eq!(get(&mut connection, &counter).await, Some(1), "{wording}");
        match result {
            Err(error) => {
                assert!(
                    error.may_have_executed() && !error.is_refusal(),
                    "{error:?}"
                );
                assert_eq!(error.code(), Some(code_of(wording)));
            }
            Ok(reply) => panic!("{wording}: {reply:?}"),
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

/// How the table reaches the end of the script.
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
    CommandError,
}

impl Carrier {
    const ALL: [Carrier; 12] = [
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
            // A command's own error, caught and returned: `KEYS[3]` holds
            // a word, so INCR fails with `ERR value is not an integer`.
            Carrier::CommandError => "return redis.pcall('INCR', KEYS[3])".to_owned(),
        }
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
    fn source(&self) -> String {
        let message = if self.literal {
            format!("{:?}", self.wording)
        } else {
            "ARGV[2]".to_owned()
        };
        format!(
            "-- A generated script: counts its run, then ends with an error reply.\n\
             redis.call('INCR', KEYS[1])\n{}\n",
            self.carrier.lua(&self.maker.lua(&message))
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
        .prop_filter("crashes Redis 7.0", |case| !case.crashes_redis_7_0())
}

impl Case {
    /// Raising a table that has no `err` field with a `__newindex`
    /// metamethod crashes Redis 7.0.15 (it formats a null message; Valkey
    /// 8.1 answers `ERR unknown error`): the outer `setmetatable` replaces
    /// the `__index` that answered `err`.
    fn crashes_redis_7_0(&self) -> bool {
        self.maker == Maker::IndexMetatable && self.carrier == Carrier::RaisedNewindex
    }
}

/// The script of `case` as the macro would embed it, built at run time.
fn script_of(source: &str) -> (&'static Script, redis_script_analysis::Analysis) {
    let analysis = analyze(
        source,
        &Signature {
            keys: 3,
            args: 2,
            allow_unused: true,
            ..Signature::default()
        },
    );
    let sent_source = sent::script(source, &analysis, false);
    let sha1 = sha1_smol::Sha1::from(&sent_source).digest().to_string();
    let script = redis_script::__private_v2::new_script(
        "generated",
        "generated.lua",
        Box::leak(sent_source.into_boxed_str()),
        Box::leak(sha1.into_boxed_str()),
        analysis.read_only,
        false,
        analysis.error_codes.raises_unmarked,
    );
    (Box::leak(Box::new(script)), analysis)
}

fn call_of(script: &'static Script, keys: [&str; 3], wording: &str) -> Call<Value, Error> {
    let mut encoded = Keys::new();
    for key in keys {
        encoded.push(&key);
    }
    let mut call = start_call::<Value, Error>(script, encoded);
    push_argument(&mut call, &"err");
    push_argument(&mut call, &wording);
    call
}

/// How many generated scripts the test runs.
const GENERATED: u32 = 10_000;

/// How the calls of the generated scripts ended.
#[derive(Debug, Default)]
struct Endings {
    /// An error reply the script returned (marked).
    returned_errors: u32,
    /// An error the script raised (Redis's ` script: …` suffix).
    raised_errors: u32,
    /// An error with neither: raised past the suffix.
    unmarked_errors: u32,
    replies: u32,
}

#[test]
fn generated_error_replies_never_pass_for_refusals() {
    let server = RedisServer::start();
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
        let (script, analysis) = script_of(&source);
        let keys = [
            format!("{{gen}}:count:{index}"),
            format!("{{gen}}:hash:{index}"),
            "{gen}:word".to_owned(),
        ];
        let keys = [keys[0].as_str(), keys[1].as_str(), keys[2].as_str()];
        let connection = &mut *connection.borrow_mut();
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
            for round in 1..=2 {
                let result = call_of(script, keys, case.wording)
                    .retry_refusals(retries())
                    .invoke(connection)
                    .await;
                let executions = get(connection, keys[0]).await;
                prop_assert_eq!(
                    executions,
                    Some(round),
                    "ran once per call: {:?}\n{}",
                    result,
                    source
                );
                check_outcome(&case, &analysis, &result, &source, &mut ends.borrow_mut())?;
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
        "{total} generated scripts over {} combinations of route and carrier, each run twice \
         on {}: {ends:?}; no reply taken for a refusal, every code foreseen",
        combinations.len(),
        server.binary().display()
    );
    assert_eq!(total, GENERATED);
    // Every combination but the one that crashes Redis 7.0.
    assert_eq!(
        combinations.len(),
        Maker::ALL.len() * Carrier::ALL.len() - 1
    );
    // The generator reaches every way a call can end, each many times.
    for (what, count) in [
        ("returned errors", ends.returned_errors),
        ("raised errors", ends.raised_errors),
        ("unmarked raised errors", ends.unmarked_errors),
        ("replies", ends.replies),
    ] {
        assert!(count >= 500, "only {count} {what}: {ends:?}");
    }
}

/// The promises about one call: an error says it may have run, and the
/// code of an error the script did not raise with Redis's suffix is one
/// the analysis said the script could end with.
fn check_outcome(
    case: &Case,
    analysis: &redis_script_analysis::Analysis,
    result: &Result<Value, Error>,
    source: &str,
    ends: &mut Endings,
) -> Result<(), TestCaseError> {
    let error = match result {
        Ok(_) => {
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
    let code = error.code().unwrap_or_default();
    let codes = &analysis.error_codes;
    if error.location().is_some() {
        ends.raised_errors += 1;
        return Ok(());
    }
    prop_assert!(
        codes.may_return(code),
        "the analysis says {:?}, the server delivered {}\n{}",
        codes,
        code,
        source
    );
    if case.carrier == Carrier::RaisedNewindex {
        prop_assert!(
            codes.raises_unmarked,
            "not seen as raising unmarked\n{}",
            source
        );
        ends.unmarked_errors += 1;
    } else {
        ends.returned_errors += 1;
    }
    Ok(())
}
