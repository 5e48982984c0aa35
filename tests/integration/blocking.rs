//! The blocking calls (`Call::invoke_blocking`, `Batch::run_blocking`,
//! `preload_blocking`) on redis-rs's synchronous connections: the same round
//! trips and errors as the asynchronous calls.

use redis::Commands;
use redis_script::{Batch, Error, Failure, preload_blocking};
use redis_script_examples::workflows::versioned::{VersionError, WriteOutcome, versioned_set};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, Stats};
use redis_script_tests::{release_lock, transfer};

fn script_calls(stats: &dyn Stats) -> (u64, u64, u64) {
    (
        stats.calls("evalsha"),
        stats.calls("eval"),
        stats.calls("script|load"),
    )
}

#[test]
fn blocking_call_takes_the_cold_path_once_then_stays_warm() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let () = connection.set("{b}:from", 10).expect("SET");
    server.script_flush();
    server.reset_stats();

    let balances = transfer::call("{b}:from", "{b}:to", 3)
        .invoke_blocking(&mut connection)
        .expect("cold call");
    assert_eq!(balances, (7, 3));
    assert_eq!(script_calls(&server), (1, 1, 0), "cold: EVALSHA, then EVAL");

    let balances = transfer::call("{b}:from", "{b}:to", 3)
        .invoke_blocking(&mut connection)
        .expect("warm call");
    assert_eq!(balances, (4, 6));
    assert_eq!(script_calls(&server), (2, 1, 0), "warm: EVALSHA only");
}

#[test]
fn blocking_call_errors_are_the_same_as_async_ones() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let () = connection.set("{b}:poor", 1).expect("SET");

    let error = transfer::call("{b}:poor", "{b}:to", 5)
        .invoke_blocking(&mut connection)
        .expect_err("insufficient balance");
    assert!(
        matches!(&error, Error::Script { code, .. } if code == "INSUFFICIENT"),
        "{error:?}"
    );
    assert!(error.may_have_executed());

    let error = transfer::call("account:1", "account:2", 5)
        .invoke_blocking(&mut connection)
        .expect_err("keys in different slots");
    assert!(matches!(error, Error::CrossSlot { .. }), "{error:?}");

    // A typed script error, as `errors = VersionError` declares it.
    let outcome = versioned_set::call("{b}:doc", "{}", "", 0)
        .invoke_blocking(&mut connection)
        .expect("create");
    assert_eq!(outcome, WriteOutcome::Added { version: 1 });
    let failure = versioned_set::call("{b}:doc", "{}", "", 0)
        .invoke_blocking(&mut connection)
        .expect_err("the document exists");
    assert!(
        matches!(
            failure,
            Failure::Declared(VersionError::AlreadyExists { found: 1 })
        ),
        "{failure:?}"
    );
}

#[test]
fn blocking_batches_and_preload() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    server.script_flush();
    preload_blocking(&mut connection, &[&release_lock::SCRIPT, &transfer::SCRIPT])
        .expect("preload");
    let () = connection.set("{b}:lock", "token-1").expect("SET");
    let () = connection.set("{b}:from", 5).expect("SET");
    server.reset_stats();

    for mut batch in [Batch::pipeline(), Batch::transaction()] {
        let released = batch
            .add(release_lock::call("{b}:lock", "token-2"))
            .expect("same slot");
        let moved = batch
            .add(transfer::call("{b}:from", "{b}:to", 1))
            .expect("same slot");
        let mut replies = batch.run_blocking(&mut connection).expect("batch");
        assert_eq!(replies.take(released).expect("release"), 0, "not the owner");
        let (from, _) = replies.take(moved).expect("transfer");
        assert!(from < 5);
    }
    assert_eq!(
        script_calls(&server).2,
        0,
        "no SCRIPT LOAD after the preload"
    );
}

#[test]
fn blocking_call_on_the_synchronous_cluster_connection() {
    let cluster = RedisCluster::start(3, 1);
    let client = patience::cluster_builder(cluster.urls())
        .build()
        .expect("cluster client");
    let mut connection = client.get_connection().expect("cluster connection");
    let () = connection.set("{c}:from", 10).expect("SET");
    cluster.script_flush();

    for expected in [(9, 1), (8, 2)] {
        let balances = transfer::call("{c}:from", "{c}:to", 1)
            .invoke_blocking(&mut connection)
            .expect("call through the cluster connection");
        assert_eq!(balances, expected);
    }
    let error = transfer::call("account:1", "account:2", 1)
        .invoke_blocking(&mut connection)
        .expect_err("keys in different slots");
    assert!(!error.may_have_executed(), "{error:?}");
}
