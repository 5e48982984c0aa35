//! Batches on a cluster: what `cluster::run_batch` and
//! `NodeConnections::run_batch` cost against the ways a client does the
//! same work without them.
//!
//! Run: `cargo run --release -p redis-script-bench --bin cluster [-- ROUNDS]`
//!
//! It starts a throwaway cluster of 3 primaries on loopback (the
//! `redis-server` the tests use) and measures, `ROUNDS` times each (20
//! unless given), the ways taking turns:
//!
//! - 1,000 calls of `lua/counter_increment.lua` on keys spread over every
//!   slot: one `cluster::run_batch`; one `NodeConnections::run_batch`; 32
//!   tasks making single calls on one shared cluster connection; a
//!   hand-written pipeline of `EVALSHA` per node (the slot map read once,
//!   outside the timing), sent at once;
//! - 32 calls in one slot: the two batches against a hand-written pipeline
//!   of `EVALSHA`.
//!
//! Request bytes are what the primaries received during one run of each
//! way (`INFO stats` `total_net_input_bytes`, less what reading it costs),
//! the batches' slot map requests included; requests are the ones each way
//! makes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use redis::Value;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::SingleNodeRoutingInfo;
use redis_script::{Batch, cluster, redis_script};
use redis_script_test::RedisCluster;

#[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
async fn counter_increment(counter: &str, amount: i64) -> i64;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A primary's address, and what is sent to it.
type NodePipelines = Vec<((String, u16), redis::Pipeline)>;

/// Calls in the batch across slots.
const CALLS: usize = 1_000;
/// Calls in the batch in one slot, and tasks of the single-call way.
const SMALL: usize = 32;

fn spread_key(index: usize) -> String {
    format!("bench:{{{index}}}")
}

fn one_slot_key(index: usize) -> String {
    format!("bench:{{one}}:{index}")
}

/// One way of doing the work, measured.
struct Row {
    label: &'static str,
    requests: String,
    bytes: u64,
    samples: Vec<Duration>,
}

impl Row {
    fn percentile(&self, percent: f64) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort_unstable();
        let rank = ((percent / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted
            .get(rank.saturating_sub(1).min(sorted.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    }
}

/// The primaries' addresses by slot range, as `CLUSTER SLOTS` lists them.
async fn slot_map(
    connection: &mut ClusterConnection,
) -> Result<Vec<(u16, u16, String, u16)>, BoxError> {
    let reply: Value = connection
        .route_command(
            redis::cmd("CLUSTER").arg("SLOTS").to_owned(),
            redis::cluster_routing::RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
        )
        .await?;
    let Value::Array(ranges) = reply else {
        return Err("CLUSTER SLOTS did not answer an array".into());
    };
    let mut map = Vec::new();
    for range in ranges {
        let Value::Array(fields) = range else {
            continue;
        };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(primary))) =
            (fields.first(), fields.get(1), fields.get(2))
        else {
            continue;
        };
        let host = match primary.first() {
            Some(Value::BulkString(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
            _ => continue,
        };
        let Some(Value::Int(port)) = primary.get(1) else {
            continue;
        };
        map.push((
            u16::try_from(*start)?,
            u16::try_from(*end)?,
            host,
            u16::try_from(*port)?,
        ));
    }
    Ok(map)
}

/// The hand-written way: one `EVALSHA` pipeline per node, sent at once.
fn per_node_pipelines(
    keys: &[String],
    map: &[(u16, u16, String, u16)],
) -> Result<NodePipelines, BoxError> {
    let mut by_node: BTreeMap<(String, u16), redis::Pipeline> = BTreeMap::new();
    for key in keys {
        let slot = cluster::key_slot(key.as_bytes());
        let (_, _, host, port) = map
            .iter()
            .find(|(start, end, _, _)| (*start..=*end).contains(&slot))
            .ok_or("a slot without a primary")?;
        by_node
            .entry((host.clone(), *port))
            .or_default()
            .add_command(counter_increment::call(key, 1).command());
    }
    Ok(by_node.into_iter().collect())
}

async fn run_per_node(
    connection: &ClusterConnection,
    pipelines: &[((String, u16), redis::Pipeline)],
) -> Result<(), BoxError> {
    let sends = pipelines.iter().map(|((host, port), pipeline)| {
        let mut connection = connection.clone();
        async move {
            connection
                .route_pipeline(
                    pipeline.clone(),
                    0,
                    pipeline.len(),
                    SingleNodeRoutingInfo::ByAddress {
                        host: host.clone(),
                        port: *port,
                    },
                )
                .await
        }
    });
    for replies in futures_util::future::join_all(sends).await {
        if let Some(error) = replies?
            .iter()
            .find(|reply| matches!(reply, Value::ServerError(_)))
        {
            return Err(format!("a hand-written EVALSHA failed: {error:?}").into());
        }
    }
    Ok(())
}

/// One way of sending the work.
#[derive(Clone, Copy)]
enum Way {
    /// `cluster::run_batch`: one request per slot through the cluster
    /// connection.
    PerSlot,
    /// `NodeConnections::run_batch`: one request per primary.
    PerNode,
    /// 32 tasks of single calls on one shared cluster connection.
    Tasks,
    /// A hand-written `EVALSHA` pipeline per primary.
    HandWritten,
}

/// What the work is, and its three forms.
struct Work<'a> {
    keys: &'a [String],
    batch: &'a Batch,
    pipelines: &'a NodePipelines,
}

async fn run(
    way: Way,
    work: &Work<'_>,
    connection: &mut ClusterConnection,
    nodes: &cluster::NodeConnections,
) -> Result<(), BoxError> {
    match way {
        Way::PerSlot => {
            cluster::run_batch(connection, work.batch).await?;
        }
        Way::PerNode => {
            nodes.run_batch(work.batch).await?;
        }
        Way::Tasks => {
            let tasks = (0..SMALL).map(|task| {
                let mut connection = connection.clone();
                let keys: Vec<&String> = work.keys.iter().skip(task).step_by(SMALL).collect();
                async move {
                    for key in keys {
                        counter_increment(&mut connection, key, 1).await?;
                    }
                    Ok::<(), redis_script::Error>(())
                }
            });
            for done in futures_util::future::join_all(tasks).await {
                done?;
            }
        }
        Way::HandWritten => run_per_node(connection, work.pipelines).await?,
    }
    Ok(())
}

/// The request bytes the primaries have received so far
/// (`total_net_input_bytes`).
fn received(nodes: &RedisCluster) -> Result<u64, BoxError> {
    let mut total = 0;
    for primary in nodes.primaries() {
        total += primary
            .info("stats")
            .get("total_net_input_bytes")
            .ok_or("INFO stats without total_net_input_bytes")?
            .parse::<u64>()?;
    }
    Ok(total)
}

/// The request bytes one run of `way` sends, as the primaries count them
/// (less what reading the count costs).
async fn request_bytes(
    way: Way,
    work: &Work<'_>,
    (cluster_nodes, connection, nodes): (
        &RedisCluster,
        &mut ClusterConnection,
        &cluster::NodeConnections,
    ),
) -> Result<u64, BoxError> {
    let idle = {
        let before = received(cluster_nodes)?;
        received(cluster_nodes)? - before
    };
    let before = received(cluster_nodes)?;
    run(way, work, connection, nodes).await?;
    Ok((received(cluster_nodes)? - before).saturating_sub(idle))
}

async fn measure(rounds: usize) -> Result<(Vec<Row>, Vec<Row>), BoxError> {
    let cluster_nodes = RedisCluster::start(3, 0);
    let mut connection = cluster_nodes.connection().await;
    let nodes = cluster::NodeConnections::new(cluster_nodes.urls()[0].as_str())?;
    cluster::preload(&mut connection, &[&counter_increment::SCRIPT]).await?;
    let map = slot_map(&mut connection).await?;

    let spread: Vec<String> = (0..CALLS).map(spread_key).collect();
    let one_slot: Vec<String> = (0..SMALL).map(one_slot_key).collect();
    let batch_of = |keys: &[String]| -> Result<Batch, BoxError> {
        let mut batch = Batch::pipeline();
        for key in keys {
            let _ = batch.add(counter_increment::call(key, 1))?;
        }
        Ok(batch)
    };
    let (spread_batch, one_slot_batch) = (batch_of(&spread)?, batch_of(&one_slot)?);
    let spread_pipelines = per_node_pipelines(&spread, &map)?;
    let one_slot_pipelines = per_node_pipelines(&one_slot, &map)?;
    let across_work = Work {
        keys: &spread,
        batch: &spread_batch,
        pipelines: &spread_pipelines,
    };
    let single_work = Work {
        keys: &one_slot,
        batch: &one_slot_batch,
        pipelines: &one_slot_pipelines,
    };
    let slots = spread
        .iter()
        .map(|key| cluster::key_slot(key.as_bytes()))
        .collect::<std::collections::BTreeSet<u16>>()
        .len();
    let primaries = spread_pipelines.len();
    let row = |way: Way, label: &'static str, requests: String| {
        (
            way,
            Row {
                label,
                requests,
                bytes: 0,
                samples: Vec::new(),
            },
        )
    };
    let mut across = [
        row(
            Way::PerSlot,
            "`cluster::run_batch`",
            format!("{} (slot map + one per slot)", slots + 1),
        ),
        row(
            Way::PerNode,
            "`NodeConnections::run_batch`",
            format!("{primaries} (one per primary; the slot map read on the first batch only)"),
        ),
        row(
            Way::Tasks,
            "32 tasks of single calls, one shared connection",
            CALLS.to_string(),
        ),
        row(
            Way::HandWritten,
            "hand-written `EVALSHA` pipeline per node, at once",
            format!("{primaries} (the slot map read once before)"),
        ),
    ];
    let mut single = [
        row(Way::PerSlot, "`cluster::run_batch`", "1".to_owned()),
        row(Way::PerNode, "`NodeConnections::run_batch`", "1".to_owned()),
        row(
            Way::HandWritten,
            "hand-written `EVALSHA` pipeline",
            "1".to_owned(),
        ),
    ];
    // The first round warms up (every node has answered the script) and is
    // not kept; the bytes are counted on a run of their own after it.
    for round in 0..=rounds {
        for (rows, work) in [
            (&mut across[..], &across_work),
            (&mut single[..], &single_work),
        ] {
            for (way, row) in rows.iter_mut() {
                if round == 1 {
                    row.bytes =
                        request_bytes(*way, work, (&cluster_nodes, &mut connection, &nodes))
                            .await?;
                }
                let start = Instant::now();
                run(*way, work, &mut connection, &nodes).await?;
                if round > 0 {
                    row.samples.push(start.elapsed());
                }
            }
        }
    }
    let rows = |rows: Vec<(Way, Row)>| rows.into_iter().map(|(_, row)| row).collect();
    Ok((rows(across.into()), rows(single.into())))
}

fn table(rows: &[Row], calls: usize) -> String {
    let mut out = String::from(
        "| way | requests | request bytes | p50 ms | p99 ms | calls/s (p50) | µs per call (p50) |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let p50 = row.percentile(50.0).as_secs_f64();
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.0} | {:.2} |\n",
            row.label,
            row.requests,
            row.bytes,
            p50 * 1e3,
            row.percentile(99.0).as_secs_f64() * 1e3,
            calls as f64 / p50,
            p50 * 1e6 / calls as f64,
        ));
    }
    out
}

fn main() -> Result<(), BoxError> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(text) => text.parse()?,
        None => 20,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (across, single) = runtime.block_on(measure(rounds))?;
    println!("### {CALLS} calls over every slot of 3 primaries ({rounds} rounds)\n");
    print!("{}", table(&across, CALLS));
    println!("\n### {SMALL} calls in one slot ({rounds} rounds)\n");
    print!("{}", table(&single, SMALL));
    Ok(())
}
