//! A read-only script on a cluster of primaries with a replica each, read
//! through a client that prefers replicas (redis-rs's round-robin replica
//! read strategy) and through the default client, which reads on the
//! primaries. Each node's `INFO commandstats` shows where the calls ran.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_read_routing::RoundRobinReplicaStrategy;
use redis::{ConnectionAddr, IntoConnectionInfo};
use redis_script::redis_script;
use redis_script_test::{RedisCluster, parse_commandstats};

use crate::measure::{self, Plan, Samples, Summary, Way};
use crate::{BoxError, RESPONSE_TIMEOUT};

/// Reads a document and its version; the analysis finds no write, so the
/// call goes as `EVALSHA_RO`, which a replica may run.
#[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
pub async fn versioned_get(document: &str) -> Option<(u64, String)>;

/// Documents read, one hash tag each, so that the reads fall on every
/// primary's slots.
pub const DOCUMENTS: usize = 1_000;
/// The shape of the throwaway cluster.
pub const PRIMARIES: usize = 3;
pub const REPLICAS_PER_PRIMARY: usize = 1;
/// A replica that has not applied the writes by then is not following.
const REPLICATION_TIMEOUT: Duration = Duration::from_secs(10);

fn document_key(index: usize) -> String {
    format!("redis-script-bench:profile:{{{index}}}")
}

fn document_body(index: usize) -> String {
    format!("{{\"id\":{index},\"name\":\"user {index}\"}}")
}

/// The cluster the table reads: `REDIS_CLUSTER_URL`, or a throwaway one
/// this run starts (stopped when dropped).
pub struct Target {
    seed: String,
    cluster: Option<RedisCluster>,
}

impl Target {
    /// `Err` says why the table is skipped: on a cluster this run does not
    /// own, it resets every node's statistics, so only when allowed.
    pub fn from_env(allow_resetstat: bool) -> Result<Target, String> {
        match std::env::var("REDIS_CLUSTER_URL") {
            Ok(seed) if !seed.is_empty() => {
                if !allow_resetstat {
                    return Err(
                        "Skipped: this needs `CONFIG RESETSTAT` on every node of the \
                         REDIS_CLUSTER_URL cluster; pass `--flush-scripts` to allow it, or unset \
                         REDIS_CLUSTER_URL to use a throwaway cluster."
                            .to_owned(),
                    );
                }
                eprintln!("using the cluster at REDIS_CLUSTER_URL={seed}");
                Ok(Target {
                    seed,
                    cluster: None,
                })
            }
            _ => {
                eprintln!(
                    "REDIS_CLUSTER_URL is not set: starting a throwaway cluster, {PRIMARIES} \
                     primaries with {REPLICAS_PER_PRIMARY} replica each (stopped on exit)…"
                );
                let cluster = RedisCluster::start(PRIMARIES, REPLICAS_PER_PRIMARY);
                let seed = cluster
                    .urls()
                    .into_iter()
                    .next()
                    .ok_or("the throwaway cluster has no running node")?;
                Ok(Target {
                    seed,
                    cluster: Some(cluster),
                })
            }
        }
    }

    pub fn is_throwaway(&self) -> bool {
        self.cluster.is_some()
    }
}

/// Where the client sends a read-only call.
#[derive(Debug, Clone, Copy)]
enum ReadFrom {
    PreferReplica,
    PrimaryOnly,
}

impl ReadFrom {
    const ALL: [ReadFrom; 2] = [ReadFrom::PreferReplica, ReadFrom::PrimaryOnly];

    fn label(self) -> &'static str {
        match self {
            Self::PreferReplica => "prefer replica (`RoundRobinReplicaStrategy`)",
            Self::PrimaryOnly => "primary only (default client)",
        }
    }
}

/// Reads the documents in turn through one cluster connection.
#[derive(Clone)]
struct Reader {
    connection: ClusterConnection,
    documents: Arc<[String]>,
}

impl Way for Reader {
    async fn call(&mut self, n: usize) -> Result<(), BoxError> {
        let index = n % self.documents.len();
        match versioned_get(&mut self.connection, &self.documents[index]).await? {
            Some((1, _)) => Ok(()),
            other => Err(format!(
                "{}: expected version 1, read {other:?}",
                self.documents[index]
            )
            .into()),
        }
    }
}

/// A node's script calls while one way's measured calls ran.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeCalls {
    /// `evalsha_ro` and `eval_ro`: the read-only forms.
    pub read_only: u64,
    /// `evalsha` and `eval`: the call sent without its read-only form.
    pub read_write: u64,
    /// Of both, those the command itself failed (e.g. `NOSCRIPT`).
    pub failed: u64,
}

/// A node, named by its role and its primary's place in the slot range,
/// not by its port: `primary 1` serves the lowest slots, `replica 1`
/// follows it.
struct Node {
    label: String,
    /// For a replica, the index of its primary among the nodes.
    primary: Option<usize>,
    connection: MultiplexedConnection,
}

/// One row of the table.
#[derive(Debug)]
pub struct ReplicaRow {
    pub read_from: &'static str,
    pub in_flight: String,
    pub summary: Summary,
    /// In the order of [`ReplicaTable::nodes`].
    pub calls: Vec<NodeCalls>,
}

#[derive(Debug)]
pub struct ReplicaTable {
    pub redis_version: String,
    pub throwaway: bool,
    /// Node labels, primaries first.
    pub nodes: Vec<String>,
    pub rows: Vec<ReplicaRow>,
}

/// Writes the documents, waits until every replica has them, then reads
/// them through both clients, one call in flight and `tasks` concurrent
/// tasks, counting each way's calls on every node.
pub async fn measure(target: &Target, plan: Plan, tasks: usize) -> Result<ReplicaTable, BoxError> {
    let mut nodes = discover(&target.seed).await?;
    let redis_version = server_version(&mut nodes[0].connection).await?;
    let documents: Arc<[String]> = (0..DOCUMENTS).map(document_key).collect();
    let mut readers = Vec::new();
    for read_from in ReadFrom::ALL {
        readers.push(Reader {
            connection: cluster_connection(&target.seed, read_from).await?,
            documents: Arc::clone(&documents),
        });
    }
    let mut writer = cluster_connection(&target.seed, ReadFrom::PrimaryOnly).await?;
    eprintln!("replicas: writing {DOCUMENTS} documents…");
    for (index, key) in documents.iter().enumerate() {
        redis::cmd("HSET")
            .arg(key)
            .arg("version")
            .arg(1)
            .arg("doc")
            .arg(document_body(index))
            .exec_async(&mut writer)
            .await?;
    }
    let measured = async {
        wait_for_replicas(&mut nodes).await?;
        let mut rows = Vec::new();
        for concurrency in [None, Some(tasks)] {
            eprintln!(
                "replicas: {} calls per row, {}…",
                plan.calls,
                concurrency.map_or_else(
                    || "one in flight".to_owned(),
                    |tasks| format!("{tasks} tasks")
                )
            );
            rows.extend(counted_rows(&mut readers, &mut nodes, plan, concurrency).await?);
        }
        Ok::<_, BoxError>(rows)
    }
    .await;
    // Clean up also after a failure (matters with REDIS_CLUSTER_URL).
    let deleted = async {
        for key in documents.iter() {
            redis::cmd("DEL").arg(key).exec_async(&mut writer).await?;
        }
        Ok::<_, BoxError>(())
    }
    .await;
    let rows = measured?;
    deleted?;
    Ok(ReplicaTable {
        redis_version,
        throwaway: target.is_throwaway(),
        nodes: nodes.into_iter().map(|node| node.label).collect(),
        rows,
    })
}

/// Both ways in turns, as the warm rows are measured; around each share,
/// the nodes' statistics are reset and then read, so that each way's
/// counts are its measured calls alone (warm-up calls excluded).
async fn counted_rows(
    readers: &mut [Reader],
    nodes: &mut [Node],
    plan: Plan,
    tasks: Option<usize>,
) -> Result<Vec<ReplicaRow>, BoxError> {
    for reader in readers.iter_mut() {
        match tasks {
            None => measure::sequential_calls(reader, plan.warmup).await?,
            Some(tasks) => measure::concurrent_calls(reader, plan.warmup, tasks).await?,
        };
    }
    let mut calls = vec![vec![NodeCalls::default(); nodes.len()]; readers.len()];
    let samples = measure::in_turns(plan, readers.len(), async |index, share| {
        for node in nodes.iter_mut() {
            redis::cmd("CONFIG")
                .arg("RESETSTAT")
                .exec_async(&mut node.connection)
                .await?;
        }
        let samples: Samples = match tasks {
            None => measure::sequential_calls(&mut readers[index], share).await?,
            Some(tasks) => measure::concurrent_calls(&readers[index], share, tasks).await?,
        };
        for (node, total) in nodes.iter_mut().zip(&mut calls[index]) {
            let counted = script_calls(&mut node.connection).await?;
            total.read_only += counted.read_only;
            total.read_write += counted.read_write;
            total.failed += counted.failed;
        }
        Ok(samples)
    })
    .await?;
    let in_flight = tasks.map_or_else(
        || "1 (sequential)".to_owned(),
        |tasks| format!("{tasks} concurrent"),
    );
    Ok(ReadFrom::ALL
        .into_iter()
        .zip(samples)
        .zip(calls)
        .map(|((read_from, samples), calls)| ReplicaRow {
            read_from: read_from.label(),
            in_flight: in_flight.clone(),
            summary: samples.summarize(),
            calls,
        })
        .collect())
}

async fn cluster_connection(
    seed: &str,
    read_from: ReadFrom,
) -> Result<ClusterConnection, BoxError> {
    // redis-rs fails a request after 500 ms by default; see RESPONSE_TIMEOUT.
    let builder =
        ClusterClientBuilder::new(vec![seed.to_owned()]).response_timeout(RESPONSE_TIMEOUT);
    let builder = match read_from {
        ReadFrom::PreferReplica => {
            builder.read_routing_strategy(RoundRobinReplicaStrategy::default())
        }
        ReadFrom::PrimaryOnly => builder,
    };
    Ok(builder.build()?.get_async_connection().await?)
}

/// The running nodes from `CLUSTER NODES` on the seed, each with a
/// connection of its own: primaries ordered by their first slot, then
/// their replicas in the same order.
async fn discover(seed: &str) -> Result<Vec<Node>, BoxError> {
    let seed_info = seed.into_connection_info()?;
    let ConnectionAddr::Tcp(seed_host, _) = seed_info.addr().clone() else {
        return Err("the cluster's URL must be redis:// (TCP) for the per-node counts".into());
    };
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(Some(RESPONSE_TIMEOUT));
    let mut connection = redis::Client::open(seed_info.clone())?
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    let text: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(&mut connection)
        .await?;
    let listed = parse_cluster_nodes(&text, &seed_host)?;
    let mut primaries: Vec<&ListedNode> =
        listed.iter().filter(|n| n.primary_id.is_none()).collect();
    primaries.sort_by_key(|node| node.first_slot);
    let mut ordered: Vec<(String, Option<usize>, &ListedNode)> = primaries
        .iter()
        .enumerate()
        .map(|(i, node)| (format!("primary {}", i + 1), None, *node))
        .collect();
    for (i, primary) in primaries.iter().enumerate() {
        let replicas: Vec<&ListedNode> = listed
            .iter()
            .filter(|node| node.primary_id.as_deref() == Some(primary.id.as_str()))
            .collect();
        for (j, replica) in replicas.iter().enumerate() {
            let label = if replicas.len() == 1 {
                format!("replica {}", i + 1)
            } else {
                format!("replica {}.{}", i + 1, j + 1)
            };
            ordered.push((label, Some(i), *replica));
        }
    }
    if !ordered.iter().any(|(_, primary, _)| primary.is_some()) {
        return Err("the cluster has no replica to read on".into());
    }
    let mut nodes = Vec::with_capacity(ordered.len());
    for (label, primary, listed) in ordered {
        let info = seed_info
            .clone()
            .set_addr(ConnectionAddr::Tcp(listed.host.clone(), listed.port));
        let connection = redis::Client::open(info)?
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        nodes.push(Node {
            label,
            primary,
            connection,
        });
    }
    Ok(nodes)
}

/// One line of `CLUSTER NODES`.
#[derive(Debug, PartialEq)]
struct ListedNode {
    id: String,
    host: String,
    port: u16,
    /// `None` for a primary.
    primary_id: Option<String>,
    /// The lowest slot a primary serves (`u16::MAX` for none).
    first_slot: u16,
}

/// The healthy primaries and replicas of `CLUSTER NODES`: `<id>
/// <ip:port@bus[,hostname]> <flags> <primary id or -> … <slots>…`. A node
/// listed without an IP is on the host the seed was reached at.
fn parse_cluster_nodes(text: &str, seed_host: &str) -> Result<Vec<ListedNode>, BoxError> {
    let mut nodes = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 8 {
            return Err(format!("CLUSTER NODES line too short: {line}").into());
        }
        let flags: Vec<&str> = fields[2].split(',').collect();
        if flags
            .iter()
            .any(|flag| matches!(*flag, "fail" | "fail?" | "handshake" | "noaddr"))
        {
            continue;
        }
        let address = fields[1].split(['@', ',']).next().unwrap_or_default();
        let (host, port) = address
            .rsplit_once(':')
            .ok_or_else(|| format!("CLUSTER NODES address without a port: {line}"))?;
        let host = if host.is_empty() { seed_host } else { host };
        let port: u16 = port.parse()?;
        let primary_id = if flags.contains(&"slave") {
            Some(fields[3].to_owned())
        } else if flags.contains(&"master") {
            None
        } else {
            continue;
        };
        let first_slot = fields[8..]
            .iter()
            .filter(|slot| !slot.starts_with('['))
            .filter_map(|slot| slot.split('-').next()?.parse::<u16>().ok())
            .min()
            .unwrap_or(u16::MAX);
        nodes.push(ListedNode {
            id: fields[0].to_owned(),
            host: host.to_owned(),
            port,
            primary_id,
            first_slot,
        });
    }
    Ok(nodes)
}

/// Waits until every replica has applied what its primary had written
/// when this was called, so that no read on a replica misses a document.
async fn wait_for_replicas(nodes: &mut [Node]) -> Result<(), BoxError> {
    let mut written = vec![0; nodes.len()];
    for (index, node) in nodes.iter_mut().enumerate() {
        if node.primary.is_none() {
            written[index] =
                info_number(&mut node.connection, "replication", "master_repl_offset").await?;
        }
    }
    let deadline = Instant::now() + REPLICATION_TIMEOUT;
    for node in nodes.iter_mut() {
        let Some(primary) = node.primary else {
            continue;
        };
        loop {
            let applied =
                info_number(&mut node.connection, "replication", "slave_repl_offset").await?;
            if applied >= written[primary] {
                break;
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{} applied its primary's stream up to {applied}, not {} after {:?}",
                    node.label, written[primary], REPLICATION_TIMEOUT
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(())
}

async fn info_number(
    connection: &mut MultiplexedConnection,
    section: &str,
    field: &str,
) -> Result<u64, BoxError> {
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query_async(connection)
        .await?;
    let value = text
        .lines()
        .find_map(|line| line.trim_end().strip_prefix(field)?.strip_prefix(':'))
        .ok_or_else(|| format!("INFO {section} has no {field}"))?;
    Ok(value.parse()?)
}

async fn server_version(connection: &mut MultiplexedConnection) -> Result<String, BoxError> {
    let text: String = redis::cmd("INFO")
        .arg("server")
        .query_async(connection)
        .await?;
    Ok(text
        .lines()
        .find_map(|line| line.trim_end().strip_prefix("redis_version:"))
        .unwrap_or("unknown")
        .to_owned())
}

async fn script_calls(connection: &mut MultiplexedConnection) -> Result<NodeCalls, BoxError> {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(connection)
        .await?;
    let stats = parse_commandstats(&text);
    let stat = |name: &str| stats.get(name).copied().unwrap_or_default();
    let (evalsha_ro, eval_ro, evalsha, eval) = (
        stat("evalsha_ro"),
        stat("eval_ro"),
        stat("evalsha"),
        stat("eval"),
    );
    Ok(NodeCalls {
        read_only: evalsha_ro.calls + eval_ro.calls,
        read_write: evalsha.calls + eval.calls,
        failed: [evalsha_ro, eval_ro, evalsha, eval]
            .iter()
            .map(|stat| stat.failed_calls)
            .sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_lines_give_roles_addresses_and_first_slots() {
        let text = "\
a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 5461-10922\n\
a2 127.0.0.1:7002@17002,host-b master - 0 1 2 connected 10923-16383\n\
a0 :7000@17000 master - 0 1 3 connected 0-5460 [5460->-a1]\n\
b0 127.0.0.1:7003@17003 slave a0 0 1 3 connected\n\
c9 127.0.0.1:7009@17009 slave,fail a1 0 1 1 disconnected\n";
        let nodes = parse_cluster_nodes(text, "10.0.0.5").unwrap();
        assert_eq!(nodes.len(), 4);
        assert_eq!((nodes[0].port, nodes[0].first_slot), (7001, 5461));
        assert_eq!(nodes[1].port, 7002);
        assert_eq!(
            (nodes[2].host.as_str(), nodes[2].first_slot),
            ("10.0.0.5", 0)
        );
        assert_eq!(nodes[3].primary_id.as_deref(), Some("a0"));
        assert_eq!(nodes[3].first_slot, u16::MAX);
    }
}
