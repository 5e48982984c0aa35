//! Keys derived from a hash-tagged prefix: one script per derivation form
//! (a KEYS prefix, an argument declared `#[key_prefix]`, through a local,
//! through helper functions, every key of a variadic list), an
//! `exactly_once` script and a library function, each run on a standalone
//! server and on a 3-primary cluster; and an untagged prefix refused
//! before anything is sent.

use redis::aio::ConnectionLike;
use redis_script::cluster::key_slot;
use redis_script::{Error, KeyPrefixProblem, redis_library, redis_script};
use redis_script_test::Stats;

use crate::releases::lacks_functions;

#[redis_script(path = "lua/derived/keys_prefix.lua", keys = 1)]
async fn keys_prefix(prefix: &str, name: &str, value: &str) -> String;

#[redis_script(path = "lua/derived/argv_prefix.lua", keys = 1)]
async fn argv_prefix(counter: &str, #[key_prefix] prefix: &str, id: &str, payload: &str) -> i64;

#[redis_script(path = "lua/derived/through_local.lua", keys = 1)]
async fn through_local(prefix: &str, id: &str, payload: &str) -> String;

#[redis_script(path = "lua/derived/through_helper.lua", keys = 1)]
async fn through_helper(prefix: &str, id: &str, payload: &str) -> i64;

#[redis_script(path = "lua/derived/every_key.lua", keys = 1)]
async fn every_key(prefixes: &[&str], id: &str) -> i64;

#[redis_script(path = "../lua/enqueue_job.lua", keys = 1, exactly_once)]
async fn enqueue_once(queue: &str, id: &str, payload: &str) -> i64;

#[redis_library(path = "lua/derived/queue_lib.lua")]
mod derived_queue {
    #[function(keys = 1)]
    pub async fn push_job(prefix: &str, id: &str, payload: &str) -> i64;
}

on_both_backends!(
    every_derivation_form_runs_in_the_prefix_slot,
    exactly_once_records_in_the_prefix_slot,
    a_library_function_derives_keys,
    an_untagged_prefix_is_refused_before_sending,
    an_argument_prefix_in_another_slot_is_refused,
);

async fn hget<C: ConnectionLike + Send>(
    connection: &mut C,
    key: &str,
    field: &str,
) -> Option<String> {
    redis::cmd("HGET")
        .arg(key)
        .arg(field)
        .query_async(connection)
        .await
        .expect("HGET")
}

async fn every_derivation_form_runs_in_the_prefix_slot<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    let stored = keys_prefix(connection, "kp:{a}:", "name", "v1")
        .await
        .expect("KEYS prefix");
    assert_eq!(stored, "v1");

    let count = argv_prefix(connection, "ap:{b}:count", "ap:{b}:", "7", "p7")
        .await
        .expect("ARGV prefix");
    assert_eq!(count, 1);
    assert_eq!(
        hget(connection, "ap:{b}:job:7", "payload").await.as_deref(),
        Some("p7")
    );

    let payload = through_local(connection, "tl:{c}:", "8", "p8")
        .await
        .expect("through a local");
    assert_eq!(payload, "p8");

    let ids = through_helper(connection, "th:{d}:", "9", "p9")
        .await
        .expect("through helpers");
    assert_eq!(ids, 1);
    assert_eq!(
        hget(connection, "th:{d}:job:9", "payload").await.as_deref(),
        Some("p9")
    );

    let pushed = every_key(connection, &["ek:{e}:one:", "ek:{e}:two:"], "10")
        .await
        .expect("every key a prefix");
    assert_eq!(pushed, 2);
}

async fn exactly_once_records_in_the_prefix_slot<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    let call = enqueue_once::call("eo:{jobs}:", "1", "payload");
    let first = call.invoke(connection).await.expect("first send");
    // The same call sent again replays the first reply; a new enqueue
    // of the same job finds it.
    let again = call.invoke(connection).await.expect("second send");
    assert_eq!((first, again), (1, 1));
    let other = enqueue_once(connection, "eo:{jobs}:", "1", "payload")
        .await
        .expect("another call");
    assert_eq!(other, 0);
    assert_eq!(call.slot().ok().flatten(), Some(key_slot(b"eo:{jobs}:")));
}

async fn a_library_function_derives_keys<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    if lacks_functions(connection, "derived_keys::a_library_function_derives_keys").await {
        return;
    }
    let length = derived_queue::push_job(connection, "lib:{q}:", "1", "p")
        .await
        .expect("function with derived keys");
    assert_eq!(length, 1);
    assert_eq!(
        hget(connection, "lib:{q}:job:1", "payload")
            .await
            .as_deref(),
        Some("p")
    );
    let untagged = derived_queue::push_job(connection, "lib:q:", "2", "p").await;
    assert!(
        matches!(
            untagged,
            Err(Error::KeyPrefix {
                reason: KeyPrefixProblem::NoHashTag,
                ..
            })
        ),
        "{untagged:?}"
    );
}

async fn an_untagged_prefix_is_refused_before_sending<C: ConnectionLike + Send>(
    connection: &mut C,
    stats: &dyn Stats,
) {
    stats.reset_stats();
    let error = through_local(connection, "queue:emails:", "1", "p")
        .await
        .expect_err("a prefix without a hash tag");
    match &error {
        Error::KeyPrefix {
            operation: script,
            prefix,
            parameter,
            reason,
            ..
        } => {
            assert_eq!(
                (*script, prefix.as_str(), parameter.as_str(), *reason),
                (
                    "through_local",
                    "queue:emails:",
                    "KEYS[1]",
                    KeyPrefixProblem::NoHashTag
                )
            );
        }
        other => panic!("expected KeyPrefix, got {other:?}"),
    }
    assert!(!error.may_have_executed());
    assert!(error.to_string().contains("has no {hash tag}"), "{error}");
    let error = argv_prefix(connection, "count:{x}", "jobs:", "1", "p")
        .await
        .expect_err("an argument prefix without a hash tag");
    assert!(
        matches!(&error, Error::KeyPrefix { parameter, .. } if parameter == "ARGV[1]"),
        "{error:?}"
    );
    let sent = stats.calls("evalsha") + stats.calls("eval") + stats.calls("evalsha_ro");
    assert_eq!(sent, 0, "nothing reached the server");
}

async fn an_argument_prefix_in_another_slot_is_refused<C: ConnectionLike + Send>(
    connection: &mut C,
    stats: &dyn Stats,
) {
    stats.reset_stats();
    let error = argv_prefix(connection, "count:{x}", "jobs:{y}:", "1", "p")
        .await
        .expect_err("prefix and key in different slots");
    match &error {
        Error::CrossSlot { keys, .. } => {
            let slots: Vec<u16> = keys.iter().map(|entry| entry.slot).collect();
            assert_eq!(slots, [key_slot(b"count:{x}"), key_slot(b"jobs:{y}:")]);
        }
        other => panic!("expected CrossSlot, got {other:?}"),
    }
    assert_eq!(stats.calls("evalsha") + stats.calls("eval"), 0);
}

/// On a standalone server the caller may let an untagged prefix go.
#[tokio::test]
async fn a_standalone_call_may_allow_untagged_prefixes() {
    let server = redis_script_test::RedisServer::start();
    let mut connection = server.connection().await;
    let payload = through_local::call("queue:emails:", "1", "p")
        .allow_untagged_prefixes()
        .invoke(&mut connection)
        .await
        .expect("allowed on a standalone server");
    assert_eq!(payload, "p");
}
