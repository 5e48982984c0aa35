//! Batches on a cluster: what `cluster::run_batch` costs against the ways
//! a client does the same work without it.
//!
//! Run: `cargo run --release -p redis-script-bench --bin cluster [-- ROUNDS]`
//!
//! It starts a throwaway cluster of 3 primaries on loopback (the
//! `redis-server` the tests use) and measures, `ROUNDS` times each (20
//! unless given), the ways taking turns:
//!
//! - 1,000 calls of `lua/counter_increment.lua` on keys spread over every
//!   slot: one `cluster::run_batch`; 32 tasks making single calls on one
//!   shared cluster connection; a hand-written pipeline of `EVALSHA` per
//!   node (the slot map read once, outside the timing), sent at once;
//! - 32 calls in one slot: one `cluster::run_batch` against a hand-written
//!   pipeline of `EVALSHA`.
//!
//! Request bytes are the RESP each way writes (the batch's slot map
//! request included); requests are the ones handed to the connection.

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
    bytes: usize,
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

/// The bytes a batch of `keys` writes, as `cluster::run_batch` sends it:
/// the slot map request (from 8 slots on), and per slot a transaction with
/// the body once, a slot's lone call as `EVALSHA` once its node got the
/// body.
fn batch_bytes(keys: &[String], map: &[(u16, u16, String, u16)]) -> usize {
    let mut slots: BTreeMap<u16, Vec<&String>> = BTreeMap::new();
    for key in keys {
        slots
            .entry(cluster::key_slot(key.as_bytes()))
            .or_default()
            .push(key);
    }
    let mut bytes = 0;
    if slots.len() >= 8 {
        bytes += redis::cmd("CLUSTER")
            .arg("SLOTS")
            .get_packed_command()
            .len();
    }
    let node_of = |slot: u16| {
        map.iter()
            .position(|(start, end, _, _)| (*start..=*end).contains(&slot))
    };
    let mut body_sent_to: Vec<Option<usize>> = Vec::new();
    for (slot, keys) in &slots {
        let node = node_of(*slot);
        let lone_by_sha1 = keys.len() == 1 && slots.len() >= 8 && body_sent_to.contains(&node);
        let mut transaction = redis::Pipeline::new();
        transaction.atomic();
        for (index, key) in keys.iter().enumerate() {
            let call = counter_increment::call(key, 1);
            transaction.add_command(if index == 0 && !lone_by_sha1 {
                call.eval_command()
            } else {
                call.command()
            });
        }
        if !lone_by_sha1 {
            body_sent_to.push(node);
        }
        bytes += transaction.get_packed_pipeline().len();
    }
    bytes
}

fn evalsha_bytes(keys: &[String]) -> usize {
    keys.iter()
        .map(|key| {
            counter_increment::call(key, 1)
                .command()
                .get_packed_command()
                .len()
        })
        .sum()
}

async fn measure(rounds: usize) -> Result<(Vec<Row>, Vec<Row>), BoxError> {
    let cluster_nodes = RedisCluster::start(3, 0);
    let mut connection = cluster_nodes.connection().await;
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
    let spread_batch = batch_of(&spread)?;
    let one_slot_batch = batch_of(&one_slot)?;
    let spread_pipelines = per_node_pipelines(&spread, &map)?;
    let one_slot_pipelines = per_node_pipelines(&one_slot, &map)?;
    let nodes = spread_pipelines.len();

    let mut across = [
        Row {
            label: "`cluster::run_batch`, one batch",
            requests: format!("{} (slot map + one per slot)", CALLS + 1),
            bytes: batch_bytes(&spread, &map),
            samples: Vec::new(),
        },
        Row {
            label: "32 tasks of single calls, one shared connection",
            requests: CALLS.to_string(),
            bytes: evalsha_bytes(&spread),
            samples: Vec::new(),
        },
        Row {
            label: "hand-written `EVALSHA` pipeline per node, at once",
            requests: format!("{nodes} (the slot map read once before)"),
            bytes: spread_pipelines
                .iter()
                .map(|(_, pipeline)| pipeline.get_packed_pipeline().len())
                .sum(),
            samples: Vec::new(),
        },
    ];
    let mut single = [
        Row {
            label: "`cluster::run_batch`, one slot",
            requests: "1".to_owned(),
            bytes: batch_bytes(&one_slot, &map),
            samples: Vec::new(),
        },
        Row {
            label: "hand-written `EVALSHA` pipeline",
            requests: "1".to_owned(),
            bytes: one_slot_pipelines
                .iter()
                .map(|(_, pipeline)| pipeline.get_packed_pipeline().len())
                .sum(),
            samples: Vec::new(),
        },
    ];
    // The first round warms up and is not kept.
    for round in 0..=rounds {
        for (way, row) in across.iter_mut().enumerate() {
            let start = Instant::now();
            match way {
                0 => {
                    cluster::run_batch(&mut connection, &spread_batch).await?;
                }
                1 => {
                    let tasks = (0..SMALL).map(|task| {
                        let mut connection = connection.clone();
                        let keys: Vec<&String> = spread.iter().skip(task).step_by(SMALL).collect();
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
                _ => run_per_node(&connection, &spread_pipelines).await?,
            }
            if round > 0 {
                row.samples.push(start.elapsed());
            }
        }
        for (way, row) in single.iter_mut().enumerate() {
            let start = Instant::now();
            match way {
                0 => {
                    cluster::run_batch(&mut connection, &one_slot_batch).await?;
                }
                _ => run_per_node(&connection, &one_slot_pipelines).await?,
            }
            if round > 0 {
                row.samples.push(start.elapsed());
            }
        }
    }
    Ok((across.into(), single.into()))
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
