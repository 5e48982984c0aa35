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

/// How long a forced failover may take to settle: the sentinels demote
/// the old primary only when they next read its `INFO`, every 10 s.
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(60);

/// A primary, its replicas and the sentinels that monitor them as
/// [`SentinelDeployment::SERVICE`] (`redis-server --sentinel`, or
/// `valkey-server --sentinel`), with a quorum of a majority. Every process
/// stops when this is dropped.
///
/// ```no_run
/// use redis_script_test::SentinelDeployment;
///
/// let deployment = SentinelDeployment::start(2, 3);
/// let before = deployment.primary().port();
/// let after = deployment.fail_over();
/// assert_ne!(before, after);
/// ```
#[derive(Debug)]
pub struct SentinelDeployment {
    /// The data nodes; the first was the primary at the start.
    nodes: Vec<RedisServer>,
    sentinels: Vec<RedisServer>,
}

impl SentinelDeployment {
    /// The name the sentinels monitor the primary under.
    pub const SERVICE: &'static str = "mymaster";

    /// Starts a primary with `replicas` replicas, then `sentinels`
    /// sentinels, and waits until every sentinel knows every replica.
    ///
    /// # Panics
    ///
    /// As [`ReplicatedServers::start`]; also when a sentinel has not found
    /// the replicas within 60 s (scaled).
    pub fn start(replicas: usize, sentinels: usize) -> SentinelDeployment {
        let servers = ReplicatedServers::start(replicas);
        let quorum = sentinels / 2 + 1;
        // A node that does not answer for this long counts as down: long,
        // so that a busy machine does not start a failover of its own or
        // keep clients off a slow replica. `fail_over` needs no
        // agreement.
        let down_after = scaled(Duration::from_secs(30)).as_millis();
        let config = format!(
            "sentinel monitor {service} 127.0.0.1 {port} {quorum}\n\
             sentinel down-after-milliseconds {service} {down_after}\n\
             sentinel failover-timeout {service} 5000\n\
             sentinel parallel-syncs {service} {replicas}\n",
            service = Self::SERVICE,
            port = servers.primary.port(),
            replicas = replicas.max(1),
        );
        let sentinels = (0..sentinels)
            .map(|_| RedisServer::start_sentinel(config.clone()))
            .collect();
        let ReplicatedServers { primary, replicas } = servers;
        let deployment = SentinelDeployment {
            nodes: std::iter::once(primary).chain(replicas).collect(),
            sentinels,
        };
        let expected = deployment.nodes.len() - 1;
        // A sentinel promotes only a replica it has read `INFO` from
        // lately and reaches (else `SENTINEL FAILOVER` answers
        // `NOGOODSLAVE`).
        deployment.wait_for("every sentinel to reach every replica", |sentinel| {
            let replicas: Vec<std::collections::HashMap<String, String>> = admin::query(
                sentinel,
                redis::cmd("SENTINEL").arg("REPLICAS").arg(Self::SERVICE),
            )?;
            let good = (replicas.iter())
                .filter(|replica| {
                    let field = |name: &str| replica.get(name).map(String::as_str);
                    field("flags") == Some("slave")
                        && field("master-link-status") == Some("ok")
                        && field("info-refresh")
                            .and_then(|ms| ms.parse::<u64>().ok())
                            .is_some_and(|ms| ms < 5_000)
                })
                .count();
            (good == expected)
                .then_some(())
                .ok_or_else(|| format!("reaches {good} of {expected} replicas: {replicas:?}"))
        });
        deployment
    }

    /// The sentinels' URLs, for a Sentinel client.
    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(RedisServer::url).collect()
    }

    /// The sentinels.
    pub fn sentinels(&self) -> &[RedisServer] {
        &self.sentinels
    }

    /// The data nodes: the primary and the replicas, in the order started.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The node the first sentinel names as the primary now.
    ///
    /// # Panics
    ///
    /// When the sentinel does not answer, or names a node not of this
    /// deployment.
    pub fn primary(&self) -> &RedisServer {
        let port = self
            .named_primary(self.sentinels[0].port())
            .unwrap_or_else(|problem| panic!("{problem}"));
        self.node(port)
    }

    /// The replicas now: every running data node but the primary.
    ///
    /// # Panics
    ///
    /// As [`SentinelDeployment::primary`].
    pub fn replicas(&self) -> Vec<&RedisServer> {
        let primary = self.primary().port();
        (self.nodes.iter())
            .filter(|node| node.is_running() && node.port() != primary)
            .collect()
    }

    /// Forces a failover (`SENTINEL FAILOVER`, which needs no agreement)
    /// and waits until every sentinel names the new primary, it says it
    /// is one, and every other running node replicates from it with its
    /// link up. Returns the new primary's port.
    ///
    /// That takes about 10 to 20 s: the sentinels demote the old primary
    /// when they next read its `INFO`.
    ///
    /// # Panics
    ///
    /// When the sentinel refuses, or the failover has not settled within
    /// 60 s (scaled).
    pub fn fail_over(&self) -> u16 {
        let before = self.primary().port();
        let () = admin::query_or_panic(
            self.sentinels[0].port(),
            redis::cmd("SENTINEL").arg("FAILOVER").arg(Self::SERVICE),
        );
        self.wait_for("the failover to settle", |sentinel| {
            let port = self.named_primary(sentinel)?;
            if port == before {
                return Err(format!("still names {port}"));
            }
            let role = admin::info(port, "replication")?;
            if role.get("role").map(String::as_str) != Some("master") {
                return Err(format!("names {port}, which is not a primary yet"));
            }
            for node in self.nodes.iter().filter(|node| node.is_running()) {
                if node.port() == port {
                    continue;
                }
                let info = admin::info(node.port(), "replication")?;
                let field = |name: &str| info.get(name).map(String::as_str);
                if field("master_port") != Some(&port.to_string())
                    || field("master_link_status") != Some("up")
                {
                    return Err(format!(
                        "{} replicates {:?} (link {:?})",
                        node.port(),
                        field("master_port"),
                        field("master_link_status")
                    ));
                }
            }
            Ok(())
        });
        self.primary().port()
    }

    /// The port `sentinel` names as the primary.
    fn named_primary(&self, sentinel: u16) -> Result<u16, String> {
        let (_host, port): (String, u16) = admin::query(
            sentinel,
            redis::cmd("SENTINEL")
                .arg("GET-MASTER-ADDR-BY-NAME")
                .arg(Self::SERVICE),
        )?;
        Ok(port)
    }

    fn node(&self, port: u16) -> &RedisServer {
        (self.nodes.iter())
            .find(|node| node.port() == port)
            .unwrap_or_else(|| panic!("the sentinels name {port}, not a node of this deployment"))
    }

    /// Waits until `ready` holds on every running sentinel (by port).
    fn wait_for(&self, what: &str, mut ready: impl FnMut(u16) -> Result<(), String>) {
        let began = Instant::now();
        loop {
            let problems: Vec<String> = (self.sentinels.iter())
                .filter(|sentinel| sentinel.is_running())
                .filter_map(|sentinel| {
                    ready(sentinel.port())
                        .err()
                        .map(|problem| format!("sentinel {}: {problem}", sentinel.port()))
                })
                .collect();
            if problems.is_empty() {
                return;
            }
            assert!(
                began.elapsed() < scaled(FAILOVER_TIMEOUT),
                "waited {:?} for {what}: {problems:#?}",
                scaled(FAILOVER_TIMEOUT)
            );
            sleep(POLL_INTERVAL);
        }
    }
}
