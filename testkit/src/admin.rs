//! Short-lived synchronous connections used by the harness itself, and the
//! parsers for the text and arrays Redis answers with.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::patience::scaled;
use redis::{Cmd, ConnectionAddr, FromRedisValue, IntoConnectionInfo, Value};

/// How long the harness waits to connect to one of its own servers.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long the harness waits for one reply from one of its own servers.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// A client for harness-internal commands on `127.0.0.1:port`.
///
/// It skips redis-rs's `CLIENT SETINFO` handshake, so the harness's own
/// connections add nothing to `INFO commandstats` but the commands it sends.
pub(crate) fn client(port: u16) -> redis::Client {
    let info = ConnectionAddr::Tcp("127.0.0.1".to_owned(), port)
        .into_connection_info()
        .unwrap_or_else(|e| panic!("cannot build connection info for 127.0.0.1:{port}: {e}"));
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    redis::Client::open(info.set_redis_settings(settings))
        .unwrap_or_else(|e| panic!("cannot build a client for 127.0.0.1:{port}: {e}"))
}

/// Connects to `127.0.0.1:port` with bounded connect and I/O timeouts.
pub(crate) fn connect(port: u16) -> Result<redis::Connection, String> {
    let con = client(port)
        .get_connection_with_timeout(scaled(CONNECT_TIMEOUT))
        .map_err(|e| format!("cannot connect to 127.0.0.1:{port}: {e}"))?;
    con.set_read_timeout(Some(scaled(IO_TIMEOUT)))
        .and_then(|()| con.set_write_timeout(Some(scaled(IO_TIMEOUT))))
        .map_err(|e| format!("cannot set timeouts on 127.0.0.1:{port}: {e}"))?;
    Ok(con)
}

/// Runs one command on a fresh connection to `127.0.0.1:port`.
pub(crate) fn query<T: FromRedisValue>(port: u16, cmd: &Cmd) -> Result<T, String> {
    let mut con = connect(port)?;
    cmd.query(&mut con)
        .map_err(|e| format!("{} on 127.0.0.1:{port} failed: {e}", describe(cmd)))
}

/// Like [`query`], panicking with the error.
pub(crate) fn query_or_panic<T: FromRedisValue>(port: u16, cmd: &Cmd) -> T {
    query(port, cmd).unwrap_or_else(|e| panic!("{e}"))
}

/// `INFO <section>` on `127.0.0.1:port`, parsed into `field => value`.
pub(crate) fn info(port: u16, section: &str) -> Result<BTreeMap<String, String>, String> {
    let text: String = query(port, redis::cmd("INFO").arg(section))?;
    Ok(parse_info(&text))
}

/// The command name and arguments, for error messages.
fn describe(cmd: &Cmd) -> String {
    cmd.args_iter()
        .map(|arg| match arg {
            redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            redis::Arg::Cursor => "<cursor>".to_owned(),
            _ => "<arg>".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses `INFO` output (`# Section` headers, `field:value` lines, CRLF).
pub(crate) fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// One entry of `CLUSTER SLOTS`: a slot range, its primary, its replicas.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SlotRange {
    pub(crate) start: u16,
    pub(crate) end: u16,
    pub(crate) primary_port: u16,
    pub(crate) replica_ports: Vec<u16>,
}

/// Parses the reply of `CLUSTER SLOTS`, sorted by start slot, replicas sorted.
///
/// Each entry is `[start, end, [ip, port, id, …], [ip, port, id, …]…]`: the
/// first node is the primary, the rest are replicas.
pub(crate) fn parse_cluster_slots(reply: &Value) -> Result<Vec<SlotRange>, String> {
    let bad = || format!("unexpected CLUSTER SLOTS reply: {reply:?}");
    let Value::Array(entries) = reply else {
        return Err(bad());
    };
    let mut ranges = Vec::with_capacity(entries.len());
    for entry in entries {
        let Value::Array(items) = entry else {
            return Err(bad());
        };
        let int = |v: Option<&Value>| match v {
            Some(Value::Int(i)) => u16::try_from(*i).map_err(|_| bad()),
            _ => Err(bad()),
        };
        let node_port = |v: &Value| match v {
            Value::Array(node) => int(node.get(1)),
            _ => Err(bad()),
        };
        let start = int(items.first())?;
        let end = int(items.get(1))?;
        let primary_port = node_port(items.get(2).ok_or_else(bad)?)?;
        let mut replica_ports = items
            .iter()
            .skip(3)
            .map(node_port)
            .collect::<Result<Vec<_>, _>>()?;
        replica_ports.sort_unstable();
        ranges.push(SlotRange {
            start,
            end,
            primary_port,
            replica_ports,
        });
    }
    ranges.sort();
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_fields_are_parsed() {
        let text = "# Server\r\nredis_version:7.0.15\r\nprocess_id:42\r\n\r\n# Clients\r\nconnected_clients:1\r\n";
        let info = parse_info(text);
        assert_eq!(info["redis_version"], "7.0.15");
        assert_eq!(info["process_id"], "42");
        assert_eq!(info["connected_clients"], "1");
    }

    #[test]
    fn cluster_slots_are_parsed() {
        let node = |port: i64| {
            Value::Array(vec![
                Value::BulkString(b"127.0.0.1".to_vec()),
                Value::Int(port),
                Value::BulkString(b"id".to_vec()),
                Value::Array(vec![]),
            ])
        };
        let reply = Value::Array(vec![
            Value::Array(vec![Value::Int(5461), Value::Int(10922), node(2), node(5)]),
            Value::Array(vec![
                Value::Int(0),
                Value::Int(5460),
                node(1),
                node(7),
                node(4),
            ]),
        ]);
        let ranges = parse_cluster_slots(&reply).unwrap();
        assert_eq!(
            ranges,
            vec![
                SlotRange {
                    start: 0,
                    end: 5460,
                    primary_port: 1,
                    replica_ports: vec![4, 7]
                },
                SlotRange {
                    start: 5461,
                    end: 10922,
                    primary_port: 2,
                    replica_ports: vec![5]
                },
            ]
        );
        assert!(parse_cluster_slots(&Value::Int(1)).is_err());
    }
}
