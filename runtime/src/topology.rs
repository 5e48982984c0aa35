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

/// The slot map, as `CLUSTER SLOTS` gives it (asked of any node).
pub(crate) async fn slot_map(
    connection: &mut redis::cluster_async::ClusterConnection,
) -> redis::RedisResult<SlotMap> {
    Ok(SlotMap::from_cluster_slots(
        &cluster_slots(connection).await?,
    ))
}

/// A node, as `CLUSTER SLOTS` and redirections name it.
pub(crate) type Address = (String, u16);

/// Which primary serves each slot, and its replicas, as `CLUSTER SLOTS`
/// listed them.
pub(crate) struct SlotMap {
    /// `(first slot, last slot, node)`, by first slot.
    ranges: Vec<(u16, u16, usize)>,
    /// Each primary once, however many ranges it serves.
    nodes: Vec<Address>,
    /// Per primary (by its place in `nodes`), its replicas.
    replicas: Vec<Vec<Address>>,
}

impl SlotMap {
    /// The map a `CLUSTER SLOTS` reply describes: each range of slots with
    /// its primary (`[start, end, [host, port, id, …], replica…]`).
    pub(crate) fn from_cluster_slots(topology: &Value) -> Self {
        let mut map = SlotMap {
            ranges: Vec::new(),
            nodes: Vec::new(),
            replicas: Vec::new(),
        };
        let Value::Array(ranges) = topology else {
            return map;
        };
        for range in ranges {
            let Value::Array(fields) = range else {
                continue;
            };
            let (Some(Value::Int(start)), Some(Value::Int(end)), Some(primary)) =
                (fields.first(), fields.get(1), fields.get(2))
            else {
                continue;
            };
            let (Ok(start), Ok(end), Some(address)) = (
                u16::try_from(*start),
                u16::try_from(*end),
                node_address(primary),
            ) else {
                continue;
            };
            let node = match map.nodes.iter().position(|known| *known == address) {
                Some(node) => node,
                None => {
                    map.nodes.push(address);
                    map.replicas.push(Vec::new());
                    map.nodes.len() - 1
                }
            };
            if let Some(known) = map.replicas.get_mut(node) {
                for replica in fields.iter().skip(3).filter_map(node_address) {
                    if !known.contains(&replica) {
                        known.push(replica);
                    }
                }
            }
            map.ranges.push((start, end, node));
        }
        map.ranges.sort_unstable();
        map
    }

    /// The primary of `slot`, if any serves it.
    pub(crate) fn node_of(&self, slot: u16) -> Option<&Address> {
        self.nodes.get(self.primary_index(slot)?)
    }

    /// The replicas of the primary of `slot` (none when no primary serves
    /// it).
    pub(crate) fn replicas_of(&self, slot: u16) -> &[Address] {
        self.primary_index(slot)
            .and_then(|node| self.replicas.get(node))
            .map_or(&[], Vec::as_slice)
    }

    fn primary_index(&self, slot: u16) -> Option<usize> {
        let after = self.ranges.partition_point(|(start, _, _)| *start <= slot);
        let (_, end, node) = self.ranges.get(after.checked_sub(1)?)?;
        (slot <= *end).then_some(*node)
    }

    /// Every primary, once each, in the order listed.
    pub(crate) fn nodes(&self) -> &[Address] {
        &self.nodes
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::slot_range as range;

    #[test]
    fn the_slot_map_finds_each_slot_s_primary() {
        let node = |port: u16| ("127.0.0.1".to_owned(), port);
        // As `CLUSTER SLOTS` may list them: in no order, one node serving
        // two ranges, and slots 100–199 served by none.
        let map = SlotMap::from_cluster_slots(&Value::Array(vec![
            range(200, 16000, 7002),
            range(0, 49, 7000),
            range(50, 99, 7001),
            range(16001, 16383, 7000),
        ]));
        assert_eq!(map.nodes(), [node(7002), node(7000), node(7001)]);
        for (slot, port) in [
            (0, 7000),
            (49, 7000),
            (50, 7001),
            (99, 7001),
            (200, 7002),
            (16000, 7002),
            (16001, 7000),
            (16383, 7000),
        ] {
            assert_eq!(map.node_of(slot), Some(&node(port)), "slot {slot}");
        }
        assert_eq!(map.node_of(100), None);
        assert_eq!(map.node_of(199), None);
        assert_eq!(SlotMap::from_cluster_slots(&Value::Nil).node_of(5), None);
    }

    #[test]
    fn the_slot_map_finds_each_slot_s_replicas() {
        let node = |port: u16| ("127.0.0.1".to_owned(), port);
        let with_replicas = crate::test_support::slot_range_with_replicas;
        let map = SlotMap::from_cluster_slots(&Value::Array(vec![
            with_replicas(0, 99, 7000, &[7003, 7004]),
            with_replicas(100, 199, 7001, &[]),
            with_replicas(200, 299, 7000, &[7003]),
        ]));
        assert_eq!(map.replicas_of(5), [node(7003), node(7004)]);
        assert_eq!(map.replicas_of(250), [node(7003), node(7004)]);
        assert!(map.replicas_of(150).is_empty());
        assert!(map.replicas_of(300).is_empty());
        assert_eq!(map.nodes(), [node(7000), node(7001)]);
    }
}
