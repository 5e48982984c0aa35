//! `dangerous_command`: a command the servers' ACL categories mark
//! `@dangerous` (`FLUSHALL`, `SWAPDB`, `SORT` with its key patterns,
//! `INFO`, …): it acts on the whole server, which a script on the request
//! path should not do.

use crate::interp::observe::{Certainty, CommandCall, Finding, Site};
use crate::model::commands::shapes::{self, AclCategories};

pub(crate) struct DangerousCommand;

impl Finding for DangerousCommand {
    fn command(&self, site: &mut Site<'_>, call: &CommandCall<'_>) {
        let Some((command, releases)) = call.known else {
            return;
        };
        // A walk of the keyspace is the finding `keyspace_walk`.
        let walks = command == "keys"
            || (matches!(command, "scan" | "hscan" | "sscan" | "zscan") && site.in_loop());
        let dangerous = shapes::shape(command).is_some_and(|shape| {
            shape
                .forms_for(releases)
                .any(|form| form.categories.contains(AclCategories::DANGEROUS))
        });
        let Some(first) = call.operands.first().filter(|_| dangerous && !walks) else {
            return;
        };
        site.report(
            Certainty::Sometimes,
            first.span,
            format!(
                "`{}` is a @dangerous command in the server's ACL categories: it acts on the whole server (or on keys it finds itself), which a script on the request path should not do",
                command.to_ascii_uppercase()
            ),
            "run it from an administration tool, not from a script",
        );
    }
}
