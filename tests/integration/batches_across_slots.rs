//! A pipeline whose calls are in many slots of a cluster, sent with
//! `cluster::run_batch`: one transaction per slot to the slot's primary,
//! each script's body once per slot, replies in the order queued, the
//! calls of one slot in the order queued, under a `SCRIPT FLUSH` storm too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use redis_script::{Batch, Error, cluster, redis_script};
use redis_script_test::{RedisCluster, RedisServer, Stats};

#[redis_script(path = "lua/batch/append.lua", keys = 1)]
async fn append(list: &str, item: &str) -> i64;

/// How many lists (one per `{tag}`, so many slots) the calls spread over.
const LISTS: usize = 40;

fn list(index: usize) -> String {
    format!("list:{{t{}}}", index % LISTS)
}

/// A pipeline of `calls` appends over the lists, item `n` for the `n`-th
/// call, with a plain `LLEN` after each tenth.
fn appends(calls: usize) -> (Batch, Vec<redis_script::Handle<i64>>) {
    let mut batch = Batch::pipeline();
    let mut handles = Vec::with_capacity(calls);
    for n in 0..calls {
        let key = list(n);
        handles.push(batch.add(append::call(&key, &n.to_string())).expect("add"));
        if n % 10 == 9 {
            let _ = batch.add_command::<i64>(redis::cmd("LLEN").arg(&key).to_owned());
        }
    }
    (batch, handles)
}

/// Every list holds its items in the order they were queued, once each.
async fn lists_hold_every_item_in_order(
    connection: &mut redis::cluster_async::ClusterConnection,
    calls: usize,
    rounds: usize,
) {
    for index in 0..LISTS {
        let items: Vec<String> = redis::cmd("LRANGE")
            .arg(list(index))
            .arg(0)
            .arg(-1)
            .query_async(connection)
            .await
            .expect("LRANGE");
        let expected: Vec<String> = (0..rounds)
            .flat_map(|_| (0..calls).filter(|n| n % LISTS == index))
            .map(|n| n.to_string())
            .collect();
        assert_eq!(items, expected, "list {index}");
    }
}

#[tokio::test]
async fn a_pipeline_across_slots_runs_each_slot_on_its_node_in_order() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    cluster.script_flush();
    cluster.reset_stats();
    let calls = 300;
    let (batch, handles) = appends(calls);
    let mut replies = cluster::run_batch(&mut connection, &batch)
        .await
        .expect("the batch runs");
    for (n, handle) in handles.into_iter().enumerate() {
        // The n-th call is the (n / LISTS + 1)-th item of its list.
        let length = replies.take(handle).expect("append");
        assert_eq!(length, (n / LISTS + 1) as i64, "call {n}");
    }
    lists_hold_every_item_in_order(&mut connection, calls, 1).await;
    // One transaction per slot: the body once in each, EVALSHA after.
    let slots: std::collections::BTreeSet<u16> = (0..LISTS)
        .map(|index| cluster.keyslot(list(index).as_bytes()))
        .collect();
    assert_eq!(
        (cluster.calls("eval"), cluster.calls("evalsha")),
        (slots.len() as u64, (calls - slots.len()) as u64)
    );
    let transactions: u64 = cluster
        .primaries()
        .iter()
        .map(|primary| primary.calls("exec"))
        .sum();
    assert_eq!(transactions, slots.len() as u64, "one EXEC per slot");

    // Sent the way redis-rs sends a pipeline (to one node): refused before
    // anything is sent.
    cluster.reset_stats();
    let (batch, _) = appends(20);
    match batch.run(&mut connection).await {
        Err(error @ Error::BatchAcrossSlots { .. }) => {
            assert!(!error.may_have_executed());
            assert!(error.to_string().contains("cluster::run_batch"), "{error}");
        }
        other => panic!("expected BatchAcrossSlots, got {other:?}"),
    }
    assert_eq!(cluster.calls("eval") + cluster.calls("evalsha"), 0);
}

#[tokio::test]
async fn a_flush_storm_fails_no_call_of_a_batch_across_slots() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    let stop = Arc::new(AtomicBool::new(false));
    let urls = cluster.urls();
    let storm = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut connections: Vec<redis::Connection> = urls
                .iter()
                .map(|url| {
                    redis::Client::open(url.as_str())
                        .and_then(|client| client.get_connection())
                        .expect("a node")
                })
                .collect();
            let mut flushes = 0u32;
            // Bounded: it also stops by itself.
            while !stop.load(Ordering::Relaxed) && flushes < 100_000 {
                for node in &mut connections {
                    let _: redis::RedisResult<()> = redis::cmd("SCRIPT").arg("FLUSH").query(node);
                }
                flushes += 1;
            }
            flushes
        })
    };
    let (calls, rounds) = (200, 10);
    for _ in 0..rounds {
        let (batch, handles) = appends(calls);
        let mut replies = cluster::run_batch(&mut connection, &batch)
            .await
            .expect("the batch runs");
        for handle in handles {
            replies.take(handle).expect("no call fails");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flushes = storm.join().expect("the storm thread");
    assert!(flushes > 0, "the storm flushed");
    lists_hold_every_item_in_order(&mut connection, calls, rounds).await;
}

#[tokio::test]
async fn a_standalone_server_runs_a_pipeline_across_slots_in_one_request() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    server.reset_stats();
    let (batch, handles) = appends(50);
    let mut replies = batch.run(&mut connection).await.expect("one request");
    for (n, handle) in handles.into_iter().enumerate() {
        assert_eq!(
            replies.take(handle).expect("append"),
            (n / LISTS + 1) as i64
        );
    }
    assert_eq!(server.calls("eval"), 50);
}
