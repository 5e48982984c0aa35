//! What the way a script reaches the server asks of the target's servers,
//! before any of its code runs: a `#!` line, `EVAL_RO` (the command line's
//! `--read-only`), a function library. Redis 7.0 brought all three with its
//! scripting rework; a release before it (Redis 6.x) refuses each:
//!
//! * a `#!` line is Lua it cannot compile ("Error compiling script (new
//!   function): user_script:1: unexpected symbol near '#'");
//! * `EVAL_RO`/`EVALSHA_RO` and `FUNCTION`/`FCALL` are unknown commands.
//!
//! Which releases have them is the command table's: a release has script
//! flags and the read-only commands where it has `EVAL_RO` (a read-only
//! call is checked against the script's flags), Functions where it has
//! `FCALL`. A named target refuses what one of its servers lacks; the
//! default (`any`) says nothing, since its newer servers take all three and
//! the runtime decides what it sends an older one.

use crate::model::commands;
use crate::model::target::{ReleaseSet, Target};
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::span::Span;

/// The releases of a strict `target` that lack `command` (lowercase).
fn lacking(target: &Target, command: &str) -> ReleaseSet {
    if !target.is_strict() {
        return ReleaseSet::NONE;
    }
    let entry = commands::lookup(command);
    target
        .platforms()
        .iter()
        .filter(|platform| entry.is_none_or(|entry| entry.on(platform.release).is_none()))
        .fold(ReleaseSet::NONE, |set, platform| {
            set.union(ReleaseSet::only(platform.release))
        })
}

/// Where `command` exists, for hints: `since Redis 7.0 and Valkey 7.2`.
fn where_it_exists(command: &str) -> String {
    commands::lookup(command).map_or_else(String::new, |entry| entry.releases().describe())
}

fn names(set: ReleaseSet) -> String {
    let names: Vec<&str> = set.releases().map(|(_, release)| release.name).collect();
    names.join(", ")
}

/// A script whose first line starts with `#!`, on a target with a server
/// that cannot compile it.
pub(crate) fn shebang(source: &str, target: &Target) -> Option<Diagnostic> {
    let lacking = lacking(target, "eval_ro");
    if lacking.is_empty() {
        return None;
    }
    let width = source
        .lines()
        .next()
        .map_or(1, |line| line.chars().count().max(1));
    Some(
        Span { width, ..Span::TOP }.error(
            Code::Shebang,
            format!(
                "{} cannot run a script with a `#!` line: script flags came with Redis 7.0, and an older server compiles the line as Lua and fails with \"Error compiling script (new function): user_script:1: unexpected symbol near '#'\" ({})",
                names(lacking),
                target.phrase()
            ),
            format!(
                "remove the `#!` line (the attribute's opt-outs replace `allow-cross-slot-keys`), or target a release that takes script flags ({})",
                where_it_exists("eval_ro")
            ),
        ),
    )
}

/// A script declared to run with `EVAL_RO` on a target with a server that
/// has no such command.
pub(crate) fn read_only(read_only: bool, target: &Target) -> Option<Diagnostic> {
    let lacking = lacking(target, "eval_ro");
    if !read_only || lacking.is_empty() {
        return None;
    }
    Some(Span::TOP.error(
        Code::UnavailableCommand,
        format!(
            "the script runs with EVAL_RO (`--read-only`), which {} lacks: the server answers \"ERR unknown command `EVAL_RO`\" ({})",
            names(lacking),
            target.phrase()
        ),
        format!(
            "send it with EVAL (drop `--read-only`), or target a release that has EVAL_RO ({})",
            where_it_exists("eval_ro")
        ),
    ))
}

/// A function library on a target with a server without Redis Functions.
pub(crate) fn functions(target: &Target) -> Option<Diagnostic> {
    let lacking = lacking(target, "fcall");
    if lacking.is_empty() {
        return None;
    }
    Some(Span::TOP.error(
        Code::UnavailableCommand,
        format!(
            "{} has no Redis Functions: `FUNCTION LOAD` and `FCALL` came with Redis 7.0, and an older server answers \"ERR unknown command\" ({})",
            names(lacking),
            target.phrase()
        ),
        format!(
            "write the functions as scripts (`#[redis_script]`), or target a release with Functions ({})",
            where_it_exists("fcall")
        ),
    ))
}
