//! What the fault-injection tests (`faults.rs`, `exactly_once_faults.rs`)
//! share: cluster clients, polling, background traffic, `CLIENT PAUSE`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis_script::RetryRefusals;
use redis_script_test::{RedisCluster, RedisServer};

/// Sends refusals again (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, …) for up
/// to about 2 s: long enough for a manual failover or a slot hand-over.
pub const RETRY_REFUSALS: RetryRefusals =
    RetryRefusals::new(25).with_delays(Duration::from_millis(5), Duration::from_millis(100));

/// A cluster connection from `configure` on a builder seeded with the
/// cluster's URLs.
pub async fn cluster_connection(
    cluster: &RedisCluster,
    configure: impl FnOnce(ClusterClientBuilder) -> ClusterClientBuilder,
) -> ClusterConnection {
    configure(ClusterClientBuilder::new(cluster.urls()))
        .build()
        .expect("cluster client")
        .get_async_connection()
        .await
        .expect("cluster connection")
}

/// The recommended cluster client: no re-sends by redis-rs, so redirects
/// and refusals reach the runtime.
pub fn without_client_retries(builder: ClusterClientBuilder) -> ClusterClientBuilder {
    builder
        .response_timeout(Duration::from_millis(500))
        .retries(0)
}

/// Polls `condition` every 20 ms until it holds; panics after `limit`.
async fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !tokio::task::block_in_place(&mut condition) {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A key served by another primary than `primary_port`.
pub fn key_served_elsewhere(cluster: &RedisCluster, primary_port: u16) -> String {
    (0..64)
        .map(|index| format!("{{elsewhere-{index}}}"))
        .find(|key| {
            cluster
                .node_for_slot(redis_script::cluster::key_slot(key.as_bytes()))
                .port()
                != primary_port
        })
        .expect("three primaries serve the slots")
}

/// A `GET` of one key every 10 ms on a connection, until stopped: other
/// traffic keeps a connection busy, as in production. (redis-rs 1.8 queues
/// a request that timed out for a re-send, and sends it the next time its
/// connection task handles another request.)
pub struct Traffic {
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Traffic {
    pub fn start<C>(connection: &C, key: String) -> Self
    where
        C: ConnectionLike + Clone + Send + 'static,
    {
        let done = Arc::new(AtomicBool::new(false));
        let (mut connection, stop) = (connection.clone(), done.clone());
        let task = tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let _: Option<String> = redis::cmd("GET")
                    .arg(&key)
                    .query_async(&mut connection)
                    .await
                    .expect("GET on a node that is not paused");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        Self { done, task }
    }

    pub async fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        self.task.await.expect("traffic");
    }
}

/// `CLIENT PAUSE <ms> ALL` on `node`; the connection that sent it.
pub async fn client_pause(node: &RedisServer, ms: u64) -> redis::aio::MultiplexedConnection {
    let mut direct = node.connection().await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .arg("ALL")
        .query_async(&mut direct)
        .await
        .expect("CLIENT PAUSE");
    direct
}

/// `CLUSTER FAILOVER` on the replica of `slot`'s primary: the primary
/// stops taking writes, the replica catches up with it and takes over, so
/// no acknowledged write is lost. Returns once the replica is a primary
/// and the cluster is healthy; the replica that took over.
pub async fn manual_failover_of_slot(cluster: &RedisCluster, slot: u16) -> &RedisServer {
    let primary = cluster.node_for_slot(slot).port().to_string();
    let replica = tokio::task::block_in_place(|| {
        cluster
            .replicas()
            .into_iter()
            .find(|replica| replica.info("replication").get("master_port") == Some(&primary))
            .expect("the primary has a replica")
    });
    let () = redis::cmd("CLUSTER")
        .arg("FAILOVER")
        .query_async(&mut replica.connection().await)
        .await
        .expect("CLUSTER FAILOVER");
    wait_until("the replica is a primary", Duration::from_secs(10), || {
        replica.info("replication").get("role").map(String::as_str) == Some("master")
    })
    .await;
    tokio::task::block_in_place(|| cluster.wait_until_healthy());
    replica
}
