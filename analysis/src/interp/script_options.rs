//! Command options some servers refuse inside a script, although the
//! command itself runs there; and `SELECT` of a database the server does
//! not have.
//!
//! The refusals are the value model's `SCRIPT_REFUSALS`, which
//! `scripts/gen-server-model.py` reads from the command implementations at
//! each release's tag (and probes on the live servers): the servers mark a
//! script's client `CLIENT_DENY_BLOCKING`, so a blocking command answers at
//! once instead of waiting; only `XREAD`/`XREADGROUP` refuse `BLOCK`
//! outright (`xreadCommand` in `src/t_stream.c`, on `CLIENT_SCRIPT`), at
//! Redis 7.0 and 7.2 and Valkey 7.2. Redis 7.4.0 (commit 77a65e82b,
//! "support XREAD[GROUP] with BLOCK option in scripts") and Valkey 8.0
//! dropped the refusal: there the option is accepted and the read does not
//! wait. The other checks of `CLIENT_DENY_BLOCKING` (`SUBSCRIBE`,
//! `MONITOR`, `SHUTDOWN`, …) are on `noscript` commands, which the command
//! table already refuses. `tests/integration/server_refusals.rs` checks the
//! refusal on the live servers CI has.

use crate::domain::operand::Operand;
use crate::interp::Analyzer;
use crate::model::commands::shapes::{SCRIPT_REFUSALS, ScriptRefusal};
use crate::model::target::ReleaseSet;
use crate::source::code::Code;
use crate::source::span::Span;

/// The servers' default `databases` setting.
const DEFAULT_DATABASES: i64 = 16;

impl Analyzer<'_> {
    /// Checks the literal options of a call of `command` (its table name)
    /// that runs on `releases` of the target.
    pub(crate) fn check_script_options(
        &mut self,
        command: &str,
        releases: ReleaseSet,
        operands: &[Operand],
    ) {
        if command == "select" {
            self.check_database_index(operands);
        }
        for refused in SCRIPT_REFUSALS
            .iter()
            .filter(|refused| refused.command == command)
        {
            // Options come before `STREAMS`; what follows are keys and IDs.
            let written = operands
                .iter()
                .skip(1)
                .map(|operand| (crate::domain::operand::literal_text(operand), operand.span))
                .take_while(|(text, _)| {
                    !text
                        .as_deref()
                        .is_some_and(|text| text.eq_ignore_ascii_case("STREAMS"))
                })
                .find(|(text, _)| {
                    text.as_deref()
                        .is_some_and(|text| text.eq_ignore_ascii_case(refused.option))
                });
            let Some((_, span)) = written else {
                continue;
            };
            self.refused_option(refused, releases, span);
        }
    }

    /// `SELECT n` with a literal `n` outside the server's databases:
    /// negative is always refused; 16 and up only under the default
    /// `databases 16`, so that is a warning.
    fn check_database_index(&mut self, operands: &[Operand]) {
        let Some(operand) = operands.get(1) else {
            return;
        };
        let Some(index) =
            crate::domain::operand::literal_text(operand).and_then(|text| text.parse::<i64>().ok())
        else {
            return;
        };
        let refused = "the call fails with \"DB index is out of range\"";
        if index < 0 {
            self.facts.diagnostics.push(operand.span.error(
                Code::DatabaseIndex,
                format!("`SELECT {index}`: there is no negative database, {refused}"),
                "select a database from 0 up",
            ));
        } else if index >= DEFAULT_DATABASES {
            self.facts.diagnostics.push(operand.span.warning(
                Code::DatabaseIndex,
                format!(
                    "`SELECT {index}`: a server has {DEFAULT_DATABASES} databases (0 to {}) unless its `databases` setting says more; on one that does not, {refused}",
                    DEFAULT_DATABASES - 1
                ),
                "use a database below 16, or make sure every server you run has `databases` above this index",
            ));
        }
    }

    fn refused_option(&mut self, refused: &ScriptRefusal, releases: ReleaseSet, span: Span) {
        let refusing = releases.intersection(refused.releases);
        if refusing.is_empty() {
            return;
        }
        let command = refused.command.to_ascii_uppercase();
        let option = refused.option;
        let names: Vec<&str> = refusing
            .releases()
            .map(|(_, release)| release.name)
            .collect();
        let target = &self.context.signature.target;
        let hint = "a script cannot wait: drop the option (where the servers accept it, the read does not wait either) and wait in the client";
        if target.is_strict() || refusing == releases {
            self.facts.diagnostics.push(span.error(
                Code::RefusedOption,
                format!(
                    "`{command}` with `{option}` is refused inside scripts on {}: the call fails with \"{}\"",
                    names.join(", "),
                    refused.reply
                ),
                hint,
            ));
        } else {
            self.facts.diagnostics.push(span.warning(
                Code::RefusedOption,
                format!(
                    "`{command}` with `{option}` is refused inside scripts on {} (the other servers accept it and do not wait): the default target (any supported server) lets this build, and the call fails there with \"{}\"",
                    names.join(", "),
                    refused.reply
                ),
                format!(
                    "{hint}; or set the servers you run (`REDIS_SCRIPT_TARGET` in `.cargo/config.toml`'s `[env]`)"
                ),
            ));
        }
    }
}
