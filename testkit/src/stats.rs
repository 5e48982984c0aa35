//! Server-side statistics: `INFO commandstats`, `CONFIG RESETSTAT`,
//! `SCRIPT FLUSH`.

use std::collections::BTreeMap;

use crate::{RedisCluster, RedisServer, admin};

/// One `cmdstat_<name>` line of `INFO commandstats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandStat {
    /// Calls since the last reset, failed ones included.
    pub calls: u64,
    /// Calls the command itself failed (e.g. `EVALSHA` answered `NOSCRIPT`).
    pub failed_calls: u64,
    /// Calls refused before running (e.g. wrong arity, `OOM`).
    pub rejected_calls: u64,
}

/// Parses `INFO commandstats` into `command => stat`.
///
/// `cmdstat_evalsha:calls=3,usec=…,failed_calls=1` becomes `"evalsha"` with
/// 3 calls, 1 failed; names are lowercase and subcommands keep Redis's
/// spelling: `cmdstat_script|load:…` becomes `"script|load"`.
pub fn parse_commandstats(text: &str) -> BTreeMap<String, CommandStat> {
    text.lines()
        .filter_map(|line| {
            let (field, value) = line.trim_end().split_once(':')?;
            let name = field.strip_prefix("cmdstat_")?;
            let mut stat = CommandStat::default();
            for pair in value.split(',') {
                let Some((key, number)) = pair.split_once('=') else {
                    continue;
                };
                let number = number.parse().unwrap_or(0);
                match key {
                    "calls" => stat.calls = number,
                    "failed_calls" => stat.failed_calls = number,
                    "rejected_calls" => stat.rejected_calls = number,
                    _ => {}
                }
            }
            Some((name.to_ascii_lowercase(), stat))
        })
        .collect()
}

/// Server-side command statistics and script cache control, for one
/// [`RedisServer`] or summed over the running nodes of a [`RedisCluster`].
///
/// The harness's own connections skip redis-rs's `CLIENT SETINFO` handshake,
/// but the commands the harness sends are counted like any other: after
/// [`reset_stats`](Self::reset_stats), every
/// [`command_calls`](Self::command_calls) adds one `info` call per node, which
/// shows up in the next reading. Connections made by the code under test
/// (e.g. [`RedisServer::client`]) do send `CLIENT SETINFO` (counted as
/// `client|setinfo`), and cluster clients also send `CLUSTER SLOTS`.
///
/// On a cluster, replicas execute the writes their primary replicates to them,
/// and those count in the replica's statistics too: one `SET` sent by a client
/// shows up once on its primary and once on each of that primary's replicas.
/// Scripts are replicated as their effects (`MULTI`, the writes, `EXEC`), so
/// `evalsha`, `eval` and `script|load` are counted only where a client sent
/// them. Replicas also count the `PING` their primary sends every second
/// (cluster nodes run with `--repl-ping-replica-period 1`). Sum over
/// [`RedisCluster::primaries`] to count client commands only.
pub trait Stats {
    /// `INFO commandstats` as `command => calls`, e.g. `"evalsha" => 1`.
    /// Subcommands keep Redis's spelling: `"script|load"`, `"config|resetstat"`;
    /// Redis 6.x counts them under their command (`"script"`).
    /// Commands never called since the last reset are absent.
    ///
    /// # Panics
    ///
    /// If a (running) server does not answer.
    fn command_calls(&self) -> BTreeMap<String, u64>;

    /// Calls of one command (`"evalsha"`, `"script|load"`; case-insensitive)
    /// since the last reset; `0` if it was never called.
    fn calls(&self, command: &str) -> u64 {
        self.command_calls()
            .get(&command.to_ascii_lowercase())
            .copied()
            .unwrap_or(0)
    }

    /// `CONFIG RESETSTAT` on every (running) server: zeroes the command
    /// statistics.
    fn reset_stats(&self);

    /// `SCRIPT FLUSH` on every (running) server: empties the script cache, so
    /// the next `EVALSHA` of any script gets `NOSCRIPT`.
    fn script_flush(&self);
}

impl Stats for RedisServer {
    fn command_calls(&self) -> BTreeMap<String, u64> {
        let text: String =
            admin::query_or_panic(self.port(), redis::cmd("INFO").arg("commandstats"));
        parse_commandstats(&text)
            .into_iter()
            .map(|(name, stat)| (name, stat.calls))
            .collect()
    }

    fn reset_stats(&self) {
        let () = admin::query_or_panic(self.port(), redis::cmd("CONFIG").arg("RESETSTAT"));
    }

    fn script_flush(&self) {
        let () = admin::query_or_panic(self.port(), redis::cmd("SCRIPT").arg("FLUSH"));
    }
}

impl Stats for RedisCluster {
    fn command_calls(&self) -> BTreeMap<String, u64> {
        let mut total = BTreeMap::new();
        for node in self.nodes().iter().filter(|n| n.is_running()) {
            for (command, calls) in node.command_calls() {
                *total.entry(command).or_insert(0) += calls;
            }
        }
        total
    }

    fn reset_stats(&self) {
        for node in self.nodes().iter().filter(|n| n.is_running()) {
            node.reset_stats();
        }
    }

    fn script_flush(&self) {
        for node in self.nodes().iter().filter(|n| n.is_running()) {
            node.script_flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commandstats_are_parsed() {
        let text = "# Commandstats\r\n\
            cmdstat_evalsha:calls=2,usec=30,usec_per_call=15.00,rejected_calls=0,failed_calls=1\r\n\
            cmdstat_script|load:calls=2,usec=30,usec_per_call=15.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_info:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n";
        let stats = parse_commandstats(text);
        assert_eq!(
            stats["evalsha"],
            CommandStat {
                calls: 2,
                failed_calls: 1,
                rejected_calls: 0
            }
        );
        assert_eq!(stats["script|load"].calls, 2);
        assert_eq!(stats["info"].calls, 10);
        assert_eq!(stats.len(), 3);
    }
}
