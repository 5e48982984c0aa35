//! `keyspace_walk` and `dangerous_command`: commands that do not belong in
//! a script on the request path. A script runs as one atomic step, so a
//! command that walks the whole keyspace, or a whole collection page by
//! page in a loop, blocks every other client for as long as the data is
//! large; and the commands the servers' ACL categories mark `@dangerous`
//! (`FLUSHALL`, `SWAPDB`, `SORT` with its key patterns, `INFO`, …) act on
//! the whole server.

use super::Certainty;
use crate::interp::Analyzer;
use crate::model::commands::shapes::{self, AclCategories};
use crate::model::target::ReleaseSet;
use crate::source::code::Code;
use crate::source::span::Span;

impl Analyzer<'_> {
    /// `redis.call` of `command` (the model's name, lowercase) on
    /// `releases`, its name at `span`.
    pub(crate) fn check_server_wide(&mut self, command: &str, releases: ReleaseSet, span: Span) {
        let shown = command.to_ascii_uppercase();
        let walked = match command {
            "keys" => Some("the whole keyspace"),
            "scan" if self.in_loop() => Some("the whole keyspace"),
            "hscan" if self.in_loop() => Some("a whole hash"),
            "sscan" if self.in_loop() => Some("a whole set"),
            "zscan" if self.in_loop() => Some("a whole sorted set"),
            _ => None,
        };
        if let Some(walked) = walked {
            let how = if command == "keys" { "" } else { " in a loop" };
            let cluster = if command == "keys" || command == "scan" {
                ", and in a Cluster it sees only the keys of one node"
            } else {
                ""
            };
            self.report(
                Code::KeyspaceWalk,
                Certainty::Sometimes,
                span,
                format!(
                    "`{shown}`{how} walks {walked} in one atomic step: the server serves no other client until it is done, however large the data grows{cluster}"
                ),
                "keep the members the script needs where it can name them (a set of ids, maintained on write) and pass keys as KEYS; or walk the data from the client, one page per call",
            );
            return;
        }
        let dangerous = shapes::shape(command).is_some_and(|shape| {
            shape
                .forms_for(releases)
                .any(|form| form.categories.contains(AclCategories::DANGEROUS))
        });
        if dangerous {
            self.report(
                Code::DangerousCommand,
                Certainty::Sometimes,
                span,
                format!(
                    "`{shown}` is a @dangerous command in the server's ACL categories: it acts on the whole server (or on keys it finds itself), which a script on the request path should not do"
                ),
                "run it from an administration tool, not from a script",
            );
        }
    }
}
