//! The nodes of a cluster, as `CLUSTER SLOTS` lists them: where preloads
//! and deploys go.

use redis::Value;

use crate::error::{Error, Origin};
use crate::reply::render_reply;

/// Which nodes of a cluster an operation runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nodes {
    /// Primaries and replicas.
    All,
    /// Primaries only.
    Primaries,
}

/// `CLUSTER SLOTS`, asked of any node.
async fn cluster_slots(
    connection: &mut redis::cluster_async::ClusterConnection,
) -> redis::RedisResult<Value> {
    use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};

    connection
        .route_command(
            redis::cmd("CLUSTER").arg("SLOTS").to_owned(),
            RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
        )
        .await
}

/// `(host, port)` of the cluster's nodes as `CLUSTER SLOTS` lists them
/// (asked of any node), without repeats; errors are reported for `label`.
pub(crate) async fn cluster_nodes(
    connection: &mut redis::cluster_async::ClusterConnection,
    label: &'static str,
    which: Nodes,
) -> Result<Vec<(String, u16)>, Error> {
    let topology = cluster_slots(connection)
        .await
        .map_err(|error| Error::from_failure(Origin::label(label), error))?;
    let nodes = node_addresses(&topology, which);
    if nodes.is_empty() {
        return Err(Error::Decode {
            operation: label,
            expected: "CLUSTER SLOTS listing at least one node",
            reply: render_reply(&topology),
            reason: "no node address found".to_owned(),
        });
    }
    Ok(nodes)
}

/// Each range of slots with the `(host, port)` of its primary, as `CLUSTER
/// SLOTS` lists them (asked of any node).
pub(crate) async fn slot_primaries(
    connection: &mut redis::cluster_async::ClusterConnection,
) -> redis::RedisResult<Vec<(u16, u16, String, u16)>> {
    Ok(primaries_of(&cluster_slots(connection).await?))
}

/// Each range of slots with the `(host, port)` of its primary, from a
/// `CLUSTER SLOTS` reply.
pub(crate) fn primaries_of(topology: &Value) -> Vec<(u16, u16, String, u16)> {
    let Value::Array(ranges) = topology else {
        return Vec::new();
    };
    let mut primaries = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Value::Array(fields) = range else {
            continue;
        };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(primary)) =
            (fields.first(), fields.get(1), fields.get(2))
        else {
            continue;
        };
        let (Ok(start), Ok(end), Some((host, port))) = (
            u16::try_from(*start),
            u16::try_from(*end),
            node_address(primary),
        ) else {
            continue;
        };
        primaries.push((start, end, host, port));
    }
    primaries
}

/// `(host, port)` of every node (or every primary) listed by `CLUSTER
/// SLOTS`, without repeats.
fn node_addresses(topology: &Value, which: Nodes) -> Vec<(String, u16)> {
    let mut nodes: Vec<(String, u16)> = Vec::new();
    let Value::Array(ranges) = topology else {
        return nodes;
    };
    for range in ranges {
        let Value::Array(fields) = range else {
            continue;
        };
        // [start, end, primary, replica…]
        let listed = match which {
            Nodes::All => fields.len(),
            Nodes::Primaries => 3,
        };
        for node in fields.iter().take(listed).skip(2) {
            let Some(address) = node_address(node) else {
                continue;
            };
            if !nodes.contains(&address) {
                nodes.push(address);
            }
        }
    }
    nodes
}

/// `(host, port)` of one node of a `CLUSTER SLOTS` range: `[host, port,
/// id, …]`.
fn node_address(node: &Value) -> Option<(String, u16)> {
    let Value::Array(parts) = node else {
        return None;
    };
    let host = match parts.first()? {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::SimpleString(text) => text.clone(),
        _ => return None,
    };
    let Value::Int(port) = parts.get(1)? else {
        return None;
    };
    Some((host, u16::try_from(*port).ok()?))
}
