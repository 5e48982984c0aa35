//! Scripts in pipelines and transactions: never NOSCRIPT, never reordered;
//! a transaction and a pipeline send each script's body once.

use redis::aio::ConnectionLike;
use redis_script::{Batch, Error};
use redis_script_test::{RedisCluster, RedisServer, Stats};
use redis_script_tests::{release_lock, transfer};

async fn seed<C: ConnectionLike>(connection: &mut C, keys: &[&str]) {
    for key in keys {
        let () = redis::cmd("SET")
            .arg(*key)
            .arg(100)
            .query_async(connection)
            .await
            .expect("SET");
    }
}

/// Three transfers of one script after `SCRIPT FLUSH`, in order: in a
/// transaction or a pipeline the first carries the body and the others
/// use the cached SHA.
async fn repeated_script_in_a_cold_batch<C: ConnectionLike>(
    connection: &mut C,
    stats: &dyn Stats,
    mut batch: Batch,
    expected_eval_evalsha: (u64, u64),
) {
    seed(connection, &["{b}:a"]).await;
    stats.script_flush();
    stats.reset_stats();
    let handles: Vec<_> = (0..3)
        .map(|_| {
            batch
                .add(transfer::call("{b}:a", "{b}:b", 10))
                .expect("same slot")
        })
        .collect();
    let mut replies = batch.run(connection).await.expect("batch runs");
    let balances: Vec<(i64, i64)> = handles
        .into_iter()
        .map(|handle| replies.take(handle).expect("transfer reply"))
        .collect();
    assert_eq!(balances, vec![(90, 10), (80, 20), (70, 30)], "in order");
    assert_eq!(
        (
            stats.calls("eval"),
            stats.calls("evalsha"),
            stats.calls("script|load")
        ),
        (expected_eval_evalsha.0, expected_eval_evalsha.1, 0),
        "(eval, evalsha, script|load)"
    );
}

#[tokio::test]
async fn standalone_pipeline_sends_the_body_once() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &server, Batch::pipeline(), (1, 2)).await;
}

#[tokio::test]
async fn standalone_transaction_sends_the_body_once() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &server, Batch::transaction(), (1, 2)).await;
}

#[tokio::test]
async fn cluster_pipeline_sends_the_body_once() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &cluster, Batch::pipeline(), (1, 2)).await;

    // Many keys of one slot, two scripts, in one pipeline.
    seed(&mut connection, &["{many}:1", "{many}:2", "{many}:3"]).await;
    cluster.script_flush();
    cluster.reset_stats();
    let mut batch = Batch::pipeline();
    let mut transfers = Vec::new();
    for (from, to) in [
        ("{many}:1", "{many}:2"),
        ("{many}:2", "{many}:3"),
        ("{many}:3", "{many}:1"),
    ] {
        transfers.push(batch.add(transfer::call(from, to, 1)).expect("same slot"));
    }
    let release = batch
        .add(release_lock::call("lock:{many}", "nobody"))
        .expect("same slot");
    let mut replies = batch.run(&mut connection).await.expect("pipeline runs");
    for handle in transfers {
        replies.take(handle).expect("no NOSCRIPT");
    }
    assert_eq!(replies.take(release).expect("release"), 0);
    assert_eq!((cluster.calls("eval"), cluster.calls("evalsha")), (2, 2));
}

#[tokio::test]
async fn cluster_transaction_sends_the_body_once() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &cluster, Batch::transaction(), (1, 2)).await;
}

#[tokio::test]
async fn errors_are_per_command_and_name_the_script() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    seed(&mut connection, &["{e}:a"]).await;
    let mut batch = Batch::pipeline();
    let too_much = batch
        .add(transfer::call("{e}:a", "{e}:b", 1_000))
        .expect("same slot");
    let ok = batch
        .add(transfer::call("{e}:a", "{e}:b", 1))
        .expect("same slot");
    let plain = batch.add_command::<i64>(redis::cmd("GET").arg("{e}:b").to_owned());
    let released = batch
        .add(release_lock::call("lock:{e}", "nobody"))
        .expect("one key");
    let mut replies = batch.run(&mut connection).await.expect("batch runs");
    match replies.take(too_much) {
        Err(Error::Script {
            operation: script,
            code,
            ..
        }) => {
            assert_eq!((script, code.as_str()), ("transfer", "INSUFFICIENT"))
        }
        other => panic!("expected the script's error, got {other:?}"),
    }
    assert_eq!(replies.take(ok).expect("second transfer"), (99, 1));
    assert_eq!(replies.take(plain).expect("GET"), 1);
    assert_eq!(replies.take(released).expect("release"), 0);
}

#[test]
fn cross_slot_calls_are_refused_when_added() {
    let mut batch = Batch::transaction();
    let error = batch
        .add(transfer::call("a", "b", 1))
        .expect_err("different slots");
    assert!(matches!(
        error,
        Error::CrossSlot {
            operation: "transfer",
            ..
        }
    ));
    assert!(batch.is_empty());
}

#[tokio::test]
async fn a_handle_reads_only_the_replies_of_its_own_batch() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    seed(&mut connection, &["{h}:a"]).await;
    let mut first = Batch::pipeline();
    let mut second = Batch::pipeline();
    let moved = first
        .add(transfer::call("{h}:a", "{h}:b", 1))
        .expect("same slot");
    let read = second.add_command::<i64>(redis::cmd("GET").arg("{h}:a").to_owned());
    let _first_replies = first.run(&mut connection).await.expect("first batch");
    let mut second_replies = second.run(&mut connection).await.expect("second batch");
    match second_replies.take(moved) {
        Err(error @ Error::ForeignHandle { .. }) => assert!(error.may_have_executed()),
        other => panic!("a foreign handle must fail, got {other:?}"),
    }
    assert_eq!(second_replies.take(read).expect("GET"), 99);
}

/// Adds to a counter, exactly once per call.
#[redis_script::redis_script(path = "lua/exactly_once/incr_once.lua", keys = 1, exactly_once)]
async fn incr_once(counter: &str, amount: i64) -> i64;

/// A connection that gives up on a reply after 150 ms, and the server
/// paused for 600 ms: the first sends time out.
async fn paused(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let config = redis::AsyncConnectionConfig::new()
        .set_response_timeout(Some(std::time::Duration::from_millis(150)));
    let connection = server
        .client()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("connection");
    let mut admin = server.connection().await;
    // Every client (no mode: Redis 6.0 takes none).
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(600)
        .query_async(&mut admin)
        .await
        .expect("CLIENT PAUSE");
    connection
}

#[tokio::test]
async fn a_batch_of_exactly_once_calls_is_sent_again_after_a_timeout_and_runs_once() {
    let server = RedisServer::start();
    let mut batch = Batch::pipeline();
    let handles: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|amount| {
            batch
                .add(incr_once::call("{once}:counter", amount))
                .expect("same slot")
        })
        .collect();
    let mut connection = paused(&server).await;
    let mut replies = batch
        .run(&mut connection)
        .await
        .expect("sent again until it ran");
    let values: Vec<i64> = handles
        .into_iter()
        .map(|handle| replies.take(handle).expect("reply"))
        .collect();
    assert_eq!(values, [1, 3, 7], "the first execution's replies");
    let mut check = server.connection().await;
    assert_eq!(
        redis_script_tests::get(&mut check, "{once}:counter").await,
        Some(7),
        "each call ran once"
    );
}

#[tokio::test]
async fn a_batch_with_other_commands_is_never_sent_again() {
    let server = RedisServer::start();
    let mut batch = Batch::pipeline();
    let _once = batch
        .add(incr_once::call("{mixed}:counter", 1))
        .expect("same slot");
    let _plain = batch.add_command::<i64>(redis::cmd("INCR").arg("{mixed}:plain").to_owned());
    let mut connection = paused(&server).await;
    match batch.run(&mut connection).await {
        Err(error @ Error::Timeout { .. }) => assert!(error.may_have_executed()),
        other => panic!("a timeout was expected, got {other:?}"),
    }
    // Once the pause is over, the one send has run, once.
    tokio::time::sleep(std::time::Duration::from_millis(900)).await;
    let mut check = server.connection().await;
    assert_eq!(
        redis_script_tests::get(&mut check, "{mixed}:plain").await,
        Some(1)
    );
    assert_eq!(
        redis_script_tests::get(&mut check, "{mixed}:counter").await,
        Some(1)
    );
}
