//! Typed calls, the NOSCRIPT → EVAL cold path, cross-slot refusal and
//! script errors, each on a standalone server and on a cluster.

use redis::aio::ConnectionLike;
use redis_script::Error;
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, Stats};
use redis_script_tests::{get, release_lock, transfer};

on_both_backends!(
    replicas = 1;
    typed_multi_key_call_with_hash_tag,
    cold_call_costs_one_evalsha_and_one_eval,
    cross_slot_call_is_refused_before_sending,
    script_errors_carry_the_script_name_and_code,
);

async fn set<C: ConnectionLike + Send>(connection: &mut C, key: &str, value: i64) {
    let () = redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query_async(connection)
        .await
        .expect("SET");
}

fn script_calls(stats: &dyn Stats) -> (u64, u64, u64) {
    (
        stats.calls("evalsha"),
        stats.calls("eval"),
        stats.calls("script|load"),
    )
}

async fn typed_multi_key_call_with_hash_tag<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    set(connection, "{account-7}:checking", 100).await;
    let balances = transfer(
        connection,
        "{account-7}:checking",
        "{account-7}:savings",
        30,
    )
    .await
    .expect("transfer between keys of one hash tag");
    assert_eq!(balances, (70, 30));
    assert_eq!(get(connection, "{account-7}:savings").await, Some(30));

    let token = "owner-1";
    let () = redis::cmd("SET")
        .arg("lock:{order-9}")
        .arg(token)
        .query_async(connection)
        .await
        .expect("SET lock");
    assert_eq!(
        release_lock(connection, "lock:{order-9}", "intruder")
            .await
            .expect("release"),
        0
    );
    assert_eq!(
        release_lock(connection, "lock:{order-9}", token)
            .await
            .expect("release"),
        1
    );
}

async fn cold_call_costs_one_evalsha_and_one_eval<C: ConnectionLike + Send>(
    connection: &mut C,
    stats: &dyn Stats,
) {
    set(connection, "{cold}:from", 10).await;
    stats.script_flush();
    stats.reset_stats();

    transfer(connection, "{cold}:from", "{cold}:to", 1)
        .await
        .expect("cold call succeeds after SCRIPT FLUSH");
    assert_eq!(
        script_calls(stats),
        (1, 1, 0),
        "cold: (evalsha, eval, script|load)"
    );

    transfer(connection, "{cold}:from", "{cold}:to", 1)
        .await
        .expect("warm call");
    assert_eq!(
        script_calls(stats),
        (2, 1, 0),
        "warm: (evalsha, eval, script|load)"
    );
    assert_eq!(get(connection, "{cold}:to").await, Some(2));
}

async fn cross_slot_call_is_refused_before_sending<C: ConnectionLike + Send>(
    connection: &mut C,
    stats: &dyn Stats,
) {
    stats.reset_stats();
    let error = transfer(connection, "account:1", "account:2", 5)
        .await
        .expect_err("keys in different slots");
    match &error {
        Error::CrossSlot {
            operation: script,
            keys,
            ..
        } => {
            assert_eq!(*script, "transfer");
            let described: Vec<(&str, u16)> = keys
                .iter()
                .map(|entry| (entry.key.as_str(), entry.slot))
                .collect();
            assert_eq!(
                described,
                vec![
                    ("account:1", redis_script::cluster::key_slot(b"account:1")),
                    ("account:2", redis_script::cluster::key_slot(b"account:2")),
                ]
            );
        }
        other => panic!("expected CrossSlot, got {other:?}"),
    }
    assert!(!error.may_have_executed());
    assert!(
        error.to_string().contains("\"account:1\" → slot"),
        "{error}"
    );
    assert_eq!(script_calls(stats), (0, 0, 0), "nothing reached the server");
}

async fn script_errors_carry_the_script_name_and_code<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    set(connection, "{err}:from", 3).await;
    let error = transfer(connection, "{err}:from", "{err}:to", 5)
        .await
        .expect_err("insufficient balance");
    match &error {
        Error::Script {
            operation: script,
            code,
            message,
            location,
            ..
        } => {
            assert_eq!(
                (*script, code.as_str(), message.as_str()),
                ("transfer", "INSUFFICIENT", "3")
            );
            assert_eq!(*location, None, "a returned error_reply carries no line");
        }
        other => panic!("expected a script error, got {other:?}"),
    }
    assert_eq!(error.code(), Some("INSUFFICIENT"));

    // A runtime error raised by a command inside the script.
    let () = redis::cmd("HSET")
        .arg("{err}:hash")
        .arg("f")
        .arg("v")
        .query_async(connection)
        .await
        .expect("HSET");
    let error = transfer(connection, "{err}:hash", "{err}:to", 1)
        .await
        .expect_err("GET on a hash fails");
    assert_eq!(error.operation(), "transfer");
    assert_eq!(error.code(), Some("WRONGTYPE"), "{error}");
}

#[tokio::test]
async fn connection_manager_runs_scripts() {
    let server = RedisServer::start();
    let mut manager =
        redis::aio::ConnectionManager::new_with_config(server.client(), patience::manager_config())
            .await
            .expect("connection manager");
    set(&mut manager, "{m}:from", 5).await;
    let balances = transfer(&mut manager, "{m}:from", "{m}:to", 5)
        .await
        .expect("transfer");
    assert_eq!(balances, (0, 5));
    let released: bool = redis_script_tests::release_lock_as(&mut manager, "lock:{m}", "nobody")
        .await
        .expect("generic reply type");
    assert!(!released);
    let released: i64 = redis_script_tests::release_lock_where(&mut manager, "lock:{m}", "nobody")
        .await
        .expect("a reply type bounded in a where clause");
    assert_eq!(released, 0);
    let prepared = redis_script_tests::release_lock_where::call::<i64>("lock:{m}", "nobody");
    assert_eq!(prepared.invoke(&mut manager).await.expect("prepared"), 0);
}

#[tokio::test]
async fn cluster_call_survives_script_flush_on_every_node() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    for round in 0..3 {
        cluster.script_flush();
        let key = format!("{{flush-{round}}}:a");
        set(&mut connection, &key, 1).await;
        let balances = transfer(&mut connection, &key, &format!("{{flush-{round}}}:b"), 1)
            .await
            .expect("call after SCRIPT FLUSH");
        assert_eq!(balances, (0, 1));
    }
}

/// A loop over two declared keys (`for i = 1, #KEYS`), without a slice
/// parameter.
#[redis_script::redis_script(path = "lua/corpus/expire_each_key.lua", keys = 2)]
async fn expire_each_key(first: &str, second: &str, ttl_ms: u64) -> i64;

/// `table.unpack` tested before use, never called on Lua 5.1.
#[redis_script::redis_script(
    path = "lua/corpus/unpack_across_lua_versions.lua",
    keys = 1,
    // The list is small here; the finding is not what this test is about.
    allow(unbounded_unpack)
)]
async fn count_list(list: &str) -> i64;

#[tokio::test]
async fn dynamic_reads_of_fixed_keys_and_feature_tests_build_and_run() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    set(&mut connection, "{e}:a", 1).await;
    set(&mut connection, "{e}:b", 2).await;
    let expired = expire_each_key(&mut connection, "{e}:a", "{e}:b", 60_000)
        .await
        .expect("expire_each_key");
    assert_eq!(expired, 2);
    let ttl: i64 = redis::cmd("PTTL")
        .arg("{e}:b")
        .query_async(&mut connection)
        .await
        .expect("PTTL");
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");

    let () = redis::cmd("RPUSH")
        .arg("list")
        .arg(&["x", "y", "z"])
        .query_async(&mut connection)
        .await
        .expect("RPUSH");
    let counted = count_list(&mut connection, "list")
        .await
        .expect("count_list");
    assert_eq!(counted, 3);
}
