//! Scripts in pipelines and transactions: never NOSCRIPT, never reordered;
//! a transaction sends each body once, a pipeline with every call.

use redis::aio::ConnectionLike;
use redis_script::{Batch, Error};
use redis_script_testkit::{RedisCluster, RedisServer, Stats};
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
/// transaction the first carries the body and the others use the cached
/// SHA; in a pipeline (not atomic) every one carries the body.
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
async fn standalone_pipeline_sends_the_body_with_every_call() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &server, Batch::pipeline(), (3, 0)).await;
}

#[tokio::test]
async fn standalone_transaction_sends_the_body_once() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &server, Batch::transaction(), (1, 2)).await;
}

#[tokio::test]
async fn cluster_pipeline_sends_the_body_with_every_call() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    repeated_script_in_a_cold_batch(&mut connection, &cluster, Batch::pipeline(), (3, 0)).await;

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
    assert_eq!((cluster.calls("eval"), cluster.calls("evalsha")), (4, 0));
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
        Err(Error::Script { script, code, .. }) => {
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
            script: "transfer",
            ..
        }
    ));
    assert!(batch.is_empty());
}
