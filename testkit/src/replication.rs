//! A standalone primary and its replicas, each a server process of its own.

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::admin;
use crate::patience::scaled;
use crate::server::RedisServer;

/// How long replicas may take to finish their first sync.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// A primary and `N` replicas (`--replicaof 127.0.0.1 <primary port>`), not
/// a cluster: the set-up a [`Replicas`] connection of `redis-script`, or a
/// Sentinel deployment, reads from. Every process stops when this is
/// dropped.
///
/// [`Replicas`]: https://docs.rs/redis-script/latest/redis_script/struct.Replicas.html
///
/// ```no_run
/// use redis_script_test::ReplicatedServers;
///
/// let servers = ReplicatedServers::start(2);
/// assert_eq!(servers.replicas().len(), 2);
/// // Both replicas hold what the primary held when they synced.
/// ```
#[derive(Debug)]
pub struct ReplicatedServers {
    primary: RedisServer,
    replicas: Vec<RedisServer>,
}

impl ReplicatedServers {
    /// Starts a primary and `replicas` replicas of it, and waits (at most
    /// 30 s, scaled by the [patience](crate::patience) factor) until every
    /// replica has synced.
    ///
    /// # Panics
    ///
    /// As [`RedisServer::start`]; also when a replica has not synced in
    /// time, with its `INFO replication`.
    pub fn start(replicas: usize) -> ReplicatedServers {
        // Diskless syncs otherwise wait 5 s (Redis 7.0 on) for more replicas.
        let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
        let port = primary.port().to_string();
        let replicas = (0..replicas)
            .map(|_| RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]))
            .collect();
        let servers = ReplicatedServers { primary, replicas };
        servers.wait_until_synced();
        servers
    }

    /// The primary.
    pub fn primary(&self) -> &RedisServer {
        &self.primary
    }

    /// The replicas, in the order started.
    pub fn replicas(&self) -> &[RedisServer] {
        &self.replicas
    }

    /// One replica, to stop or restart it.
    ///
    /// # Panics
    ///
    /// When there is no replica `index`.
    pub fn replica_mut(&mut self, index: usize) -> &mut RedisServer {
        &mut self.replicas[index]
    }

    /// Waits until every running replica's link to the primary is up and
    /// it has applied everything the primary has written so far
    /// (`master_repl_offset` equal on both sides).
    ///
    /// # Panics
    ///
    /// When that has not happened within 30 s (scaled), naming the replica
    /// and its `INFO replication`.
    pub fn wait_until_synced(&self) {
        let began = Instant::now();
        for replica in self.replicas.iter().filter(|replica| replica.is_running()) {
            loop {
                let target = admin::info(self.primary.port(), "replication")
                    .ok()
                    .and_then(|info| info.get("master_repl_offset").cloned());
                let info = admin::info(replica.port(), "replication").unwrap_or_default();
                let field = |name: &str| info.get(name).map(String::as_str);
                let link_up = field("master_link_status") == Some("up");
                let applied = field("master_repl_offset").map(str::to_owned);
                if link_up && target.is_some() && applied == target {
                    break;
                }
                assert!(
                    began.elapsed() < scaled(SYNC_TIMEOUT),
                    "replica {} did not sync with primary {} in {:?} (primary offset {target:?}): {info:#?}",
                    replica.port(),
                    self.primary.port(),
                    scaled(SYNC_TIMEOUT),
                );
                sleep(POLL_INTERVAL);
            }
        }
    }
}
