//! Exactly-once calls on a standalone server and on a cluster: a call sent
//! again (the same `Call`, or the same caller id) returns the first
//! execution's reply without running the script again; the script sees its
//! own KEYS and ARGV; the record shares the slot of the call's keys, also
//! for keys without a hash tag and for keyless calls; every reply shape
//! replays exactly as Redis sent it the first time, in RESP2 and RESP3.

use std::time::Duration;

use redis::Value;
use redis::aio::ConnectionLike;
use redis_script::{CallId, Error, ScriptReply, redis_script};
use redis_script_test::patience;
use redis_script_test::{RedisServer, Stats};
use redis_script_tests::get;

/// Adds `amount` to `counter`; the new value.
#[redis_script(path = "lua/exactly_once/incr_once.lua", keys = 1, exactly_once)]
async fn incr_once(counter: &str, amount: i64) -> i64;

/// The same file without `exactly_once`.
#[redis_script(path = "lua/exactly_once/incr_once.lua", keys = 1)]
async fn incr(counter: &str, amount: i64) -> i64;

/// Records with a short TTL under another prefix, sent again at most once.
#[redis_script(
    path = "lua/exactly_once/incr_once.lua",
    keys = 1,
    exactly_once(ttl_secs = 30, prefix = "test:once:", retries = 1)
)]
async fn incr_once_configured(counter: &str, amount: i64) -> i64;

/// No keys of its own: `[#KEYS, #ARGV, ARGV…]`.
#[redis_script(
    path = "lua/exactly_once/keyless_once.lua",
    keys = 0,
    dynamic_keys,
    exactly_once
)]
async fn keyless_once(first: &str, second: &str) -> Value;

/// Writes, then raises `boom` at line 5.
#[redis_script(path = "lua/exactly_once/raise_once.lua", keys = 1, exactly_once)]
async fn raise_once(counter: &str) -> i64;

/// Every reply shape, exactly once.
#[redis_script(path = "lua/exactly_once/shapes.lua", keys = 1, exactly_once)]
async fn shapes_once(counter: &str, case: &str, bytes: &[u8]) -> Value;

/// Every reply shape, as the plain script replies.
#[redis_script(path = "lua/exactly_once/shapes.lua", keys = 1)]
async fn shapes(counter: &str, case: &str, bytes: &[u8]) -> Value;

/// The tagged replies of `shapes.lua`.
#[derive(Debug, PartialEq, ScriptReply)]
enum Decision {
    Allowed { count: u64 },
    Denied { count: u64, retry_ms: u64 },
}

/// The record key of `call` (its last key) and its TTL in milliseconds.
async fn record_of<T, E, C: ConnectionLike>(
    connection: &mut C,
    call: &redis_script::Call<T, E>,
) -> (String, i64) {
    let arguments: Vec<Vec<u8>> = call
        .command()
        .args_iter()
        .filter_map(|argument| match argument {
            redis::Arg::Simple(bytes) => Some(bytes.to_vec()),
            _ => None,
        })
        .collect();
    let key_count: usize = std::str::from_utf8(&arguments[2])
        .expect("numkeys")
        .parse()
        .expect("numkeys");
    let record = String::from_utf8(arguments[2 + key_count].clone()).expect("UTF-8 record key");
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&record)
        .query_async(connection)
        .await
        .expect("PTTL");
    (record, ttl)
}

on_both_backends!(
    a_call_sent_again_returns_the_first_reply,
    a_caller_id_makes_calls_from_anywhere_one_call,
    records_share_the_slot_of_keys_without_a_hash_tag,
    keyless_calls_see_their_own_keys_and_arguments,
    a_raised_error_is_recorded_and_keeps_its_line,
);

async fn a_call_sent_again_returns_the_first_reply<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    let call = incr_once::call("once:{a}", 5);
    assert!(call.call_id().is_some());
    let first = call.invoke(connection).await.expect("first send");
    let again = call.invoke(connection).await.expect("second send");
    assert_eq!((first, again), (5, 5));
    assert_eq!(get(connection, "once:{a}").await, Some(5), "ran once");

    // A new call is a new id: it runs.
    let next = incr_once(connection, "once:{a}", 5)
        .await
        .expect("new call");
    assert_eq!(next, 10);
    // The same file without `exactly_once` runs every time.
    let plain = incr::call("once:{a}", 1);
    assert_eq!(plain.call_id(), None);
    plain.invoke(connection).await.expect("plain");
    plain.invoke(connection).await.expect("plain again");
    assert_eq!(get(connection, "once:{a}").await, Some(12));

    // The record lives for the default TTL, in the call's slot.
    let (record, ttl) = record_of(connection, &call).await;
    assert!(record.starts_with("rs:once:{"), "{record}");
    assert!(
        record.ends_with(&format!("}}incr_once:{}", call.call_id().expect("id"))),
        "{record}"
    );
    assert_eq!(
        redis_script::cluster::key_slot(record.as_bytes()),
        redis_script::cluster::key_slot(b"once:{a}")
    );
    assert!((590_000..=600_000).contains(&ttl), "{ttl}");
}

async fn a_caller_id_makes_calls_from_anywhere_one_call<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    let id = CallId::new("order-7:charge");
    let first = incr_once::call_with_id(id.clone(), "caller:{b}", 3);
    let second = incr_once::call_with_id("order-7:charge", "caller:{b}", 3);
    assert_eq!(first.invoke(connection).await.expect("first"), 3);
    assert_eq!(second.invoke(connection).await.expect("second"), 3);
    assert_eq!(get(connection, "caller:{b}").await, Some(3));

    // Ids are per script: the same id of another script is another call.
    let other = incr_once_configured::call_with_id(id, "caller:{b}", 3);
    assert_eq!(other.invoke(connection).await.expect("other script"), 6);

    // The attribute's prefix and TTL, then a call's own TTL.
    let (record, ttl) = record_of(connection, &other).await;
    assert!(
        record.starts_with("test:once:{")
            && record.ends_with("}incr_once_configured:order-7:charge"),
        "{record}"
    );
    assert!((29_000..=30_000).contains(&ttl), "{ttl}");
    let short = incr_once::call_with_id(
        CallId::new("short").with_ttl(Duration::from_millis(1500)),
        "caller:{b}",
        1,
    );
    short.invoke(connection).await.expect("short TTL");
    let (_, ttl) = record_of(connection, &short).await;
    assert!((1..=1500).contains(&ttl), "{ttl}");
}

async fn records_share_the_slot_of_keys_without_a_hash_tag<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    for key in ["plain-counter", "another-plain-counter", "odd}{key"] {
        let call = incr_once::call(key, 2);
        assert_eq!(call.invoke(connection).await.expect(key), 2);
        assert_eq!(call.invoke(connection).await.expect(key), 2);
        let (record, ttl) = record_of(connection, &call).await;
        assert_eq!(
            redis_script::cluster::key_slot(record.as_bytes()),
            redis_script::cluster::key_slot(key.as_bytes()),
            "{key}"
        );
        assert!(ttl > 0, "{key}: the record exists");
        assert_eq!(get(connection, key).await, Some(2), "{key}");
    }
}

async fn keyless_calls_see_their_own_keys_and_arguments<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    // On a cluster the record routes the call: the id's hash tag puts it
    // with the counter the script writes.
    let call = keyless_once::call_with_id("{keyless}-1", "a", "b");
    let expected = Value::Array(vec![
        Value::Int(0),
        Value::Int(2),
        Value::BulkString(b"a".to_vec()),
        Value::BulkString(b"b".to_vec()),
    ]);
    assert_eq!(
        call.slot().expect("one slot"),
        Some(redis_script::cluster::key_slot(b"{keyless}"))
    );
    assert_eq!(call.invoke(connection).await.expect("first"), expected);
    assert_eq!(call.invoke(connection).await.expect("again"), expected);
    assert_eq!(get(connection, "{keyless}:counter").await, Some(1));
}

async fn a_raised_error_is_recorded_and_keeps_its_line<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    let call = raise_once::call("raise:{c}");
    for _ in 0..2 {
        let error = call.invoke(connection).await.expect_err("raises");
        let location = error.location().expect("the mark names the line");
        assert_eq!(location.line, 5, "{error}");
        assert_eq!(error.message(), Some("user_script:5: boom"), "{error}");
        assert!(error.may_have_executed(), "{error}");
    }
    // Redis keeps the writes made before an error, and the error is the
    // call's recorded reply: sent again, the call replays it.
    assert_eq!(get(connection, "raise:{c}").await, Some(1));
}

/// Every case of `shapes.lua`.
const SHAPES: &[&str] = &[
    "integer",
    "negative",
    "float",
    "big",
    "string",
    "empty_string",
    "bytes",
    "true",
    "false",
    "nil",
    "bare",
    "empty_table",
    "status",
    "ok",
    "ok_table",
    "error",
    "error_table",
    "allowed",
    "denied",
    "nil_hole",
    "false_hole",
    "nested",
    "deep_holes",
    "json",
    "map",
    "double",
    "count",
];

/// A reply as compared: the value, or the error's code and message (the
/// script names differ).
fn comparable(result: Result<Value, Error>) -> Result<Value, (Option<String>, Option<String>)> {
    result.map_err(|error| {
        (
            error.code().map(str::to_owned),
            error.message().map(str::to_owned),
        )
    })
}

/// Each shape from the plain script, then twice from one exactly-once
/// call: the three replies are equal, and the exactly-once call ran once.
async fn replays_every_shape<C: ConnectionLike + Send>(connection: &mut C, protocol: &str) {
    let bytes = [0u8, 255, b'\n', b'\r', 7];
    for case in SHAPES {
        // Each has its own counter, so that replies with the count agree.
        let plain_counter = format!("shapes:{{{protocol}}}:{case}:plain");
        let plain = comparable(shapes(connection, &plain_counter, case, &bytes).await);
        let counter = format!("shapes:{{{protocol}}}:{case}");
        let call = shapes_once::call(&counter, case, &bytes);
        let first = comparable(call.invoke(connection).await);
        let replay = comparable(call.invoke(connection).await);
        assert_eq!(
            first, plain,
            "{protocol} {case}: the wrapped script replies as the plain one"
        );
        assert_eq!(replay, first, "{protocol} {case}: the replay");
        assert_eq!(
            get(connection, &counter).await,
            Some(1),
            "{protocol} {case}: ran once"
        );
    }
}

#[tokio::test]
async fn every_reply_shape_replays_as_it_was_sent_resp2_and_resp3() {
    let server = RedisServer::start();
    replays_every_shape(&mut server.connection().await, "resp2").await;
    let resp3 = redis::Client::open(format!("{}?protocol=resp3", server.url()))
        .expect("RESP3 client")
        .get_multiplexed_async_connection_with_config(&patience::connection_config())
        .await
        .expect("RESP3 connection");
    replays_every_shape(&mut resp3.clone(), "resp3").await;
}

#[tokio::test]
async fn replayed_tagged_replies_decode_as_the_first() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    for (case, expected) in [
        ("allowed", Decision::Allowed { count: 1 }),
        (
            "denied",
            Decision::Denied {
                count: 3,
                retry_ms: 1500,
            },
        ),
    ] {
        let counter = format!("decision:{{d}}:{case}");
        let call = shapes_once::call(&counter, case, b"");
        let first: Decision =
            redis::from_redis_value(call.invoke(&mut connection).await.expect("first"))
                .expect("decodes");
        let replay: Decision =
            redis::from_redis_value(call.invoke(&mut connection).await.expect("replay"))
                .expect("decodes");
        assert_eq!((&first, &replay), (&expected, &expected), "{case}");
    }
}

#[tokio::test]
async fn a_cold_server_runs_the_wrapped_script_with_eval_once() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let call = incr_once::call("cold:{e}", 4);
    assert_eq!(call.invoke(&mut connection).await.expect("cold"), 4);
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut connection)
        .await
        .expect("SCRIPT FLUSH");
    assert_eq!(call.invoke(&mut connection).await.expect("cold again"), 4);
    assert_eq!(get(&mut connection, "cold:{e}").await, Some(4));
}
