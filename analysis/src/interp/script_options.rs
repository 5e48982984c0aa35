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

use crate::domain::operand::{Operand, after_name};
use crate::interp::Analyzer;
use crate::model::argument_grammar;
use crate::model::commands::shapes;
use crate::model::commands::shapes::{SCRIPT_REFUSALS, ScriptRefusal};
use crate::model::target::{RELEASES, ReleaseSet};
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
            let Some(span) = option_span(operands, refused.option) else {
                continue;
            };
            if let Some(with) = refused.with {
                if option_span(operands, with).is_some() {
                    self.refused_together(refused, with, releases, span);
                }
                continue;
            }
            self.refused_option(refused, releases, span);
        }
    }

    /// Literal options of a call (of `command`, its table name, on
    /// `releases` of the target, those whose arity accepts it) that the
    /// grammar of some of those releases does not know at all while
    /// another release's takes them: `SET … GET` on Redis 6.0, which
    /// answers "ERR syntax error", and `ZADD key GT 1 m` there, which
    /// reads `GT` as a score. See [`argument_grammar::options_unknown_to`]
    /// and [`argument_grammar::options_misread_by`] for when a call is
    /// decided. Whether it reported one: the call's other errors (a count
    /// of values broken by the misread word) follow from it.
    pub(crate) fn check_unknown_options(
        &mut self,
        command: &str,
        releases: ReleaseSet,
        operands: &[Operand],
        arguments: &[Option<&str>],
    ) -> bool {
        let Some(shape) = shapes::shape(command) else {
            return false;
        };
        let (operands, words, spread_from) = after_name(command, operands, arguments);
        // (operand, option, the value the lacking release takes it for, if
        // it reads it as one) -> the releases of the target that lack it.
        type Unknown = (usize, &'static str, Option<&'static str>, ReleaseSet);
        let mut unknown: Vec<Unknown> = Vec::new();
        for (index, _) in releases.releases() {
            let Some(own) = shape.form_for(ReleaseSet::only(index)) else {
                continue;
            };
            for other in shape.forms.iter().filter(|form| *form != own) {
                let unknown_here = argument_grammar::options_unknown_to(
                    own.arguments,
                    other.arguments,
                    words,
                    spread_from,
                )
                .into_iter()
                .map(|(operand, option)| (operand, option, None));
                let misread = argument_grammar::options_misread_by(
                    own.arguments,
                    other.arguments,
                    words,
                    spread_from,
                )
                .into_iter()
                .map(|(operand, option, value)| (operand, option, Some(value)));
                for (operand, option, value) in unknown_here.chain(misread) {
                    match unknown
                        .iter_mut()
                        .find(|(at, name, _, _)| *at == operand && *name == option)
                    {
                        Some((_, _, _, lacking)) => {
                            *lacking = lacking.union(ReleaseSet::only(index));
                        }
                        None => unknown.push((operand, option, value, ReleaseSet::only(index))),
                    }
                }
            }
        }
        let shown = command.replace('|', " ").to_ascii_uppercase();
        let reported = !unknown.is_empty();
        for (operand, option, value, lacking) in unknown {
            let Some(span) = operands.get(operand).map(|operand| operand.span) else {
                continue;
            };
            let taking = shape
                .forms
                .iter()
                .filter(|form| argument_grammar::has_token(form.arguments, option))
                .fold(ReleaseSet::NONE, |set, form| set.union(form.releases));
            let names = release_names(lacking);
            let refusal = match value {
                None => "refuses the call with \"ERR syntax error\"".to_owned(),
                Some(value) => format!("takes the word for a `{value}` and refuses the call"),
            };
            let message = format!(
                "`{shown}` has no `{option}` option on {names} (it takes one {}): the server there {refusal}",
                taking.describe()
            );
            let hint = format!(
                "leave `{option}` out where the server lacks it, or target a release that takes it ({})",
                taking.describe()
            );
            let lenient =
                format!("{message}; the default target (any supported server) lets this build");
            self.report_refusal(span, lacking == releases, message, lenient, hint);
        }
        reported
    }

    /// Two options a release takes each alone but refuses together
    /// (`SET … NX GET` before Redis 7.0): `span` is the first's.
    fn refused_together(
        &mut self,
        refused: &ScriptRefusal,
        with: &str,
        releases: ReleaseSet,
        span: Span,
    ) {
        let refusing = releases.intersection(refused.releases);
        if refusing.is_empty() {
            return;
        }
        let command = refused.command.to_ascii_uppercase();
        let option = refused.option;
        let names = release_names(refusing);
        // Where the pair is accepted, for the hint.
        let accepted = RELEASES
            .iter()
            .enumerate()
            .filter(|(index, release)| {
                !refused.releases.contains(*index)
                    && RELEASES.iter().enumerate().any(|(refusing_index, older)| {
                        refused.releases.contains(refusing_index)
                            && older.server == release.server
                            && (older.major, older.minor) < (release.major, release.minor)
                    })
            })
            .fold(ReleaseSet::NONE, |set, (index, _)| {
                set.union(ReleaseSet::only(index))
            });
        let hint = format!(
            "make it two calls in the script (a script runs atomically), or target a release that takes both together ({})",
            accepted.describe()
        );
        let refusal = format!(
            "`{command}` takes `{with}` and `{option}` each alone on {names}, but not together"
        );
        let fails = format!("the call fails there with \"{}\"", refused.reply);
        self.report_refusal(
            span,
            refusing == releases,
            format!("{refusal}: {fails}"),
            format!(
                "{refusal}: the default target (any supported server) lets this build, and {fails}"
            ),
            hint,
        );
    }

    /// Reports an option refused by some servers of the target: an error
    /// under a named target, or where `every` server of the target refuses
    /// it; a warning under the lenient default otherwise, whose hint also
    /// says how to name the servers.
    fn report_refusal(
        &mut self,
        span: Span,
        every: bool,
        error: String,
        warning: String,
        hint: String,
    ) {
        let diagnostic = if self.context.signature.target.is_strict() || every {
            span.error(Code::RefusedOption, error, hint)
        } else {
            span.warning(
                Code::RefusedOption,
                warning,
                format!(
                    "{hint}; or set the servers you run (`REDIS_SCRIPT_TARGET` in `.cargo/config.toml`'s `[env]`)"
                ),
            )
        };
        self.facts.diagnostics.push(diagnostic);
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
        let names = release_names(refusing);
        let refusal = format!("`{command}` with `{option}` is refused inside scripts on {names}");
        let reply = refused.reply;
        self.report_refusal(
            span,
            refusing == releases,
            format!("{refusal}: the call fails with \"{reply}\""),
            format!("{refusal} (the other servers accept it and do not wait): the default target (any supported server) lets this build, and the call fails there with \"{reply}\""),
            "a script cannot wait: drop the option (where the servers accept it, the read does not wait either) and wait in the client".to_owned(),
        );
    }
}

/// The span of the operand (after the command name) that is the literal
/// `option`. Options come before `STREAMS`; what follows are keys and IDs.
fn option_span(operands: &[Operand], option: &str) -> Option<Span> {
    operands
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
                .is_some_and(|text| text.eq_ignore_ascii_case(option))
        })
        .map(|(_, span)| span)
}

/// `redis-6.0, redis-6.2`.
fn release_names(set: ReleaseSet) -> String {
    let names: Vec<&str> = set.releases().map(|(_, release)| release.name).collect();
    names.join(", ")
}
