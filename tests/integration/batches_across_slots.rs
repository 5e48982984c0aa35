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
fn appends(calls: usize) -> (Batch, Vec<redis_script::batch::Handle<i64>>) {
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

/// A slot's calls beyond the limit go in further transactions, sent one
/// after the other: each carries the body once, and the order holds.
#[tokio::test]
async fn a_slot_s_calls_are_split_into_transactions_of_the_limit() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    cluster.script_flush();
    cluster.reset_stats();
    let calls = 300;
    let (batch, handles) = appends(calls);
    // 300 calls over 40 lists: 7 or 8 per list, with a LLEN after every
    // tenth call, in transactions of at most 4 commands.
    let batch = batch.slot_transaction_limit(4);
    let mut replies = cluster::run_batch(&mut connection, &batch)
        .await
        .expect("the batch runs");
    for (n, handle) in handles.into_iter().enumerate() {
        assert_eq!(
            replies.take(handle).expect("append"),
            (n / LISTS + 1) as i64
        );
    }
    lists_hold_every_item_in_order(&mut connection, calls, 1).await;
    // Each slot's commands in queue order (`true` for a script call), cut
    // into transactions of 4: one EXEC each, and one EVAL in each that has
    // a script call.
    let mut per_slot: std::collections::BTreeMap<u16, Vec<bool>> = Default::default();
    for n in 0..calls {
        let commands = per_slot
            .entry(cluster.keyslot(list(n).as_bytes()))
            .or_default();
        commands.push(true);
        if n % 10 == 9 {
            commands.push(false);
        }
    }
    let transactions = per_slot.values().flat_map(|commands| commands.chunks(4));
    let (execs, evals) = transactions.fold((0, 0), |(execs, evals), transaction| {
        (execs + 1, evals + u64::from(transaction.contains(&true)))
    });
    assert_eq!(cluster.calls("exec"), execs);
    assert_eq!(
        (cluster.calls("eval"), cluster.calls("evalsha")),
        (evals, calls as u64 - evals)
    );
}

/// One call per slot over many slots: each node gets the body once, the
/// other calls go as `EVALSHA`.
fn spread(calls: usize, round: usize) -> (Batch, Vec<redis_script::batch::Handle<i64>>) {
    let mut batch = Batch::pipeline();
    let handles = (0..calls)
        .map(|n| {
            let key = format!("spread:{{{n}}}");
            batch
                .add(append::call(&key, &round.to_string()))
                .expect("add")
        })
        .collect();
    (batch, handles)
}

#[tokio::test]
async fn calls_one_per_slot_carry_each_body_once_per_node() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    cluster.script_flush();
    cluster.reset_stats();
    let (batch, handles) = spread(500, 0);
    let mut replies = cluster::run_batch(&mut connection, &batch)
        .await
        .expect("the batch runs");
    for handle in handles {
        assert_eq!(replies.take(handle).expect("append"), 1);
    }
    // Each slot's call in its own transaction (on the primaries: the
    // replicas count the replicated EXECs too).
    let transactions: u64 = cluster
        .primaries()
        .iter()
        .map(|primary| primary.calls("exec"))
        .sum();
    assert_eq!(
        (
            cluster.calls("eval"),
            cluster.calls("evalsha"),
            transactions
        ),
        (3, 497, 500),
        "one body per primary"
    );
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
    for round in 0..rounds {
        let (batch, handles) = appends(calls);
        let mut replies = cluster::run_batch(&mut connection, &batch)
            .await
            .expect("the batch runs");
        for handle in handles {
            replies.take(handle).expect("no call fails");
        }
        // One call per slot: lone `EVALSHA`s whose cache the storm empties.
        let (batch, handles) = spread(calls, round);
        let mut replies = cluster::run_batch(&mut connection, &batch)
            .await
            .expect("the batch runs");
        for handle in handles {
            assert_eq!(
                replies.take(handle).expect("no call fails"),
                round as i64 + 1
            );
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

/// A script error in one slot's transaction is that call's own error; the
/// other calls of the slot, and of other slots, get their replies.
#[tokio::test]
async fn a_script_error_is_its_call_s_own() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    let mut batch = Batch::pipeline();
    let before = batch.add(append::call("list:{t1}", "a")).expect("add");
    // APPEND's key holds a list: the script's RPUSH on a string fails.
    let () = redis::cmd("SET")
        .arg("string:{t1}")
        .arg("x")
        .query_async(&mut connection)
        .await
        .expect("SET");
    let failing = batch.add(append::call("string:{t1}", "b")).expect("add");
    let after = batch.add(append::call("list:{t1}", "c")).expect("add");
    let elsewhere = batch.add(append::call("list:{t2}", "d")).expect("add");
    let mut replies = cluster::run_batch(&mut connection, &batch)
        .await
        .expect("the batch runs");
    assert_eq!(replies.take(before).expect("before"), 1);
    match replies.take(failing) {
        Err(error @ Error::Script { .. }) => assert_eq!(error.code(), Some("WRONGTYPE")),
        other => panic!("expected the script's error, got {other:?}"),
    }
    assert_eq!(replies.take(after).expect("after"), 2);
    assert_eq!(replies.take(elsewhere).expect("elsewhere"), 1);
}

/// What one call of a fault test answered: its list, its item, and its
/// reply (`Ok`), or whether it may have run.
struct Answer {
    list: String,
    item: String,
    outcome: Result<(), bool>,
    /// The error's text, for the assertion's message.
    error: String,
}

/// Every answer is true to the lists: a call that succeeded appended its
/// item once, one that did not run appended nothing, one that may have run
/// appended it at most once; and each list holds its items in the order
/// they were queued.
async fn answers_are_true(
    connection: &mut redis::cluster_async::ClusterConnection,
    answers: &[Answer],
) {
    let mut lists: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for answer in answers {
        if !lists.contains_key(&answer.list) {
            let items: Vec<String> = redis::cmd("LRANGE")
                .arg(&answer.list)
                .arg(0)
                .arg(-1)
                .query_async(connection)
                .await
                .expect("LRANGE");
            lists.insert(answer.list.clone(), items);
        }
    }
    let (mut ran, mut refused) = (0, 0);
    for answer in answers {
        let items = &lists[&answer.list];
        let times = items.iter().filter(|item| **item == answer.item).count();
        match answer.outcome {
            Ok(()) => {
                assert_eq!(times, 1, "{} ran once", answer.item);
                ran += 1;
            }
            Err(false) => {
                assert_eq!(
                    times, 0,
                    "{} did not run, said {}",
                    answer.item, answer.error
                );
                refused += 1;
            }
            Err(true) => assert!(times <= 1, "{} ran at most once", answer.item),
        }
    }
    assert!(ran > 0, "{ran} calls ran, {refused} were refused");
    eprintln!(
        "{} calls: {ran} ran, {refused} did not, {} may have",
        answers.len(),
        answers.len() - ran - refused
    );
    for (list, items) in &lists {
        let queued: Vec<&String> = answers
            .iter()
            .filter(|answer| &answer.list == list)
            .map(|answer| &answer.item)
            .filter(|item| items.contains(item))
            .collect();
        let stored: Vec<&String> = items.iter().collect();
        assert_eq!(stored, queued, "{list} holds its items in the order queued");
    }
}

/// A cluster connection that never sends a request again by itself
/// (redis-rs `retries(0)`, as the runtime guide advises for scripts that
/// must run at most once): what reaches the batch is what happened.
async fn at_most_once(urls: Vec<String>) -> redis::cluster_async::ClusterConnection {
    redis::cluster::ClusterClientBuilder::new(urls)
        .retries(0)
        .build()
        .expect("a cluster client")
        .get_async_connection()
        .await
        .expect("a cluster connection")
}

/// Runs `rounds` batches of `calls` appends (the `n`-th to the list
/// `key(n)`) with unique items, while
/// `fault` runs on another thread, and returns every call's answer.
async fn batches_during(
    connection: &mut redis::cluster_async::ClusterConnection,
    (rounds, calls, key): (usize, usize, fn(usize) -> String),
    fault: impl FnOnce() + Send + 'static,
) -> Vec<Answer> {
    let fault = std::thread::spawn(fault);
    let mut answers = Vec::new();
    for round in 0..rounds {
        let mut batch = Batch::pipeline();
        let mut queued = Vec::new();
        for n in 0..calls {
            let (key, item) = (key(n), format!("r{round}-{n}"));
            queued.push((
                key.clone(),
                item.clone(),
                batch.add(append::call(&key, &item)).expect("add"),
            ));
        }
        match cluster::run_batch(connection, &batch).await {
            Ok(mut replies) => {
                for (list, item, handle) in queued {
                    let taken = replies.take(handle);
                    let error = taken
                        .as_ref()
                        .err()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    let outcome = taken.map(|_| ()).map_err(|error| error.may_have_executed());
                    answers.push(Answer {
                        list,
                        item,
                        outcome,
                        error,
                    });
                }
            }
            // The whole batch timed out: each call may have run.
            Err(error) => {
                assert!(error.may_have_executed(), "{error}");
                answers.extend(queued.into_iter().map(|(list, item, _)| Answer {
                    list,
                    item,
                    outcome: Err(true),
                    error: error.to_string(),
                }));
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    fault.join().expect("the fault thread");
    answers
}

#[tokio::test]
async fn batches_across_slots_are_true_through_a_slot_migration() {
    let cluster = Arc::new(RedisCluster::start(3, 0));
    let mut connection = at_most_once(cluster.urls()).await;
    let slot = cluster.keyslot(list(0).as_bytes());
    let ports: Vec<u16> = cluster.primaries().iter().map(|p| p.port()).collect();
    let migrating = Arc::clone(&cluster);
    let answers = batches_during(&mut connection, (30, 200, list), move || {
        // Back and forth between two primaries, a few times.
        for hop in 0..4 {
            std::thread::sleep(std::time::Duration::from_millis(60));
            let from = migrating.node_for_slot(slot).port();
            let to = ports
                .iter()
                .copied()
                .find(|port| *port != from)
                .unwrap_or(from);
            migrating.migrate_slot(slot, to);
            let _ = hop;
        }
    })
    .await;
    // A fresh connection reads the lists where they are now.
    answers_are_true(&mut cluster.connection().await, &answers).await;
}

#[tokio::test]
async fn batches_across_slots_are_true_through_a_primary_killed() {
    let cluster = Arc::new(std::sync::Mutex::new(RedisCluster::start(3, 1)));
    let urls = cluster.lock().expect("the cluster").urls();
    let mut connection = at_most_once(urls).await;
    let slot = cluster
        .lock()
        .expect("the cluster")
        .keyslot(list(0).as_bytes());
    let killing = Arc::clone(&cluster);
    let answers = batches_during(&mut connection, (30, 200, list), move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut cluster = killing.lock().expect("the cluster");
        cluster.stop_primary_of_slot(slot);
        cluster.wait_until_healthy();
    })
    .await;
    // A fresh connection reads the lists where they are now.
    let urls = cluster.lock().expect("the cluster").urls();
    let mut reader = redis::cluster::ClusterClient::new(urls)
        .expect("a cluster client")
        .get_async_connection()
        .await
        .expect("a cluster connection");
    answers_are_true(&mut reader, &answers).await;
}
