//! Every call ends: a server that stops answering (frozen with `SIGSTOP`,
//! its connections left open) ends each call at its deadline with
//! `Timeout` ("may have run"), whatever the connection's own settings:
//! redis-rs's default cluster client has no response timeout at all.

use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis::cluster::ClusterClientBuilder;
use redis_script::{Batch, DEFAULT_DEADLINE, Error};
use redis_script_test::{RedisCluster, RedisServer};
use redis_script_tests::transfer;

/// How long past its deadline a call may take to end: the runtime drops
/// the request at once, so only scheduling can delay it.
const SLACK: Duration = Duration::from_secs(2);

/// The call ended at its deadline, with a timeout that may have run.
fn ended_at_deadline<T: std::fmt::Debug>(
    result: Result<T, Error>,
    took: Duration,
    deadline: Duration,
) {
    match result {
        Err(error @ Error::Timeout { .. }) => {
            assert!(error.may_have_executed(), "{error:?}");
            assert!(
                error.to_string().contains("deadline"),
                "the message names the deadline: {error}"
            );
        }
        other => panic!("a timeout was expected, got {other:?}"),
    }
    assert!(
        took >= deadline && took < deadline + SLACK,
        "ended after {took:?}, the deadline is {deadline:?}"
    );
}

/// Sends `GET key` on `connection` and waits up to `limit` for its reply:
/// `true` when none came (the connection itself never gives up).
async fn hangs<C: ConnectionLike>(connection: &mut C, key: &str, limit: Duration) -> bool {
    let get = redis::cmd("GET").arg(key).to_owned();
    tokio::time::timeout(limit, connection.req_packed_command(&get))
        .await
        .is_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_cluster_primary_ends_calls_at_their_deadline() {
    let cluster = RedisCluster::start(3, 0);
    // redis-rs's defaults: no response timeout, its own retries.
    let mut connection = ClusterClientBuilder::new(cluster.urls())
        .build()
        .expect("cluster client")
        .get_async_connection()
        .await
        .expect("cluster connection");
    let (source, destination) = ("{frozen}:source", "{frozen}:destination");
    let () = redis::cmd("SET")
        .arg(source)
        .arg(10)
        .query_async(&mut connection)
        .await
        .expect("SET");
    let primary = cluster.node_for_slot(redis_script::cluster::key_slot(source.as_bytes()));
    primary.freeze();

    assert!(
        hangs(&mut connection, source, Duration::from_secs(3)).await,
        "redis-rs alone waits for the frozen primary"
    );
    let deadline = Duration::from_millis(800);
    let began = Instant::now();
    let result = redis_script_tests::transfer::call(source, destination, 1)
        .deadline(deadline)
        .invoke(&mut connection)
        .await;
    ended_at_deadline(result, began.elapsed(), deadline);

    // Without a deadline of its own, a call gets the default one.
    let began = Instant::now();
    let result = transfer(&mut connection, source, destination, 1).await;
    ended_at_deadline(result, began.elapsed(), DEFAULT_DEADLINE);

    primary.thaw();
    let mut answered = None;
    for _ in 0..50 {
        match transfer(&mut connection, source, destination, 1).await {
            Ok(balances) => {
                answered = Some(balances);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let (left, moved) = answered.expect("the primary answers again once thawed");
    // The calls that timed out may have run: each moved 1 at most.
    assert_eq!(left + moved, 10, "({left}, {moved})");
}

#[tokio::test]
async fn a_frozen_server_ends_calls_and_batches_at_their_deadline() {
    let server = RedisServer::start();
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let mut connection = server
        .client()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("connection without a response timeout");
    server.freeze();
    assert!(hangs(&mut connection, "{f}:source", Duration::from_secs(1)).await);

    let deadline = Duration::from_millis(500);
    let began = Instant::now();
    let result = redis_script_tests::transfer::call("{f}:source", "{f}:destination", 1)
        .deadline(deadline)
        .invoke(&mut connection)
        .await;
    ended_at_deadline(result, began.elapsed(), deadline);

    let mut batch = Batch::pipeline().deadline(deadline);
    let _moved = batch
        .add(redis_script_tests::transfer::call(
            "{f}:source",
            "{f}:destination",
            1,
        ))
        .expect("same slot");
    let began = Instant::now();
    let result = batch.run(&mut connection).await;
    ended_at_deadline(result, began.elapsed(), deadline);
    server.thaw();
}
