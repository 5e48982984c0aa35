//! Faults a test injects with the crate's methods, each with a typed call
//! that lives through it, and the execution counter that tells how often a
//! script's body really ran.

use std::time::Duration;

use redis_script::{Error, redis_script};
use redis_script_test::{Data, RedisCluster, Stats, TestDb};

/// Adds `by` to `counter` (one `INCRBY` per run of the body).
#[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
async fn add(counter: &str, by: i64) -> i64;

/// [`add`], declared `exactly_once`: a call sent again is answered from
/// its record.
#[redis_script(path = "../lua/counter_increment.lua", keys = 1, exactly_once)]
async fn add_once(counter: &str, by: i64) -> i64;

/// A connection that gives up on a reply after 100 ms.
async fn impatient(db: &TestDb) -> redis::aio::MultiplexedConnection {
    let config =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_millis(100)));
    db.client()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("connect")
}

#[tokio::test]
async fn a_timed_out_call_still_runs_and_only_exactly_once_makes_a_retry_harmless() {
    let db = TestDb::own_server();
    let server = db.server();
    let mut connection = impatient(&db).await;
    add(&mut connection, "warm", 0)
        .await
        .expect("load the script");
    add_once(&mut connection, "warm", 0)
        .await
        .expect("load the script");

    // A plain script: the client times out, sends the same request again,
    // and the body runs twice once the pause ends.
    server.reset_stats();
    server.pause_clients(Duration::from_millis(400));
    let timed_out = add(&mut connection, "plain", 5).await;
    assert!(
        matches!(&timed_out, Err(error @ Error::Timeout { .. }) if error.may_have_executed()),
        "{timed_out:?}"
    );
    let retried = add(&mut connection, "plain", 5).await;
    // The retry may itself time out while the pause lasts.
    let mut after = db.connection().await;
    let _: () = redis::cmd("PING")
        .query_async(&mut after)
        .await
        .expect("PING");
    assert!(retried.is_ok() || matches!(retried, Err(Error::Timeout { .. })));
    let found = db.state().await;
    assert_eq!(
        found.get("plain").map(|entry| &entry.data),
        Some(&Data::String("10".into()))
    );
    assert_eq!(server.calls("incrby"), 2, "the body ran twice");

    // Declared exactly_once: the runtime sends the same call again after
    // the timeout, and the body runs once.
    server.reset_stats();
    server.pause_clients(Duration::from_millis(400));
    let once = add_once(&mut connection, "once", 5).await;
    assert_eq!(once.ok(), Some(5));
    assert_eq!(server.calls("incrby"), 1, "the body ran once");
    assert!(server.calls("evalsha") >= 2, "the call was sent again");
}

#[tokio::test]
async fn dropped_connections_fail_the_calls_on_them() {
    let db = TestDb::own_server();
    let mut connection = db.connection().await;
    add(&mut connection, "c", 1).await.expect("first call");
    assert!(db.server().drop_client_connections() >= 1);
    let failed = add(&mut connection, "c", 1).await;
    assert!(
        matches!(failed, Err(Error::Connection { .. })),
        "{failed:?}"
    );
    let mut fresh = db.connection().await;
    assert_eq!(add(&mut fresh, "c", 1).await.expect("a new connection"), 2);
}

#[tokio::test]
async fn a_crash_loses_data_and_scripts_and_the_next_call_loads_the_script_again() {
    let mut db = TestDb::own_server();
    let mut connection = db.connection().await;
    add(&mut connection, "c", 1).await.expect("first call");
    let server = db.server_mut().expect("its own server");
    server.crash_and_restart();
    server.reset_stats();
    let mut fresh = db.connection().await;
    assert_eq!(add(&mut fresh, "c", 1).await.expect("after the crash"), 1);
    assert_eq!(
        (db.server().calls("evalsha"), db.server().calls("eval")),
        (1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_calls_live_through_a_failover_and_a_slot_migration() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    let key = "jobs:{tenant-7}";
    let slot = redis_script::cluster::key_slot(b"tenant-7");
    assert_eq!(add(&mut connection, key, 1).await.expect("before"), 1);

    let new_primary = tokio::task::block_in_place(|| cluster.fail_over_slot(slot));
    assert_eq!(cluster.node_for_slot(slot).port(), new_primary);
    assert_eq!(
        add(&mut connection, key, 1)
            .await
            .expect("after the failover"),
        2
    );

    let other = cluster
        .primaries()
        .into_iter()
        .map(|primary| primary.port())
        .find(|&port| port != new_primary)
        .expect("another primary");
    tokio::task::block_in_place(|| cluster.migrate_slot(slot, other));
    assert_eq!(cluster.node_for_slot(slot).port(), other);
    assert_eq!(
        add(&mut connection, key, 1)
            .await
            .expect("after the migration"),
        3
    );
}
