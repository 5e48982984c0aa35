//! A pipeline whose calls are in many slots of a cluster, sent with
//! `cluster::run_batch` (one transaction per slot to the slot's primary,
//! each script's body once per slot) or with
//! `cluster::NodeConnections::run_batch` (one request per primary, each
//! script's body at most once per node): replies in the order queued, the
//! calls of one slot in the order queued, under a `SCRIPT FLUSH` storm, a
//! slot migration and a primary killed too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use redis::cluster_async::ClusterConnection;
use redis_script::batch::Replies;
use redis_script::{Batch, Error, cluster, redis_script};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, Stats};

// The functions tests' library: its calls mix into batches across slots.
use crate::functions::quota_lib;
use crate::releases::lacks_functions;

/// How a test sends its batches across slots.
enum Via {
    /// `cluster::run_batch`: one request per slot, through the cluster
    /// connection.
    Slots,
    /// `NodeConnections::run_batch`: one request per primary, on
    /// connections of its own.
    Nodes(Box<cluster::NodeConnections>),
}

impl Via {
    fn nodes(urls: &[String]) -> Via {
        Via::Nodes(Box::new(
            cluster::NodeConnections::new(urls[0].as_str()).expect("node settings"),
        ))
    }

    async fn run(
        &self,
        connection: &mut ClusterConnection,
        batch: &Batch,
    ) -> Result<Replies, Error> {
        match self {
            Via::Slots => cluster::run_batch(connection, batch).await,
            Via::Nodes(nodes) => nodes.run_batch(batch).await,
        }
    }
}

/// Empties every primary (and so its replicas).
async fn flush_all(connection: &mut ClusterConnection) {
    let () = redis::cmd("FLUSHALL")
        .query_async(connection)
        .await
        .expect("FLUSHALL");
}

/// EXECs the primaries ran (the replicas count the replicated ones too).
fn transactions(cluster: &RedisCluster) -> u64 {
    cluster
        .primaries()
        .iter()
        .map(|primary| primary.calls("exec"))
        .sum()
}

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
    let calls = 300;
    // Per slot in the order of its first call: whether a plain `LLEN` is
    // among its commands (it then carries the body in either way).
    let mut slots: Vec<(u16, bool)> = Vec::new();
    for n in 0..calls {
        let slot = cluster.keyslot(list(n).as_bytes());
        let plain = n % 10 == 9;
        match slots.iter_mut().find(|(known, _)| *known == slot) {
            Some((_, mixed)) => *mixed |= plain,
            None => slots.push((slot, plain)),
        }
    }
    let mixed = slots.iter().filter(|(_, mixed)| *mixed).count() as u64;
    for via in [Via::Slots, Via::nodes(&cluster.urls())] {
        flush_all(&mut connection).await;
        cluster.script_flush();
        for run in 0..2 {
            cluster.reset_stats();
            let (batch, handles) = appends(calls);
            let mut replies = via
                .run(&mut connection, &batch)
                .await
                .expect("the batch runs");
            for (n, handle) in handles.into_iter().enumerate() {
                // The n-th call is the (n / LISTS + 1)-th item of its list
                // in this run.
                let per_run = (0..calls).filter(|m| m % LISTS == n % LISTS).count();
                let length = replies.take(handle).expect("append");
                assert_eq!(length, (run * per_run + n / LISTS + 1) as i64, "call {n}");
            }
            lists_hold_every_item_in_order(&mut connection, calls, run + 1).await;
            // One transaction per slot.
            assert_eq!(
                transactions(&cluster),
                slots.len() as u64,
                "one EXEC per slot"
            );
            let bodies = match &via {
                // The body once in each slot's transaction, EVALSHA after.
                Via::Slots => slots.len() as u64,
                // A slot's calls of one script carry no body when their node
                // has it (it answered before, or got it earlier in the same
                // request); a slot with a plain command among its calls
                // carries it.
                Via::Nodes(_) => {
                    let mut nodes_with_body: Vec<u16> = Vec::new();
                    let mut bodies = 0;
                    for (slot, mixed) in &slots {
                        let node = cluster.node_for_slot(*slot).port();
                        if *mixed || (run == 0 && !nodes_with_body.contains(&node)) {
                            bodies += 1;
                            nodes_with_body.push(node);
                        }
                    }
                    if run == 1 {
                        assert_eq!(bodies, mixed, "warm, only the mixed slots");
                    }
                    bodies
                }
            };
            assert_eq!(
                (cluster.calls("eval"), cluster.calls("evalsha")),
                (bodies, calls as u64 - bodies),
                "run {run}"
            );
        }
    }

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
    let calls = 300;
    // With node connections, a slot's later transactions go in later
    // requests, each after the one before it was answered.
    for via in [Via::Slots, Via::nodes(&cluster.urls())] {
        flush_all(&mut connection).await;
        cluster.script_flush();
        cluster.reset_stats();
        let (batch, handles) = appends(calls);
        // 300 calls over 40 lists: 7 or 8 per list, with a LLEN after every
        // tenth call, in transactions of at most 4 commands.
        let batch = batch.slot_transaction_limit(4);
        let mut replies = via
            .run(&mut connection, &batch)
            .await
            .expect("the batch runs");
        for (n, handle) in handles.into_iter().enumerate() {
            assert_eq!(
                replies.take(handle).expect("append"),
                (n / LISTS + 1) as i64
            );
        }
        lists_hold_every_item_in_order(&mut connection, calls, 1).await;
        if let Via::Slots = via {
            slot_transactions_carry_one_body_each(&cluster, calls);
        }
    }
}

/// Through the cluster connection: each slot's commands in queue order
/// (`true` for a script call), cut into transactions of 4, one EXEC each,
/// and one EVAL in each that has a script call.
fn slot_transactions_carry_one_body_each(cluster: &RedisCluster, calls: usize) {
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
    // One slot moved to another primary, which then serves two ranges of
    // slots: still one node, one body.
    let moved = cluster.keyslot(b"spread:{0}");
    let to = cluster
        .primaries()
        .iter()
        .map(|primary| primary.port())
        .find(|port| *port != cluster.node_for_slot(moved).port())
        .expect("another primary");
    cluster.migrate_slot(moved, to);
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

/// The request bytes the primaries received (`total_net_input_bytes`).
fn received(cluster: &RedisCluster) -> u64 {
    cluster
        .primaries()
        .iter()
        .map(|primary| {
            primary.info("stats")["total_net_input_bytes"]
                .parse::<u64>()
                .expect("a byte count")
        })
        .sum()
}

/// On connections of its own, a batch sends one request per node: a
/// slot's lone call bare, the body once per node, and none once the node
/// has answered the script; after a `SCRIPT FLUSH`, the calls sent without
/// it (`NOSCRIPT`: none ran) go again with it.
#[tokio::test]
async fn node_connections_send_each_body_at_most_once_per_node() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    let nodes = Via::nodes(&cluster.urls());
    cluster.script_flush();
    let calls = 1_000;
    // Slots with more than one of the calls: one transaction each; the
    // others' calls go bare.
    let mut per_slot: std::collections::BTreeMap<u16, usize> = Default::default();
    for n in 0..calls {
        *per_slot
            .entry(cluster.keyslot(format!("spread:{{{n}}}").as_bytes()))
            .or_default() += 1;
    }
    let shared = per_slot.values().filter(|calls| **calls > 1).count() as u64;
    let hand_written: usize = (0..calls)
        .map(|n| {
            redis::cmd("EVALSHA")
                .arg(append::SCRIPT.sha1())
                .arg(1)
                .arg(format!("spread:{{{n}}}"))
                .arg("1")
                .get_packed_command()
                .len()
        })
        .sum();
    for round in 0..3 {
        if round == 2 {
            cluster.script_flush();
        }
        cluster.reset_stats();
        let before = received(&cluster);
        let (batch, handles) = spread(calls, round);
        let mut replies = nodes
            .run(&mut connection, &batch)
            .await
            .expect("the batch runs");
        let bytes = received(&cluster) - before;
        for (n, handle) in handles.into_iter().enumerate() {
            assert_eq!(
                replies.take(handle).expect("append"),
                round as i64 + 1,
                "call {n}"
            );
        }
        let (evals, evalshas) = (cluster.calls("eval"), cluster.calls("evalsha"));
        match round {
            // Cold: each node's first call carries the body.
            0 => assert_eq!((evals, evalshas), (3, calls as u64 - 3)),
            // The nodes have it: no body.
            1 => {
                assert_eq!((evals, evalshas), (0, calls as u64));
                eprintln!("{bytes} request bytes against {hand_written} hand-written");
                assert!(
                    bytes as f64 <= hand_written as f64 * 1.05,
                    "{bytes} request bytes against {hand_written} for hand-written EVALSHAs"
                );
            }
            // Flushed: every call answered `NOSCRIPT` and did not run; each
            // node then got the body once.
            _ => assert_eq!((evals, evalshas), (3, 2 * calls as u64 - 3)),
        }
        assert_eq!(
            transactions(&cluster),
            shared * if round == 2 { 2 } else { 1 }
        );
    }

    // A transaction goes whole to its slot's primary.
    cluster.reset_stats();
    let mut transaction = Batch::transaction();
    let handles: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|item| transaction.add(append::call("tx:{t}", item)).expect("add"))
        .collect();
    let mut replies = nodes
        .run(&mut connection, &transaction)
        .await
        .expect("the transaction runs");
    for (n, handle) in handles.into_iter().enumerate() {
        assert_eq!(replies.take(handle).expect("append"), n as i64 + 1);
    }
    assert_eq!(transactions(&cluster), 1);
}

/// A slot whose key has moved to another node while the slot is still
/// migrating: its transaction is refused with `ASK` (nothing ran) and sent
/// again to the target after `ASKING`, where it runs, in order.
#[tokio::test]
async fn a_slot_being_moved_is_followed_with_asking() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    let nodes = Via::nodes(&cluster.urls());
    let moving = wide(0);
    let slot = cluster.keyslot(moving.as_bytes());
    let () = redis::cmd("RPUSH")
        .arg(&moving)
        .arg("before")
        .query_async(&mut connection)
        .await
        .expect("RPUSH");
    let source = cluster.node_for_slot(slot);
    let target = cluster
        .primaries()
        .into_iter()
        .find(|primary| primary.port() != source.port())
        .expect("another primary");
    let admin = |node: &RedisServer| node.client().get_connection().expect("a node connection");
    let (mut source_admin, mut target_admin) = (admin(source), admin(target));
    let id = |admin: &mut redis::Connection| -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(admin)
            .expect("MYID")
    };
    let (source_id, target_id) = (id(&mut source_admin), id(&mut target_admin));
    let setslot = |admin: &mut redis::Connection, state: &str, node: &str| {
        let () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg(state)
            .arg(node)
            .query(admin)
            .expect("SETSLOT");
    };
    setslot(&mut target_admin, "IMPORTING", &source_id);
    setslot(&mut source_admin, "MIGRATING", &target_id);
    let () = redis::cmd("MIGRATE")
        .arg("127.0.0.1")
        .arg(target.port())
        .arg(&moving)
        .arg(0)
        .arg(5000)
        .query(&mut source_admin)
        .expect("MIGRATE");

    let calls = 1_000;
    let (batch, handles) = wide_appends(calls);
    let mut replies = nodes
        .run(&mut connection, &batch)
        .await
        .expect("the batch runs");
    for (n, handle) in handles.into_iter().enumerate() {
        let earlier = usize::from(wide(n) == moving);
        assert_eq!(
            replies.take(handle).expect("append"),
            (n / 400 + 1 + earlier) as i64,
            "call {n}"
        );
    }
    // The moved list is on the target only, every item once, in order.
    for primary in cluster.primaries() {
        setslot(&mut admin(primary), "NODE", &target_id);
    }
    let items: Vec<String> = redis::cmd("LRANGE")
        .arg(&moving)
        .arg(0)
        .arg(-1)
        .query(&mut target_admin)
        .expect("LRANGE");
    assert_eq!(items, ["before", "0", "400", "800"]);
}

/// A primary down (and no replica to take over): its slots' calls fail,
/// each saying it did not run (the connection was refused: nothing was
/// sent), and every other call gets its reply.
#[tokio::test]
async fn a_node_down_fails_only_its_own_calls() {
    let mut cluster = RedisCluster::start_with(3, 0, &["--cluster-require-full-coverage", "no"]);
    let mut connection = cluster.connection().await;
    let nodes = Via::nodes(&cluster.urls());
    let calls = 1_000;
    let node_of: Vec<u16> = (0..calls)
        .map(|n| {
            cluster
                .node_for_slot(cluster.keyslot(wide(n).as_bytes()))
                .port()
        })
        .collect();
    let down = cluster.stop_primary_of_slot(cluster.keyslot(wide(0).as_bytes()));
    let (batch, handles) = wide_appends(calls);
    let mut replies = nodes
        .run(&mut connection, &batch)
        .await
        .expect("the batch runs");
    let (mut failed, mut ran) = (0, 0);
    for (n, handle) in handles.into_iter().enumerate() {
        match replies.take(handle) {
            Err(error) if node_of[n] == down => {
                assert!(!error.may_have_executed(), "call {n}: {error}");
                failed += 1;
            }
            Ok(length) if node_of[n] != down => {
                assert_eq!(length, (n / 400 + 1) as i64, "call {n}");
                ran += 1;
            }
            other => panic!("call {n} on port {}: {other:?}", node_of[n]),
        }
    }
    assert!(failed > 0 && ran > 0, "{failed} failed, {ran} ran");
    for (index, node) in node_of.iter().enumerate().take(400) {
        if *node == down {
            continue;
        }
        let items: Vec<String> = redis::cmd("LRANGE")
            .arg(wide(index))
            .arg(0)
            .arg(-1)
            .query_async(&mut connection)
            .await
            .expect("LRANGE");
        let expected: Vec<String> = (index..calls).step_by(400).map(|n| n.to_string()).collect();
        assert_eq!(items, expected, "{}", wide(index));
    }
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
    let rounds = 10;
    for (via, calls) in [(Via::Slots, 200), (Via::nodes(&cluster.urls()), 1_000)] {
        flush_all(&mut connection).await;
        for round in 0..rounds {
            let (batch, handles) = appends(calls);
            let mut replies = via
                .run(&mut connection, &batch)
                .await
                .expect("the batch runs");
            for handle in handles {
                replies.take(handle).expect("no call fails");
            }
            // One call per slot: lone `EVALSHA`s whose cache the storm empties.
            let (batch, handles) = spread(calls, round);
            let mut replies = via
                .run(&mut connection, &batch)
                .await
                .expect("the batch runs");
            for handle in handles {
                assert_eq!(
                    replies.take(handle).expect("no call fails"),
                    round as i64 + 1
                );
            }
        }
        lists_hold_every_item_in_order(&mut connection, calls, rounds).await;
    }
    stop.store(true, Ordering::Relaxed);
    let flushes = storm.join().expect("the storm thread");
    assert!(flushes > 0, "the storm flushed");
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
    // One body for the one script; the other calls name it by its SHA1.
    assert_eq!(server.calls("eval"), 1);
    assert_eq!(server.calls("evalsha"), 49);
}

/// Functions of a library, script calls and plain commands in one batch
/// across slots, on a cluster without the library: each slot's
/// transaction loads the library before its first function call, and
/// every reply is the call's own, both ways.
#[tokio::test]
async fn functions_scripts_and_plain_commands_mix_across_slots() {
    let cluster = RedisCluster::start(3, 0);
    let mut connection = cluster.connection().await;
    if lacks_functions(
        &mut connection,
        "batches_across_slots::functions_scripts_and_plain_commands_mix_across_slots",
    )
    .await
    {
        return;
    }
    for via in [Via::Slots, Via::nodes(&cluster.urls())] {
        flush_all(&mut connection).await;
        for primary in cluster.primaries() {
            let () = redis::cmd("FUNCTION")
                .arg("FLUSH")
                .query(&mut primary.client().get_connection().expect("a node"))
                .expect("FUNCTION FLUSH");
        }
        let mut batch = Batch::pipeline();
        let mut allowed = Vec::new();
        let mut appended = Vec::new();
        let mut lengths = Vec::new();
        for n in 0..60 {
            let quota = format!("quota:{{t{}}}", n % 20);
            allowed.push(
                batch
                    .add(quota_lib::fixed_window_allow::call(&quota, 1_000, 60))
                    .expect("add"),
            );
            appended.push(
                batch
                    .add(append::call(&list(n), &n.to_string()))
                    .expect("add"),
            );
            lengths.push(batch.add_command::<i64>(redis::cmd("LLEN").arg(list(n)).to_owned()));
        }
        let mut replies = via
            .run(&mut connection, &batch)
            .await
            .expect("the batch runs");
        for (n, ((allow, append), length)) in
            allowed.into_iter().zip(appended).zip(lengths).enumerate()
        {
            assert_eq!(
                replies.take(allow).expect("fixed_window_allow"),
                ("ALLOWED".to_owned(), (n / 20 + 1) as i64),
                "call {n}"
            );
            let items = (n / LISTS + 1) as i64;
            assert_eq!(replies.take(append).expect("append"), items, "call {n}");
            assert_eq!(replies.take(length).expect("LLEN"), items, "call {n}");
        }
        // Each window counted its three calls once.
        let counts = quota_lib::quota_peek(&mut connection, &["quota:{t0}"])
            .await
            .expect("quota_peek");
        assert_eq!(counts, [3]);
    }
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
    patience::cluster_builder(urls)
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
    via: &Via,
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
        match via.run(connection, &batch).await {
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

/// 400 lists (2 or 3 items of a 1,000-call batch each), over as many
/// slots: batches over all the nodes' slots.
fn wide(index: usize) -> String {
    format!("list:{{w{}}}", index % 400)
}

/// A pipeline of `calls` appends, item `n` to the list `wide(n)`.
fn wide_appends(calls: usize) -> (Batch, Vec<redis_script::batch::Handle<i64>>) {
    let mut batch = Batch::pipeline();
    let handles = (0..calls)
        .map(|n| {
            batch
                .add(append::call(&wide(n), &n.to_string()))
                .expect("add")
        })
        .collect();
    (batch, handles)
}

/// Batches of `calls` appends (the `n`-th to `key(n)`), sent `via` during
/// migrations of `key(0)`'s slot back and forth.
async fn through_a_slot_migration(
    via: fn(&[String]) -> Via,
    (calls, key): (usize, fn(usize) -> String),
) {
    let cluster = Arc::new(RedisCluster::start(3, 0));
    let mut connection = at_most_once(cluster.urls()).await;
    let via = via(&cluster.urls());
    let slot = cluster.keyslot(key(0).as_bytes());
    let ports: Vec<u16> = cluster.primaries().iter().map(|p| p.port()).collect();
    let migrating = Arc::clone(&cluster);
    let answers = batches_during(&mut connection, &via, (30, calls, key), move || {
        // Back and forth between two primaries, a few times.
        for _ in 0..4 {
            std::thread::sleep(std::time::Duration::from_millis(60));
            let from = migrating.node_for_slot(slot).port();
            let to = ports
                .iter()
                .copied()
                .find(|port| *port != from)
                .unwrap_or(from);
            migrating.migrate_slot(slot, to);
        }
    })
    .await;
    // A fresh connection reads the lists where they are now.
    answers_are_true(&mut cluster.connection().await, &answers).await;
}

#[tokio::test]
async fn batches_across_slots_are_true_through_a_slot_migration() {
    through_a_slot_migration(|_| Via::Slots, (200, list)).await;
}

#[tokio::test]
async fn batches_on_node_connections_are_true_through_a_slot_migration() {
    through_a_slot_migration(Via::nodes, (1_000, wide)).await;
}

/// One call per slot, during the migrations. Through redis-rs's cluster
/// connection with `retries(0)` (`cluster::run_batch`), this stopped
/// answering in 3 of 4 runs (its `CLUSTER SLOTS` after a `MOVED` never
/// returned); `NodeConnections` reads the slot map itself.
#[tokio::test]
async fn lone_calls_on_node_connections_are_true_through_a_slot_migration() {
    through_a_slot_migration(Via::nodes, (200, |n| format!("spread:{{{n}}}"))).await;
}

/// Batches of `calls` appends (the `n`-th to `key(n)`), sent `via` while
/// the primary of `key(0)`'s slot is killed (`kill -9`) and its replica
/// takes over.
async fn through_a_primary_killed(
    via: fn(&[String]) -> Via,
    (calls, key): (usize, fn(usize) -> String),
) {
    let cluster = Arc::new(std::sync::Mutex::new(RedisCluster::start(3, 1)));
    let urls = cluster.lock().expect("the cluster").urls();
    let mut connection = at_most_once(urls.clone()).await;
    let via = via(&urls);
    let slot = cluster
        .lock()
        .expect("the cluster")
        .keyslot(key(0).as_bytes());
    let killing = Arc::clone(&cluster);
    let answers = batches_during(&mut connection, &via, (30, calls, key), move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut cluster = killing.lock().expect("the cluster");
        cluster.stop_primary_of_slot(slot);
        cluster.wait_until_healthy();
    })
    .await;
    // A fresh connection reads the lists where they are now.
    let urls = cluster.lock().expect("the cluster").urls();
    let mut reader = patience::cluster_builder(urls)
        .build()
        .expect("a cluster client")
        .get_async_connection()
        .await
        .expect("a cluster connection");
    answers_are_true(&mut reader, &answers).await;
}

#[tokio::test]
async fn batches_across_slots_are_true_through_a_primary_killed() {
    through_a_primary_killed(|_| Via::Slots, (200, list)).await;
}

#[tokio::test]
async fn batches_on_node_connections_are_true_through_a_primary_killed() {
    through_a_primary_killed(Via::nodes, (1_000, wide)).await;
}
