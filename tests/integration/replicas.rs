//! Reads on replicas: a primary and two replicas (`--replicaof`, no
//! cluster), read through [`Replicas`], and a 3-primary cluster with a
//! replica each, read through redis-rs's replica read strategy. Where each
//! call ran is read from every node's `INFO commandstats`.
//!
//! Redis 6.x has no `EVALSHA_RO`: there a read-only script falls back to
//! `EVALSHA`, which `Replicas` still sends to a replica (it knows the call
//! reads), and a 6.x replica runs.

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis_script::{Error, ReadFrom, Replicas, redis_script};
use redis_script_test::{RedisServer, ReplicatedServers, Stats};

use crate::releases::before_redis_7;

/// A read-only script: sent as `EVALSHA_RO`.
#[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
async fn versioned_get(document: &str) -> Option<(u64, String)>;

/// The same script, declared to read on replicas only.
mod on_replicas {
    use redis_script::redis_script;

    #[redis_script(
        path = "../lua/versioned_get.lua",
        keys = 1,
        read_from = "replica_only"
    )]
    pub async fn versioned_get(document: &str) -> Option<(u64, String)>;
}

/// A script that writes: `expected` is `""` to create, else the version
/// read; replies `("ADDED", 1)` or `("UPDATED", version)`.
#[redis_script(path = "../lua/versioned_set.lua", keys = 1)]
async fn versioned_set(document: &str, body: &str, expected: &str, ttl_ms: u64) -> (String, i64);

const DOCUMENT: &str = "profile:{replicas}";

/// The script and function calls a server ran, read-only or not.
fn script_calls(server: &RedisServer) -> u64 {
    [
        "evalsha_ro",
        "eval_ro",
        "fcall_ro",
        "evalsha",
        "eval",
        "fcall",
    ]
    .iter()
    .map(|command| server.calls(command))
    .sum()
}

/// The commands a read-only script is sent as, warm and cold: without
/// `_RO` on Redis 6.x.
fn read_commands() -> (&'static str, &'static str) {
    if before_redis_7() {
        ("evalsha", "eval")
    } else {
        ("evalsha_ro", "eval_ro")
    }
}

/// Connections to the primary and to each replica, read as `read_from` says.
async fn connect(servers: &ReplicatedServers, read_from: ReadFrom) -> Replicas {
    let mut replicas = Vec::new();
    for replica in servers.replicas() {
        replicas.push(replica.connection().await);
    }
    Replicas::new(servers.primary().connection().await, replicas, read_from)
}

fn reset_stats(servers: &ReplicatedServers) {
    servers.primary().reset_stats();
    for replica in servers.replicas() {
        replica.reset_stats();
    }
}

/// Writes the document (version 1) and waits until the replicas have it.
async fn write_document(servers: &ReplicatedServers, connection: &mut Replicas) {
    let (_, version) = versioned_set(connection, DOCUMENT, "{\"name\":\"ada\"}", "", 0)
        .await
        .expect("the write runs on the primary");
    assert_eq!(version, 1);
    servers.wait_until_synced();
}

#[tokio::test]
async fn read_only_calls_run_on_replicas_and_writes_on_the_primary() {
    let servers = ReplicatedServers::start(2);
    let mut connection = connect(&servers, ReadFrom::PreferReplica).await;
    write_document(&servers, &mut connection).await;
    reset_stats(&servers);
    for _ in 0..10 {
        let read = versioned_get(&mut connection, DOCUMENT)
            .await
            .expect("the read succeeds");
        assert_eq!(read, Some((1, "{\"name\":\"ada\"}".to_owned())));
    }
    let primary = servers.primary();
    assert_eq!(
        script_calls(primary),
        0,
        "no read reaches the primary: {:?}",
        primary.command_calls()
    );
    let (warm, cold) = read_commands();
    for replica in servers.replicas() {
        let calls = replica.command_calls();
        if before_redis_7() {
            // The first call met the unknown EVALSHA_RO on one replica
            // and went on as EVALSHA on the next: the turns shift.
            assert!(replica.calls(warm) >= 4, "{calls:?}");
        } else {
            // Taken in turn: five reads each, the first after NOSCRIPT,
            // whose EVAL_RO goes to the replica that lacked the script.
            assert_eq!(replica.calls(warm), 5, "{calls:?}");
        }
        assert_eq!(replica.calls(cold), 1, "{calls:?}");
    }
    reset_stats(&servers);
    for expected in 1..=5_i64 {
        let (_, version) = versioned_set(&mut connection, DOCUMENT, "{}", &expected.to_string(), 0)
            .await
            .expect("the write runs on the primary");
        assert_eq!(version, expected + 1);
    }
    assert_eq!(
        primary.calls("evalsha") + primary.calls("eval"),
        5,
        "warm: loaded by the first write"
    );
    for replica in servers.replicas() {
        assert_eq!(
            script_calls(replica),
            0,
            "a writing script never reaches a replica: {:?}",
            replica.command_calls()
        );
    }
}

#[tokio::test]
async fn a_call_or_its_script_says_where_it_reads() {
    let servers = ReplicatedServers::start(1);
    let mut connection = connect(&servers, ReadFrom::Primary).await;
    write_document(&servers, &mut connection).await;
    let (primary, replica) = (servers.primary(), &servers.replicas()[0]);

    // The connection's policy: the primary, as EVALSHA_RO.
    reset_stats(&servers);
    versioned_get(&mut connection, DOCUMENT)
        .await
        .expect("read");
    assert_eq!(script_calls(replica), 0, "{:?}", replica.command_calls());

    // Read your own write: `Primary` sends it without `_RO`.
    reset_stats(&servers);
    let mut on_replicas = connect(&servers, ReadFrom::ReplicaOnly).await;
    let (_, version) = versioned_set(&mut on_replicas, DOCUMENT, "{\"v\":2}", "1", 0)
        .await
        .expect("write");
    let read = versioned_get::call(DOCUMENT)
        .read_from(ReadFrom::Primary)
        .invoke(&mut on_replicas)
        .await
        .expect("read on the primary");
    assert_eq!(read.map(|(version, _)| version as i64), Some(version));
    assert_eq!(primary.calls("evalsha_ro") + primary.calls("eval_ro"), 0);
    assert!(
        primary.calls("evalsha") >= 2,
        "{:?}",
        primary.command_calls()
    );
    assert_eq!(script_calls(replica), 0);
    servers.wait_until_synced();

    // A call's `ReplicaOnly`, and a script's `read_from`, on a connection
    // that reads the primary.
    reset_stats(&servers);
    versioned_get::call(DOCUMENT)
        .read_from(ReadFrom::ReplicaOnly)
        .invoke(&mut connection)
        .await
        .expect("read on the replica");
    on_replicas::versioned_get(&mut connection, DOCUMENT)
        .await
        .expect("read on the replica");
    assert_eq!(
        on_replicas::versioned_get::SCRIPT.read_from(),
        Some(ReadFrom::ReplicaOnly)
    );
    assert_eq!(script_calls(primary), 0, "{:?}", primary.command_calls());
    assert!(script_calls(replica) >= 2, "{:?}", replica.command_calls());

    // A writing script asked to read a replica: nothing is sent.
    reset_stats(&servers);
    for read_from in [ReadFrom::PreferReplica, ReadFrom::ReplicaOnly] {
        let refused = versioned_set::call(DOCUMENT, "{}", "9", 0)
            .read_from(read_from)
            .invoke(&mut connection)
            .await;
        match refused {
            Err(error @ Error::NotReadOnly { .. }) => {
                assert!(!error.may_have_executed(), "{error}");
                assert!(error.to_string().contains("versioned_set"), "{error}");
            }
            other => panic!("{read_from:?}: {other:?}"),
        }
    }
    assert_eq!(script_calls(primary), 0);
    assert_eq!(script_calls(replica), 0);
}

#[tokio::test]
async fn replica_only_without_a_replica_sends_nothing() {
    let server = RedisServer::start();
    let mut connection: Replicas<MultiplexedConnection> =
        Replicas::new(server.connection().await, Vec::new(), ReadFrom::ReplicaOnly);
    server.reset_stats();
    match versioned_get(&mut connection, DOCUMENT).await {
        Err(error @ Error::Connection { .. }) => {
            assert!(!error.may_have_executed(), "{error}");
            assert!(error.to_string().contains("no replica"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(script_calls(&server), 0);
    // `PreferReplica` reads the primary when there is no replica.
    let read = versioned_get::call(DOCUMENT)
        .read_from(ReadFrom::PreferReplica)
        .invoke(&mut connection)
        .await
        .expect("read on the primary");
    assert_eq!(read, None);
}

#[tokio::test]
async fn preload_loads_the_scripts_on_every_node() {
    let servers = ReplicatedServers::start(2);
    let mut connection = connect(&servers, ReadFrom::PreferReplica).await;
    let reports = connection
        .preload(&[&versioned_get::SCRIPT, &versioned_set::SCRIPT])
        .await
        .expect("preload");
    // One report per node, each naming its release.
    assert_eq!(reports.len(), 3);
    let release = servers.primary().version();
    for report in &reports {
        let server = report.server.expect("INFO server names the release");
        assert_eq!(
            server.release,
            (release.major, release.minor, release.patch)
        );
    }
    let sha1 = versioned_get::SCRIPT.sha1();
    for server in std::iter::once(servers.primary()).chain(servers.replicas()) {
        let mut direct = server.connection().await;
        let exists: Vec<bool> = redis::cmd("SCRIPT")
            .arg("EXISTS")
            .arg(sha1)
            .query_async(&mut direct)
            .await
            .expect("SCRIPT EXISTS");
        assert_eq!(exists, vec![true], "on {}", server.port());
    }
    reset_stats(&servers);
    for _ in 0..4 {
        versioned_get(&mut connection, DOCUMENT)
            .await
            .expect("read");
    }
    for replica in servers.replicas() {
        assert_eq!(
            replica.calls("eval_ro") + replica.calls("eval"),
            0,
            "warm from the start"
        );
    }
}

#[tokio::test]
async fn scripts_flushed_on_the_replicas_under_load_fail_no_call() {
    let servers = ReplicatedServers::start(2);
    let mut connection = connect(&servers, ReadFrom::ReplicaOnly).await;
    write_document(&servers, &mut connection).await;
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let mut connection = connection.clone();
            tokio::spawn(async move {
                let mut failures = Vec::new();
                for _ in 0..150 {
                    match versioned_get(&mut connection, DOCUMENT).await {
                        Ok(Some((1, _))) => {}
                        other => failures.push(format!("{other:?}")),
                    }
                }
                failures
            })
        })
        .collect();
    let mut flushes = 0;
    while !readers.iter().all(tokio::task::JoinHandle::is_finished) && flushes < 400 {
        for replica in servers.replicas() {
            replica.script_flush();
        }
        flushes += 1;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    for reader in readers {
        let failures = reader.await.expect("the reader ends");
        assert!(
            failures.is_empty(),
            "{} failed: {failures:?}",
            failures.len()
        );
    }
    assert!(flushes > 0);
}

#[tokio::test]
async fn reads_pass_over_a_stopped_replica_and_one_that_lost_its_primary() {
    let mut servers = ReplicatedServers::start(2);
    let mut prefer = connect(&servers, ReadFrom::PreferReplica).await;
    write_document(&servers, &mut prefer).await;
    let mut only = connect(&servers, ReadFrom::ReplicaOnly).await;
    servers.replica_mut(0).stop();
    for _ in 0..4 {
        let read = versioned_get(&mut prefer, DOCUMENT)
            .await
            .expect("prefer replica");
        assert_eq!(read.map(|(version, _)| version), Some(1));
        let read = versioned_get(&mut only, DOCUMENT)
            .await
            .expect("the other replica");
        assert_eq!(read.map(|(version, _)| version), Some(1));
    }

    // The remaining replica loses its primary and serves no stale data:
    // MASTERDOWN. `PreferReplica` reads the primary; `ReplicaOnly` fails
    // with the replica's refusal, nothing ran.
    let closed = RedisServer::start();
    let closed_port = closed.port().to_string();
    drop(closed);
    let replica = &servers.replicas()[1];
    let mut admin = replica.connection().await;
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("replica-serve-stale-data")
        .arg("no")
        .query_async(&mut admin)
        .await
        .expect("CONFIG SET");
    let () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(&closed_port)
        .query_async(&mut admin)
        .await
        .expect("REPLICAOF");
    let read = versioned_get(&mut prefer, DOCUMENT)
        .await
        .expect("the primary");
    assert_eq!(read.map(|(version, _)| version), Some(1));
    match versioned_get(&mut only, DOCUMENT).await {
        Err(error @ Error::Refused { .. }) => {
            assert_eq!(error.code(), Some("MASTERDOWN"), "{error}");
            assert!(!error.may_have_executed());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_library_deploys_on_the_primary_and_its_no_writes_functions_run_on_replicas() {
    use crate::functions::quota_lib;

    let servers = ReplicatedServers::start(1);
    let mut connection = connect(&servers, ReadFrom::PreferReplica).await;
    if crate::releases::lacks_functions(&mut connection, "library on replicas").await {
        return;
    }
    quota_lib::LIBRARY
        .deploy(&mut connection, redis_script::OnConflict::Refuse)
        .await
        .expect("deploy");
    servers.wait_until_synced();
    reset_stats(&servers);
    let key = "quota:{replicas}";
    let peeked = quota_lib::quota_peek(&mut connection, &[key])
        .await
        .expect("peek");
    assert_eq!(peeked.len(), 1);
    let (primary, replica) = (servers.primary(), &servers.replicas()[0]);
    assert_eq!(
        replica.calls("fcall_ro"),
        1,
        "{:?}",
        replica.command_calls()
    );
    assert_eq!(primary.calls("fcall_ro") + primary.calls("fcall"), 0);
    quota_lib::fixed_window_allow(&mut connection, key, 5, 60_000)
        .await
        .expect("a writing function runs on the primary");
    assert_eq!(primary.calls("fcall"), 1, "{:?}", primary.command_calls());
    assert_eq!(replica.calls("fcall"), 0);

    // A function declared to read on replicas, on a connection that reads
    // the primary.
    let mut on_primary = connect(&servers, ReadFrom::Primary).await;
    reset_stats(&servers);
    quota_on_replicas::quota_peek(&mut on_primary, &[key])
        .await
        .expect("peek on the replica");
    assert_eq!(
        replica.calls("fcall_ro"),
        1,
        "{:?}",
        replica.command_calls()
    );
    assert_eq!(primary.calls("fcall_ro") + primary.calls("fcall"), 0);
}

/// The test library's `no-writes` function, declared to read on replicas.
#[redis_script::redis_library(path = "lua/functions/quota_lib.lua")]
mod quota_on_replicas {
    #[function(keys = 1)]
    pub async fn fixed_window_allow(key: &str, limit: u32, window: u64) -> (String, i64);

    #[function(keys = 1, read_from = "replica_only")]
    pub async fn quota_peek(windows: &[&str]) -> Vec<i64>;
}

/// A cluster read through redis-rs's own replica routing: its client sends
/// `READONLY` to the replicas and routes the `_RO` commands there. A call
/// that reads the primary is sent without `_RO`, which redis-rs routes as
/// a write. On Redis 6.x, whose scripts go without `_RO`, every call runs
/// on a primary.
#[tokio::test]
async fn a_cluster_reads_on_its_replicas_through_the_client_read_strategy() {
    use redis_script_test::{RedisCluster, patience};

    let cluster = RedisCluster::start(3, 1);
    let client = patience::cluster_builder(cluster.urls())
        .read_routing_strategy(redis::cluster_read_routing::RoundRobinReplicaStrategy::default())
        .build()
        .expect("cluster client");
    let mut connection = client
        .get_async_connection()
        .await
        .expect("cluster connection");
    let documents: Vec<String> = (0..24).map(|i| format!("profile:{{{i}}}")).collect();
    for document in &documents {
        let (_, version) = versioned_set(&mut connection, document, "{}", "", 0)
            .await
            .expect("the write runs on a primary");
        assert_eq!(version, 1);
    }
    cluster.wait_until_healthy();
    let sum = |nodes: &[&RedisServer]| nodes.iter().map(|node| script_calls(node)).sum::<u64>();
    let mut replicas_read = false;
    // The replicas apply the writes asynchronously: read until each
    // document is there, a bounded number of times.
    for _ in 0..50 {
        cluster.reset_stats();
        let mut all_found = true;
        for document in &documents {
            let read = versioned_get(&mut connection, document)
                .await
                .expect("read");
            all_found &= read.is_some();
        }
        let (primaries, replicas) = (cluster.primaries(), cluster.replicas());
        if before_redis_7() {
            assert_eq!(sum(&replicas), 0, "6.x reads stay on the primaries");
            assert!(sum(&primaries) >= 24);
        } else {
            assert_eq!(sum(&primaries), 0, "no read reaches a primary");
            assert!(replicas.iter().all(|replica| script_calls(replica) > 0));
            replicas_read = true;
        }
        if all_found {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(replicas_read, !before_redis_7());

    // Reading the primary, and writing: never a replica.
    cluster.reset_stats();
    for document in &documents {
        let read = versioned_get::call(document)
            .read_from(ReadFrom::Primary)
            .invoke(&mut connection)
            .await
            .expect("read on the primary");
        assert_eq!(read.map(|(version, _)| version), Some(1));
        versioned_set(&mut connection, document, "{}", "1", 0)
            .await
            .expect("write");
    }
    for replica in cluster.replicas() {
        assert_eq!(script_calls(replica), 0, "{:?}", replica.command_calls());
    }
    let primaries = cluster.primaries();
    assert_eq!(
        primaries
            .iter()
            .map(|node| node.calls("evalsha_ro"))
            .sum::<u64>(),
        0
    );
    assert!(sum(&primaries) >= 48);
}

/// The cluster client of `cluster` that reads on replicas.
async fn replica_reading_cluster_connection(
    cluster: &redis_script_test::RedisCluster,
) -> redis::cluster_async::ClusterConnection {
    redis_script_test::patience::cluster_builder(cluster.urls())
        .read_routing_strategy(redis::cluster_read_routing::RoundRobinReplicaStrategy::default())
        .build()
        .expect("cluster client")
        .get_async_connection()
        .await
        .expect("cluster connection")
}

/// Writes `count` documents across the cluster's slots; their keys.
async fn write_documents<C: redis::aio::ConnectionLike + Send>(
    connection: &mut C,
    count: usize,
) -> Vec<String> {
    let documents: Vec<String> = (0..count).map(|i| format!("profile:{{{i}}}")).collect();
    for document in &documents {
        versioned_set(connection, document, "{}", "", 0)
            .await
            .expect("the write runs on a primary");
    }
    documents
}

/// Readers of `documents` on clones of `connection`, each call with
/// `deadline`; the slowest call's time is kept in `slowest_ms`.
fn read_load<C>(
    connection: &C,
    documents: Vec<String>,
    deadline: Duration,
    slowest_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> crate::fault_kit::Load<crate::faults::Outcome>
where
    C: redis::aio::ConnectionLike + Clone + Send + 'static,
{
    let documents = std::sync::Arc::new(documents);
    crate::fault_kit::Load::start(
        connection,
        4,
        Duration::from_millis(5),
        move |mut connection, id| {
            let (documents, slowest_ms) = (documents.clone(), slowest_ms.clone());
            async move {
                let round: usize = id
                    .rsplit('-')
                    .next()
                    .and_then(|round| round.parse().ok())
                    .unwrap_or(0);
                let document = &documents[round % documents.len()];
                let started = std::time::Instant::now();
                let result = versioned_get::call(document)
                    .deadline(deadline)
                    .invoke(&mut connection)
                    .await;
                let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                slowest_ms.fetch_max(elapsed, std::sync::atomic::Ordering::Relaxed);
                (id, crate::faults::outcome(result))
            }
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_reads_survive_script_flushes_on_the_replicas() {
    use redis_script_test::RedisCluster;

    let cluster = RedisCluster::start(3, 1);
    let mut connection = replica_reading_cluster_connection(&cluster).await;
    let documents = write_documents(&mut connection, 12).await;
    cluster.wait_until_healthy();
    let slowest = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let load = read_load(&connection, documents, Duration::from_secs(5), slowest);
    load.until_every_task_succeeds("the reads run").await;
    for _ in 0..100 {
        for replica in cluster.replicas() {
            replica.script_flush();
        }
        // Pacing: flushes between the reads.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (outcomes, _) = load.stop().await;
    let failed: Vec<_> = outcomes
        .iter()
        .filter(|(_, result)| result.is_err())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} failed: {failed:?}",
        failed.len(),
        outcomes.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_reads_end_by_their_deadline_when_a_replica_dies_and_a_primary_fails_over() {
    use redis_script_test::RedisCluster;

    let mut cluster = RedisCluster::start(3, 1);
    let mut connection = replica_reading_cluster_connection(&cluster).await;
    let documents = write_documents(&mut connection, 12).await;
    cluster.wait_until_healthy();
    let deadline = Duration::from_secs(3);
    let slowest_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let load = read_load(&connection, documents, deadline, slowest_ms.clone());
    load.until_every_task_succeeds("the reads run").await;

    // A replica dies: the reads of its slots go elsewhere, or fail by
    // their deadline, and succeed again.
    let dead = cluster.replicas()[0].port();
    let index = (cluster.nodes().iter())
        .position(|node| node.port() == dead)
        .expect("the replica is a node");
    // redis-rs's cluster connection sends the reads of its slots elsewhere
    // (to the primary) itself: no send fails.
    tokio::task::block_in_place(|| cluster.node_mut(index).stop());
    load.until_every_task_succeeds("the reads run with a replica down")
        .await;

    // A primary whose replica lives fails over.
    let alive = (cluster.replicas().into_iter())
        .find_map(|replica| replica.info("replication").get("master_port").cloned())
        .and_then(|port| port.parse::<u16>().ok())
        .expect("a primary with a live replica");
    let slot = (0..16384_u16)
        .find(|slot| cluster.node_for_slot(*slot).port() == alive)
        .expect("a slot of that primary");
    tokio::task::block_in_place(|| cluster.fail_over_slot(slot));
    load.until_every_task_succeeds("the reads run after the failover")
        .await;

    let (outcomes, ended_ok) = load.stop().await;
    let failed = outcomes
        .iter()
        .filter(|(_, result)| result.is_err())
        .count();
    let slowest = Duration::from_millis(slowest_ms.load(std::sync::atomic::Ordering::Relaxed));
    eprintln!(
        "replicas::cluster_reads_under_faults: calls={} failed={failed} slowest={slowest:?}",
        outcomes.len()
    );
    assert_eq!(ended_ok, 4, "every reader's last call succeeded");
    assert!(
        slowest <= deadline + Duration::from_secs(1),
        "every read ends by its deadline: the slowest took {slowest:?}"
    );
}

/// `cluster::NodeConnections` reading replicas: each slot's transaction of
/// read-only calls goes to a replica of its primary (batches send plain
/// `EVALSHA`, which a replica runs for a script that writes nothing), a
/// transaction with a write to the primary; a dead replica's slots go to
/// their primary under `PreferReplica`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_connections_send_read_only_transactions_to_replicas() {
    use redis_script::Batch;
    use redis_script::cluster::NodeConnections;
    use redis_script_test::RedisCluster;

    let mut cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    let documents = write_documents(&mut connection, 12).await;
    cluster.wait_until_healthy();
    let seed = cluster.urls()[0].clone();
    let nodes = NodeConnections::new(seed.as_str())
        .expect("settings")
        .read_from(ReadFrom::PreferReplica);
    let reads = |documents: &[String]| {
        let mut batch = Batch::pipeline();
        let handles: Vec<_> = (documents.iter())
            .map(|document| batch.add(versioned_get::call(document)).expect("add"))
            .collect();
        (batch, handles)
    };
    let sum = |nodes: &[&RedisServer]| nodes.iter().map(|node| script_calls(node)).sum::<u64>();

    // The replicas apply the writes asynchronously: read until all are there.
    let mut found = 0;
    for _ in 0..50 {
        cluster.reset_stats();
        let (batch, handles) = reads(&documents);
        let mut replies = nodes.run_batch(&batch).await.expect("a batch of reads");
        found = 0;
        for handle in handles {
            found += usize::from(replies.take(handle).expect("reply").is_some());
        }
        assert_eq!(sum(&cluster.primaries()), 0, "no read reaches a primary");
        assert!(
            cluster
                .replicas()
                .iter()
                .all(|replica| script_calls(replica) > 0)
        );
        if found == documents.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(found, documents.len());

    // A write in the batch: its slot's transaction goes to the primary.
    cluster.reset_stats();
    let (mut batch, _) = reads(&documents);
    let write = batch
        .add(versioned_set::call(&documents[0], "{}", "1", 0))
        .expect("add");
    let mut replies = nodes.run_batch(&batch).await.expect("a batch");
    let (_, version) = replies.take(write).expect("the write ran");
    assert_eq!(version, 2);
    let primaries = sum(&cluster.primaries());
    assert!(
        primaries >= 1,
        "the written slot's calls ran on its primary"
    );
    assert!(
        primaries < documents.len() as u64,
        "the other slots read replicas"
    );

    // A dead replica: its slots are read on their primary.
    let dead = cluster.replicas()[0].port();
    let index = (cluster.nodes().iter())
        .position(|node| node.port() == dead)
        .expect("the replica is a node");
    cluster.node_mut(index).stop();
    for _ in 0..3 {
        let (batch, handles) = reads(&documents);
        let mut replies = nodes.run_batch(&batch).await.expect("a batch of reads");
        for handle in handles {
            assert!(replies.take(handle).expect("reply").is_some());
        }
    }
    // Only replicas: the dead replica's slots fail, saying nothing ran.
    let only = NodeConnections::new(seed.as_str())
        .expect("settings")
        .read_from(ReadFrom::ReplicaOnly);
    let (batch, handles) = reads(&documents);
    let mut replies = only.run_batch(&batch).await.expect("the batch ends");
    let mut failed = 0;
    for handle in handles {
        if let Err(error) = replies.take(handle) {
            assert!(!error.may_have_executed(), "{error}");
            failed += 1;
        }
    }
    assert!(
        failed > 0,
        "the dead replica's slots fail under ReplicaOnly"
    );
}
