//! `--report`: the production checklist of each script in Markdown, filled
//! in with what the analysis proved, to paste into a pull request.

use std::fmt::Write as _;

use redis_script_analysis::target::{Release, Server};
use redis_script_analysis::text::plural;
use redis_script_analysis::{LoopBound, ReturnShape, Severity, Target, ValueKind};
use redis_script_codes::lua_advisories::{BranchExposure, ServerFamily, branch_advisories};

use crate::check::{CheckRun, CheckedFile, Facts};

/// Every script's checklist, then the scripts it could not review.
pub fn markdown(outcome: &CheckRun) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Script review\n\n{} checked by redis-script-check.",
        plural(outcome.scripts.len() + outcome.unreadable.len(), "file")
    );
    // Scripts checked for the same servers share one statement of what
    // those servers' Lua engine is exposed to.
    let mut targets: Vec<&Target> = Vec::new();
    for script in &outcome.scripts {
        if !targets.contains(&&script.target) {
            targets.push(&script.target);
        }
    }
    for target in targets {
        out.push_str(&lua_engine(target));
    }
    for script in &outcome.scripts {
        section(&mut out, script);
    }
    for unreadable in &outcome.unreadable {
        let _ = writeln!(
            out,
            "\n## `{}`\n\nNot reviewed: cannot read it ({}).",
            unreadable.path, unreadable.reason
        );
    }
    out
}

/// What the Lua engine of the target's releases is exposed to, by the
/// advisory table (`redis-script-codes`, the guide's safety page): a
/// paragraph naming, per release line, the advisories some patch release
/// of it is exposed to and the release that fixes each. Empty when the
/// table names none for any of them.
fn lua_engine(target: &Target) -> String {
    let lines: Vec<String> = target
        .platforms()
        .iter()
        .filter_map(|platform| release_exposure(platform.release()))
        .collect();
    let see = "the guide's safety page, \"Known Lua-engine vulnerabilities\"";
    match lines.as_slice() {
        [] => String::new(),
        [one] => format!("\nLua engine (target `{target}`): {one}. See {see}.\n"),
        several => {
            let mut out = format!("\nLua engine (target `{target}`; see {see}):\n\n");
            for line in several {
                let _ = writeln!(out, "- {line}");
            }
            out
        }
    }
}

/// `redis-7.2 releases before 7.2.11 are exposed to CVE-…`, or `None` when
/// the table names no advisory for the release's branch.
fn release_exposure(release: &Release) -> Option<String> {
    let family = match release.server {
        Server::Redis => ServerFamily::Redis,
        Server::Valkey => ServerFamily::Valkey,
    };
    let (major, minor) = (u32::from(release.major), u32::from(release.minor));
    // Advisories with the same releases exposed read as one clause.
    let mut groups: Vec<(BranchExposure, Vec<&'static str>)> = Vec::new();
    for (advisory, exposure) in branch_advisories(family, (major, minor)) {
        match groups.iter_mut().find(|(seen, _)| *seen == exposure) {
            Some((_, ids)) => ids.push(advisory.id),
            None => groups.push((exposure, vec![advisory.id])),
        }
    }
    let name = release.name;
    let clauses: Vec<String> = groups
        .iter()
        .enumerate()
        .filter_map(|(index, (exposure, ids))| {
            let ids = and_list(ids);
            // `None`: every release of the branch.
            let (which, fixed) = match *exposure {
                BranchExposure::Every => {
                    (None, format!(", which no {major}.{minor} release fixes"))
                }
                BranchExposure::Before(patch) => (
                    Some(format!("releases before {major}.{minor}.{patch}")),
                    String::new(),
                ),
                BranchExposure::Through(patch) => (
                    Some(format!("releases up to {major}.{minor}.{patch}")),
                    ", which none of them fixes (the sources cover no later release)".to_owned(),
                ),
                _ => return None,
            };
            Some(match (index, which) {
                (0, None) => format!("every {name} release is exposed to {ids}{fixed}"),
                (0, Some(which)) => format!("{name} {which} are exposed to {ids}{fixed}"),
                (_, None) => format!("every release to {ids}{fixed}"),
                (_, Some(which)) => format!("{which} to {ids}{fixed}"),
            })
        })
        .collect();
    (!clauses.is_empty()).then(|| clauses.join("; "))
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn section(out: &mut String, script: &CheckedFile) {
    let _ = writeln!(out, "\n## `{}`\n", script.path);
    let Some(facts) = &script.facts else {
        let why = if script.library {
            "a function library; the review covers scripts (its findings are below)"
        } else {
            "its keys and arguments are not declared (see the findings below)"
        };
        let _ = writeln!(out, "Not reviewed: {why}.\n");
        findings(out, script);
        return;
    };
    if let Some(summary) = summary(&facts.header.doc) {
        let _ = writeln!(out, "{summary}\n");
    }
    let _ = writeln!(out, "| check | what the analysis found |\n| --- | --- |");
    let rows = [
        ("keys", keys(script, facts)),
        ("arguments", arguments(script, facts)),
        ("writes", writes(facts)),
        ("retry safety", retry_safety(&facts.header.doc)),
        ("loops", loops(facts)),
        ("reads that grow with the data", growing_reads(facts)),
        ("replies", replies(facts)),
        (
            "findings",
            counts(script).unwrap_or_else(|| "none".to_owned()),
        ),
        ("opt-outs", opt_outs(&script.source)),
    ];
    for (check, found) in rows {
        let _ = writeln!(out, "| {check} | {} |", cell(&found));
    }
    if !script.diagnostics.is_empty() {
        out.push('\n');
    }
    findings(out, script);
}

/// A table cell: no line breaks, no bare `|`.
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

fn keys(script: &CheckedFile, facts: &Facts) -> String {
    let signature = script.signature.as_ref();
    let declared = declared(
        signature.map(|s| (s.keys, s.variadic_keys)),
        &facts.header.keys,
        "KEYS",
    );
    let keys = &facts.review.keys_outside;
    let opted_out = facts.flags.allow_cross_slot_keys
        || signature.is_some_and(|signature| signature.dynamic_keys);
    let source = match (keys.as_slice(), opted_out) {
        ([], _) => "every key a command takes comes from KEYS".to_owned(),
        (lines, true) => format!(
            "keys that do not come from KEYS on {} (the script opts out: Cluster cannot route it by KEYS)",
            lines_list(lines)
        ),
        (lines, false) => format!(
            "keys that do not come from KEYS on {}: errors below",
            lines_list(lines)
        ),
    };
    format!("{declared}; {source}")
}

fn arguments(script: &CheckedFile, facts: &Facts) -> String {
    let signature = script.signature.as_ref();
    declared(
        signature.map(|s| (s.args, s.variadic_args)),
        &facts.header.args,
        "ARGV",
    )
}

/// "2: `KEYS[1]` lock key, `KEYS[2]` owner" from the header's docs.
fn declared(
    count: Option<(usize, bool)>,
    docs: &[redis_script_analysis::ParamDoc],
    table: &str,
) -> String {
    let Some((fixed, variadic)) = count else {
        return "not declared".to_owned();
    };
    let count = match (fixed, variadic) {
        (0, true) => "any number".to_owned(),
        (fixed, true) => format!("{fixed} or more"),
        (fixed, false) => fixed.to_string(),
    };
    let named: Vec<String> = docs
        .iter()
        .map(|doc| {
            let index = if doc.variadic {
                format!("{}..", doc.index)
            } else {
                doc.index.to_string()
            };
            format!("`{table}[{index}]` {}", doc.text.trim())
        })
        .collect();
    if named.is_empty() {
        count
    } else {
        format!("{count}: {}", named.join(", "))
    }
}

fn writes(facts: &Facts) -> String {
    let listed = |writes: bool| -> Vec<String> {
        facts
            .review
            .commands
            .iter()
            .filter(|command| command.writes == writes)
            .map(|command| format!("`{}` (line {})", command.name, command.line))
            .collect()
    };
    let (written, read) = (listed(true), listed(false));
    let reads = if read.is_empty() {
        String::new()
    } else {
        format!("; reads with {}", read.join(", "))
    };
    if facts.read_only {
        format!("no: read-only, sent as `EVALSHA_RO`{reads}")
    } else if written.is_empty() {
        format!("may write (a command chosen at run time){reads}")
    } else {
        format!("yes: {}{reads}", written.join(", "))
    }
}

/// The header's `Retry safety:` line, which the project's scripts keep.
fn retry_safety(doc: &[String]) -> String {
    let Some(start) = doc.iter().position(|line| is_retry_safety(line)) else {
        return "not stated: say in the header whether a call may be sent twice (`Retry safety: …`), or declare it `exactly_once`".to_owned();
    };
    // The statement runs on until a blank line or the next `Label:`.
    let mut statement = doc[start]
        .trim_start()
        .split_once(':')
        .map_or(String::new(), |(_, rest)| rest.trim().to_owned());
    for line in &doc[start + 1..] {
        let line = line.trim();
        if line.is_empty() || starts_label(line) {
            break;
        }
        statement.push(' ');
        statement.push_str(line);
    }
    statement
}

/// The header's first paragraph, which says what the script is for, on one
/// line; `None` when the header has none.
///
/// Its first line is the summary's whatever it holds: `Fixed-window rate
/// limiter: at most …` reads like a `Label:` line but opens the paragraph.
/// Only `Retry safety:` is left for its own row. A `Label:` line after the
/// first (`Used by: …` with no blank line before it) ends the summary.
fn summary(doc: &[String]) -> Option<String> {
    let mut lines = doc
        .iter()
        .map(|line| line.trim())
        // The keys and arguments have rows of their own.
        .filter(|line| !line.starts_with("KEYS[") && !line.starts_with("ARGV["))
        .skip_while(|line| line.is_empty());
    let first = lines.next().filter(|line| !is_retry_safety(line))?;
    let rest = lines.take_while(|line| !line.is_empty() && !starts_label(line));
    Some(
        std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn is_retry_safety(line: &str) -> bool {
    line.trim_start()
        .to_ascii_lowercase()
        .starts_with("retry safety:")
}

/// `Used by: …`, `Invariant: …`: a header line that starts a statement of
/// its own, when it is not the first of a paragraph.
fn starts_label(line: &str) -> bool {
    line.split_once(':').is_some_and(|(label, _)| {
        (1..=3).contains(&label.split_whitespace().count())
            && label.chars().next().is_some_and(char::is_uppercase)
    })
}

fn loops(facts: &Facts) -> String {
    let sites = facts
        .review
        .loops
        .iter()
        .map(|site| {
            let bound = match &site.bound {
                LoopBound::Written(text) => format!("bounded by `{text}`"),
                LoopBound::GrowingRead { command, line } => {
                    format!(
                        "one pass per element of `{command}` (line {line}): grows with the data"
                    )
                }
                LoopBound::Never => "never ends: error below".to_owned(),
            };
            format!("line {} `{}`: {bound}", site.line, site.kind)
        })
        .collect();
    listed(sites, "; ")
}

fn growing_reads(facts: &Facts) -> String {
    let reads = facts
        .review
        .growing_reads
        .iter()
        .map(|read| {
            format!(
                "`{}` (line {}) reads {}",
                read.command, read.line, read.reads
            )
        })
        .collect();
    listed(reads, "; ")
}

fn replies(facts: &Facts) -> String {
    let mut shown: Vec<String> = Vec::new();
    for site in &facts.returns {
        let shape = shape(&site.shape);
        let entry = format!("{shape} (line {})", site.line);
        if !shown.contains(&entry) {
            shown.push(entry);
        }
    }
    listed(shown, "; ")
}

fn shape(shape: &ReturnShape) -> String {
    match shape {
        ReturnShape::Tagged {
            tag,
            elements,
            open_ended,
        } => format!(
            "`{{'{tag}', …}}` with {}{}",
            plural(elements.len(), "element"),
            if *open_ended { " or more" } else { "" }
        ),
        ReturnShape::Array {
            elements,
            open_ended,
        } => format!(
            "a table of {}{}",
            plural(elements.len(), "element"),
            if *open_ended { " or more" } else { "" }
        ),
        ReturnShape::Status(Some(status)) => format!("status `{status}`"),
        ReturnShape::Status(None) => "a status".to_owned(),
        ReturnShape::Error(Some(code)) => format!("error `{code}`"),
        ReturnShape::Error(None) => "an error".to_owned(),
        ReturnShape::Nil => "nil".to_owned(),
        ReturnShape::FallsOffEnd => "nil (the end of the script)".to_owned(),
        ReturnShape::Value(kind) => value(kind),
    }
}

fn value(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Integer => "an integer".to_owned(),
        ValueKind::Float => "a number with a fraction (truncated by Redis)".to_owned(),
        ValueKind::String(Some(text)) => format!("`'{text}'`"),
        ValueKind::String(None) => "a string".to_owned(),
        ValueKind::Boolean(true) => "`true` (1)".to_owned(),
        ValueKind::Boolean(false) => "`false` (nil)".to_owned(),
        ValueKind::Nil => "nil".to_owned(),
        ValueKind::Table => "a table".to_owned(),
        ValueKind::MaybeNil => "a value or nil".to_owned(),
        ValueKind::Unknown => "a value".to_owned(),
    }
}

/// "1 error, 2 warnings", or `None` when there is none.
fn counts(script: &CheckedFile) -> Option<String> {
    match (
        script.count(Severity::Error),
        script.count(Severity::Warning),
    ) {
        (0, 0) => None,
        (errors, 0) => Some(plural(errors, "error")),
        (0, warnings) => Some(plural(warnings, "warning")),
        (errors, warnings) => Some(format!(
            "{}, {}",
            plural(errors, "error"),
            plural(warnings, "warning")
        )),
    }
}

/// Every `-- redis-script: allow(…)` comment, with its line.
fn opt_outs(source: &str) -> String {
    let found: Vec<String> = source
        .lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let at = line.find("redis-script: allow(")?;
            let directive = &line[at + "redis-script: ".len()..];
            let end = directive.find(')')?;
            Some(format!("`{}` (line {})", &directive[..=end], index + 1))
        })
        .collect();
    listed(found, ", ")
}

/// The entries joined, or "none".
fn listed(entries: Vec<String>, separator: &str) -> String {
    if entries.is_empty() {
        "none".to_owned()
    } else {
        entries.join(separator)
    }
}

fn findings(out: &mut String, script: &CheckedFile) {
    for located in &script.diagnostics {
        let diagnostic = &located.diagnostic;
        let place = match located.file {
            None => format!("line {}:{}", diagnostic.line, diagnostic.column),
            Some(_) => format!(
                "`{}` line {}:{}",
                script.place(located).0,
                diagnostic.line,
                diagnostic.column
            ),
        };
        let _ = writeln!(
            out,
            "- {}[{}] at {place}: {}",
            diagnostic.severity.label(),
            diagnostic.code,
            diagnostic.message.replace('\n', " ")
        );
    }
}

/// "lines 3 and 7", "line 3".
fn lines_list(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
    match shown.split_last() {
        Some((last, [])) => format!("line {last}"),
        Some((last, rest)) => format!("lines {} and {last}", rest.join(", ")),
        None => "no line".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lua_engine_of(target: &str) -> String {
        match Target::parse(target) {
            Ok(target) => lua_engine(&target),
            Err(error) => panic!("{target}: {error}"),
        }
    }

    const QUARTET: &str = "CVE-2025-49844, CVE-2025-46817, CVE-2025-46818 and CVE-2025-46819";

    #[test]
    fn the_lua_engine_line_names_each_advisory_with_its_fixed_release() {
        assert_eq!(
            lua_engine_of("redis-7.0"),
            "\nLua engine (target `redis-7.0`): every redis-7.0 release is exposed to CVE-2025-49844, CVE-2025-46817, CVE-2025-46818, CVE-2025-46819 and CVE-2026-23631, which no 7.0 release fixes. See the guide's safety page, \"Known Lua-engine vulnerabilities\".\n"
        );
        assert_eq!(
            lua_engine_of("redis-6.2"),
            format!(
                "\nLua engine (target `redis-6.2`): redis-6.2 releases before 6.2.20 are exposed to {QUARTET}. See the guide's safety page, \"Known Lua-engine vulnerabilities\".\n"
            )
        );
        // A branch fixed at one patch for some advisories and not known to
        // be fixed for another.
        assert!(lua_engine_of("redis-8.0").contains(&format!(
            "redis-8.0 releases before 8.0.4 are exposed to {QUARTET}; releases up to 8.0.6 to CVE-2026-23631, which none of them fixes (the sources cover no later release)."
        )));
        assert!(
            lua_engine_of("valkey-9.1")
                .contains("valkey-9.1 releases before 9.1.2 are exposed to GHSA-fq2f-crmw-q97r.")
        );
    }

    #[test]
    fn a_target_of_several_releases_lists_those_the_table_names() {
        let both = lua_engine_of("redis-7.2,redis-8.8,valkey-8.1");
        assert_eq!(
            both,
            format!(
                "\nLua engine (target `redis-7.2,redis-8.8,valkey-8.1`; see the guide's safety page, \"Known Lua-engine vulnerabilities\"):\n\n- redis-7.2 releases before 7.2.11 are exposed to {QUARTET}\n- valkey-8.1 releases before 8.1.4 are exposed to {QUARTET}\n"
            )
        );
        // The default is every release from Redis 7.0 and Valkey 7.2 on;
        // Valkey 9.0 has no entry, the table knowing no exposed release.
        let any = lua_engine_of("any");
        assert_eq!(any.matches("\n- ").count(), 11, "{any}");
        assert!(!any.contains("redis-6.") && !any.contains("valkey-9.0"));
    }

    #[test]
    fn a_release_the_table_knows_nothing_of_says_nothing() {
        assert_eq!(lua_engine_of("redis-8.8"), "");
        assert_eq!(lua_engine_of("redis-8.10,valkey-9.0"), "");
    }

    fn doc(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|line| (*line).to_owned()).collect()
    }

    #[test]
    fn a_summary_whose_first_line_has_a_colon_is_kept() {
        let header = doc(&[
            "Fixed-window rate limiter: at most `limit` admissions per window.",
            "",
            "KEYS[1] = the window's counter",
            "",
            "Invariant: the counter never outlives its window.",
        ]);
        assert_eq!(
            summary(&header).as_deref(),
            Some("Fixed-window rate limiter: at most `limit` admissions per window.")
        );
    }

    #[test]
    fn a_label_after_the_first_line_ends_the_summary() {
        let header = doc(&[
            "Touch a session: refresh the session hash",
            "and the user's session index.",
            "Used by: the gateway.",
        ]);
        assert_eq!(
            summary(&header).as_deref(),
            Some("Touch a session: refresh the session hash and the user's session index.")
        );
    }

    #[test]
    fn a_header_opening_with_its_retry_safety_has_no_summary() {
        let header = doc(&["Retry safety: safe to retry.", "", "KEYS[1] = lock"]);
        assert_eq!(summary(&header), None);
        assert_eq!(retry_safety(&header), "safe to retry.");
    }
}
