//! `keyspace_walk`: `KEYS`, or `SCAN`/`HSCAN`/`SSCAN`/`ZSCAN` in a loop. A
//! script runs as one atomic step, so walking the whole keyspace, or a
//! whole collection page by page, blocks every other client for as long as
//! the data is large.

use crate::interp::observe::{Certainty, CommandCall, Finding, Site};

pub(crate) struct KeyspaceWalk;

impl Finding for KeyspaceWalk {
    fn command(&self, site: &mut Site<'_>, call: &CommandCall<'_>) {
        let Some((command, _)) = call.known else {
            return;
        };
        let walked = match command {
            "keys" => "the whole keyspace",
            "scan" if site.in_loop() => "the whole keyspace",
            "hscan" if site.in_loop() => "a whole hash",
            "sscan" if site.in_loop() => "a whole set",
            "zscan" if site.in_loop() => "a whole sorted set",
            _ => return,
        };
        let shown = command.to_ascii_uppercase();
        let how = if command == "keys" { "" } else { " in a loop" };
        let cluster = if command == "keys" || command == "scan" {
            ", and in a Cluster it sees only the keys of one node"
        } else {
            ""
        };
        let Some(span) = call.operands.first().map(|operand| operand.span) else {
            return;
        };
        site.report(
            Certainty::Sometimes,
            span,
            format!(
                "`{shown}`{how} walks {walked} in one atomic step: the server serves no other client until it is done, however large the data grows{cluster}"
            ),
            "keep the members the script needs where it can name them (a set of ids, maintained on write) and pass keys as KEYS; or walk the data from the client, one page per call",
        );
    }
}
