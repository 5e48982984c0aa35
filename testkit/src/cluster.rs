//! A throwaway cluster made of [`RedisServer`] nodes (Redis Cluster, or its
//! Valkey equivalent).

use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::admin::{self, SlotRange};
use crate::patience::scaled;
use crate::{RedisServer, redis_cli_binary};

/// Upper bound on `redis-cli --cluster create` (or `valkey-cli`).
const CREATE_TIMEOUT: Duration = Duration::from_secs(60);
/// Upper bound on waiting for the cluster to become healthy.
const HEALTHY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a manual failover may take.
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(30);
/// Keys per `MIGRATE` when a slot moves.
const MIGRATE_BATCH: u64 = 100;
/// Pause between two health checks.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Number of hash slots in Redis Cluster.
const SLOTS: u16 = 16384;

/// A cluster of `redis-server` (or `valkey-server`, see
/// [`server_flavor`](crate::server_flavor)) nodes on `127.0.0.1`, stopped on
/// drop.
///
/// Nodes run with `--cluster-enabled yes --cluster-node-timeout 2000` and
/// `--repl-diskless-sync-delay 0` (so replicas sync at once instead of after
/// the default 5 s), each with its cluster bus on its own free port
/// (`--cluster-port`). The cluster is created with
/// `redis-cli --cluster create … --cluster-replicas N --cluster-yes` (with
/// `valkey-cli` when the nodes are Valkey).
///
/// ```no_run
/// # async fn demo() {
/// use redis_script_test::RedisCluster;
///
/// let cluster = RedisCluster::start(3, 1);
/// let mut con = cluster.connection().await;
/// let _: () = redis::cmd("SET").arg("k").arg("v").query_async(&mut con).await.unwrap();
/// # }
/// ```
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    /// The file name of the CLI that created the cluster, for messages.
    cli_name: String,
    /// What `<cli> --cluster create` printed, for panic messages.
    create_output: String,
}

impl RedisCluster {
    /// Starts `primaries * (1 + replicas_per_primary)` nodes, joins them into
    /// a cluster with the 16384 slots spread over `primaries` primaries, and
    /// waits until it is healthy (see
    /// [`wait_until_healthy`](Self::wait_until_healthy)).
    ///
    /// # Panics
    ///
    /// If `primaries < 3` (`--cluster create` refuses smaller clusters), if
    /// the server or CLI executable is missing, if the CLI fails (its output
    /// is in the message), or if the cluster is not healthy within 30 s.
    pub fn start(primaries: usize, replicas_per_primary: usize) -> RedisCluster {
        Self::start_with(primaries, replicas_per_primary, &[])
    }

    /// Like [`start`](Self::start), appending `extra_args` to every node's
    /// command line.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_with(
        primaries: usize,
        replicas_per_primary: usize,
        extra_args: &[&str],
    ) -> RedisCluster {
        assert!(
            primaries >= 3,
            "a cluster needs at least 3 primaries (--cluster create refuses fewer), got {primaries}"
        );
        // Fail on a missing CLI before starting any server.
        let cli = redis_cli_binary();
        let cli_name = cli.file_name().map_or_else(
            || cli.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        let total = primaries * (1 + replicas_per_primary);
        let mut args: Vec<String> = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
            "--repl-diskless-sync-delay",
            "0",
            "--repl-ping-replica-period",
            "1",
        ]
        .iter()
        .map(|&s| s.to_owned())
        .collect();
        args.extend(extra_args.iter().map(|&s| s.to_owned()));

        let nodes = start_nodes(total, &args);
        let mut cluster = RedisCluster {
            nodes,
            cli_name,
            create_output: String::new(),
        };
        cluster.create_output = cluster.run_create(&cli, replicas_per_primary);
        cluster.wait_until_healthy();
        let masters = cluster.primaries().len();
        assert_eq!(
            masters, primaries,
            "expected {primaries} primaries, the cluster has {masters}; {} said:\n{}",
            cluster.cli_name, cluster.create_output
        );
        cluster
    }

    /// Runs `<cli> --cluster create` and returns its output.
    fn run_create(&self, cli: &std::path::Path, replicas_per_primary: usize) -> String {
        let out_path = self.nodes[0]
            .dir()
            .join(format!("{}-cluster-create.log", self.cli_name));
        let out = File::create(&out_path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", out_path.display()));
        let err = out
            .try_clone()
            .unwrap_or_else(|e| panic!("cannot clone a handle of {}: {e}", out_path.display()));
        let mut command = Command::new(cli);
        command
            .args(["--cluster", "create"])
            .args(self.nodes.iter().map(RedisServer::addr))
            .args(["--cluster-replicas", &replicas_per_primary.to_string()])
            .arg("--cluster-yes")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let shown = format!("{command:?}");
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
        let limit = scaled(CREATE_TIMEOUT);
        let deadline = Instant::now() + limit;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!("still running after {limit:?}, killed"));
                }
                Ok(None) => sleep(POLL_INTERVAL),
                Err(e) => break Err(format!("cannot wait for it: {e}")),
            }
        };
        let output = std::fs::read(&out_path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|e| format!("<cannot read {}: {e}>", out_path.display()));
        match status {
            Ok(status) if status.success() && create_succeeded(&output) => output,
            Ok(status) => panic!("{shown} failed ({status}); its output:\n{output}"),
            Err(problem) => panic!("{shown}: {problem}; its output:\n{output}"),
        }
    }

    /// Waits (at most 30 s) until every running node agrees the cluster is
    /// healthy:
    ///
    /// * `CLUSTER INFO` says `cluster_state:ok`, `cluster_slots_assigned:16384`
    ///   and `cluster_known_nodes` equal to the number of nodes;
    /// * every replica's `INFO replication` says `master_link_status:up`;
    /// * every node answers the same `CLUSTER SLOTS`, whose primaries and
    ///   replicas are exactly the running primaries and replicas.
    ///
    /// [`start`](Self::start) calls this; call it again after stopping or
    /// restarting nodes (e.g. to wait for a failover to settle).
    ///
    /// # Panics
    ///
    /// When the cluster is not healthy in time, listing what was still wrong.
    pub fn wait_until_healthy(&self) {
        let began = Instant::now();
        loop {
            let problems = match self.health_problems() {
                Ok(()) => return,
                Err(problems) => problems,
            };
            if began.elapsed() >= scaled(HEALTHY_TIMEOUT) {
                panic!(
                    "the cluster was not healthy after {:?}:\n  {}\nnodes: {:#?}\n\
                     {} --cluster create said:\n{}",
                    scaled(HEALTHY_TIMEOUT),
                    problems.join("\n  "),
                    self.nodes,
                    self.cli_name,
                    self.create_output
                );
            }
            sleep(POLL_INTERVAL);
        }
    }

    /// Everything that is not yet as [`wait_until_healthy`] wants it.
    fn health_problems(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let mut maps: Vec<(u16, Vec<SlotRange>)> = Vec::new();
        let mut primary_ports = BTreeSet::new();
        let mut replica_ports = BTreeSet::new();
        for node in self.nodes.iter().filter(|n| n.is_running()) {
            let port = node.port();
            let mut check = || -> Result<(), String> {
                // One connection per node and round: three commands on it.
                let mut con = admin::connect(port)?;
                let mut run = |cmd: &redis::Cmd| -> Result<redis::Value, String> {
                    cmd.query(&mut con).map_err(|e| format!("{port}: {e}"))
                };
                let text: String = redis::from_redis_value(run(redis::cmd("CLUSTER").arg("INFO"))?)
                    .map_err(|e| format!("{port}: CLUSTER INFO: {e}"))?;
                let info = admin::parse_info(&text);
                let field = |k: &str| info.get(k).map(String::as_str).unwrap_or("?");
                if field("cluster_state") != "ok" {
                    problems.push(format!("{port}: cluster_state:{}", field("cluster_state")));
                }
                if field("cluster_slots_assigned") != SLOTS.to_string() {
                    problems.push(format!(
                        "{port}: cluster_slots_assigned:{}",
                        field("cluster_slots_assigned")
                    ));
                }
                if field("cluster_known_nodes") != self.nodes.len().to_string() {
                    problems.push(format!(
                        "{port}: cluster_known_nodes:{} of {}",
                        field("cluster_known_nodes"),
                        self.nodes.len()
                    ));
                }
                let replication = admin::parse_info(
                    &redis::from_redis_value::<String>(run(redis::cmd("INFO").arg("replication"))?)
                        .map_err(|e| format!("{port}: INFO replication: {e}"))?,
                );
                match replication.get("role").map(String::as_str) {
                    Some("master") => {
                        primary_ports.insert(port);
                    }
                    Some("slave") => {
                        replica_ports.insert(port);
                        let link = replication
                            .get("master_link_status")
                            .map(String::as_str)
                            .unwrap_or("?");
                        if link != "up" {
                            problems.push(format!("{port}: master_link_status:{link}"));
                        }
                    }
                    other => problems.push(format!("{port}: role {other:?}")),
                }
                let reply = run(redis::cmd("CLUSTER").arg("SLOTS"))?;
                maps.push((port, admin::parse_cluster_slots(&reply)?));
                Ok(())
            };
            if let Err(e) = check() {
                problems.push(e);
            }
        }
        if let Some((first_port, first)) = maps.first() {
            for (port, map) in &maps[1..] {
                if map != first {
                    problems.push(format!(
                        "CLUSTER SLOTS differs between {first_port} and {port}"
                    ));
                }
            }
            let listed_primaries: BTreeSet<u16> = first.iter().map(|r| r.primary_port).collect();
            let listed_replicas: BTreeSet<u16> = first
                .iter()
                .flat_map(|r| r.replica_ports.iter().copied())
                .collect();
            if listed_primaries != primary_ports || listed_replicas != replica_ports {
                problems.push(format!(
                    "CLUSTER SLOTS on {first_port} lists primaries {listed_primaries:?} and \
                     replicas {listed_replicas:?}; running are primaries {primary_ports:?} and \
                     replicas {replica_ports:?}"
                ));
            }
        } else if problems.is_empty() {
            problems.push("no node is running".to_owned());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// All nodes, in the order they were given to `--cluster create` (which makes the first `primaries` of them primaries), running
    /// or not.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// One node, mutably, to [`stop`](RedisServer::stop) or
    /// [`restart`](RedisServer::restart) it (e.g. for failover tests).
    ///
    /// # Panics
    ///
    /// If `index` is out of range.
    pub fn node_mut(&mut self, index: usize) -> &mut RedisServer {
        &mut self.nodes[index]
    }

    /// Stops (`kill -9`) the primary serving `slot` right now and returns
    /// its port, for failover tests; its replica takes over once the
    /// cluster notices (see [`wait_until_healthy`](Self::wait_until_healthy)).
    ///
    /// # Panics
    ///
    /// As [`node_for_slot`](Self::node_for_slot).
    pub fn stop_primary_of_slot(&mut self, slot: u16) -> u16 {
        let port = self.node_for_slot(slot).port();
        let index = self
            .nodes
            .iter()
            .position(|node| node.port() == port)
            .unwrap_or_else(|| panic!("the primary of slot {slot} (port {port}) is not a node"));
        self.nodes[index].stop();
        port
    }

    /// Fails over the primary serving `slot` to its replica without losing
    /// a write (`CLUSTER FAILOVER` on the replica: the primary stops taking
    /// writes, the replica catches up and takes over), and returns once the
    /// cluster is healthy again; the port of the new primary.
    ///
    /// # Panics
    ///
    /// If the primary has no replica, or the failover does not complete
    /// within 30 s.
    pub fn fail_over_slot(&self, slot: u16) -> u16 {
        let primary = self.node_for_slot(slot).port().to_string();
        let replica = self
            .replicas()
            .into_iter()
            .find(|replica| replica.info("replication").get("master_port") == Some(&primary))
            .unwrap_or_else(|| {
                panic!("the primary of slot {slot} (port {primary}) has no replica")
            });
        let () = admin::query_or_panic(replica.port(), redis::cmd("CLUSTER").arg("FAILOVER"));
        let limit = scaled(FAILOVER_TIMEOUT);
        let deadline = Instant::now() + limit;
        while replica.info("replication").get("role").map(String::as_str) != Some("master") {
            assert!(
                Instant::now() < deadline,
                "port {} did not take over slot {slot} within {limit:?}",
                replica.port()
            );
            sleep(Duration::from_millis(20));
        }
        self.wait_until_healthy();
        replica.port()
    }

    /// Moves `slot` with its keys to the primary listening on `to_port`,
    /// the way `redis-cli --cluster reshard` does: `SETSLOT IMPORTING` and
    /// `MIGRATING`, `MIGRATE` of the keys in batches, then `SETSLOT NODE` on
    /// every primary. A client meets `ASK` during the move and `MOVED`
    /// after it.
    ///
    /// # Panics
    ///
    /// If `to_port` is not a primary of the cluster or a step fails.
    pub fn migrate_slot(&self, slot: u16, to_port: u16) {
        let source = self.node_for_slot(slot).port();
        if source == to_port {
            return;
        }
        let id = |port: u16| -> String {
            admin::query_or_panic(port, redis::cmd("CLUSTER").arg("MYID"))
        };
        let (source_id, target_id) = (id(source), id(to_port));
        let setslot = |port: u16, state: &str, node: &str| {
            let () = admin::query_or_panic(
                port,
                redis::cmd("CLUSTER")
                    .arg("SETSLOT")
                    .arg(slot)
                    .arg(state)
                    .arg(node),
            );
        };
        setslot(to_port, "IMPORTING", &source_id);
        setslot(source, "MIGRATING", &target_id);
        let count: u64 = admin::query_or_panic(
            source,
            redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot),
        );
        // Each round moves a batch; keys written meanwhile go to the target
        // (`ASK`), so the rounds needed never grow.
        for round in 0..=count / MIGRATE_BATCH + 1 {
            let keys: Vec<Vec<u8>> = admin::query_or_panic(
                source,
                redis::cmd("CLUSTER")
                    .arg("GETKEYSINSLOT")
                    .arg(slot)
                    .arg(MIGRATE_BATCH),
            );
            if keys.is_empty() {
                break;
            }
            assert!(
                round <= count / MIGRATE_BATCH,
                "slot {slot} still has keys after {round} rounds of MIGRATE"
            );
            let () = admin::query_or_panic(
                source,
                redis::cmd("MIGRATE")
                    .arg("127.0.0.1")
                    .arg(to_port)
                    .arg("")
                    .arg(0)
                    .arg(5000)
                    .arg("KEYS")
                    .arg(keys),
            );
        }
        for primary in self.primaries() {
            setslot(primary.port(), "NODE", &target_id);
        }
        self.wait_until_healthy();
    }

    /// The running nodes that are primaries right now (asked with `INFO
    /// replication`, so this follows failovers).
    ///
    /// # Panics
    ///
    /// If a running node does not answer.
    pub fn primaries(&self) -> Vec<&RedisServer> {
        self.running_with_role("master")
    }

    /// The running nodes that are replicas right now.
    ///
    /// # Panics
    ///
    /// If a running node does not answer.
    pub fn replicas(&self) -> Vec<&RedisServer> {
        self.running_with_role("slave")
    }

    fn running_with_role(&self, role: &str) -> Vec<&RedisServer> {
        self.nodes
            .iter()
            .filter(|n| n.is_running())
            .filter(|n| n.info("replication").get("role").map(String::as_str) == Some(role))
            .collect()
    }

    /// The URLs of the running nodes, as initial nodes for
    /// `redis::cluster::ClusterClient::new`.
    pub fn urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.is_running())
            .map(RedisServer::url)
            .collect()
    }

    /// A new async cluster connection (redis-rs `cluster_async`), seeded with
    /// [`urls`](Self::urls). Must be awaited inside a tokio runtime.
    ///
    /// # Panics
    ///
    /// If the cluster cannot be reached.
    pub async fn connection(&self) -> redis::cluster_async::ClusterConnection {
        let urls = self.urls();
        let client = crate::patience::cluster_builder(urls.clone())
            .build()
            .unwrap_or_else(|e| panic!("cannot build a cluster client for {urls:?}: {e}"));
        match client.get_async_connection().await {
            Ok(con) => con,
            Err(e) => panic!("cannot open an async cluster connection to {urls:?}: {e}"),
        }
    }

    /// The primary serving `slot` right now, according to `CLUSTER SLOTS` on
    /// a running node.
    ///
    /// # Panics
    ///
    /// If `slot >= 16384`, or if no running node answers with a primary for it.
    pub fn node_for_slot(&self, slot: u16) -> &RedisServer {
        assert!(slot < SLOTS, "slot {slot} is out of range 0..16384");
        let node = self.any_running_node();
        let reply: redis::Value =
            admin::query_or_panic(node.port(), redis::cmd("CLUSTER").arg("SLOTS"));
        let ranges = admin::parse_cluster_slots(&reply).unwrap_or_else(|e| panic!("{e}"));
        let range = ranges
            .iter()
            .find(|r| (r.start..=r.end).contains(&slot))
            .unwrap_or_else(|| panic!("no primary serves slot {slot}: {ranges:?}"));
        self.nodes
            .iter()
            .find(|n| n.port() == range.primary_port)
            .unwrap_or_else(|| {
                panic!(
                    "slot {slot} is served by port {}, which is not a node of this cluster",
                    range.primary_port
                )
            })
    }

    /// The hash slot of `key`, as computed by the server (`CLUSTER KEYSLOT`).
    ///
    /// # Panics
    ///
    /// If no running node answers.
    pub fn keyslot(&self, key: &[u8]) -> u16 {
        let node = self.any_running_node();
        let slot: i64 =
            admin::query_or_panic(node.port(), redis::cmd("CLUSTER").arg("KEYSLOT").arg(key));
        u16::try_from(slot).unwrap_or_else(|_| panic!("CLUSTER KEYSLOT answered {slot}"))
    }

    fn any_running_node(&self) -> &RedisServer {
        self.nodes
            .iter()
            .find(|n| n.is_running())
            .unwrap_or_else(|| panic!("no node of the cluster is running: {:#?}", self.nodes))
    }
}

impl fmt::Debug for RedisCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCluster")
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

/// Whether `--cluster create` output ends with the check that every slot is
/// served. `redis-cli` 7.0 and `valkey-cli` 8.1 print the same line (in
/// green, between ANSI colour codes): `[OK] All 16384 slots covered.`; they
/// differ elsewhere (`Master[0]` vs `Primary[0]`, `6 nodes` vs `6 node(s)`,
/// `slaves` vs `replicas`).
fn create_succeeded(output: &str) -> bool {
    output.contains("[OK] All 16384 slots covered")
}

/// Starts `count` cluster-mode nodes in parallel. If one fails to start, the
/// others are dropped (stopped) and the panic is passed on.
fn start_nodes(count: usize, args: &[String]) -> Vec<RedisServer> {
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..count)
            .map(|_| scope.spawn(|| RedisServer::start_cluster_node(args.to_vec())))
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let mut nodes = Vec::with_capacity(count);
    for result in results {
        match result {
            Ok(node) => nodes.push(node),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_output_of_both_clis_is_accepted() {
        // The last lines of `redis-cli` 7.0.15 and `valkey-cli` 8.1.8, colour
        // codes included.
        let redis_cli = ">>> Performing hash slots allocation on 6 nodes...\n\
            Master[0] -> Slots 0 - 5460\n\
            \x1b[0m\x1b[29;1m>>> Check slots coverage...\n\
            \x1b[0m\x1b[32;1m[OK] All 16384 slots covered.\n\x1b[0m";
        let valkey_cli = ">>> Performing hash slots allocation on 6 node(s)...\n\
            Primary[0] -> Slots 0 - 5460\n\
            \x1b[0m\x1b[29;1m>>> Check slots coverage...\n\
            \x1b[0m\x1b[32;1m[OK] All 16384 slots covered.\n\x1b[0m";
        assert!(create_succeeded(redis_cli));
        assert!(create_succeeded(valkey_cli));
        assert!(!create_succeeded(
            "[ERR] Not all 16384 slots are covered by nodes.\n"
        ));
    }
}
