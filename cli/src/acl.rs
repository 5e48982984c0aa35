//! `--acl`: the rules of `ACL SETUSER` an application user needs to call
//! each script and library checked, and all of them together.

use std::fmt::Write as _;

use redis_script_analysis::acl::{AclRules, KeyRule};
use redis_script_analysis::target::Server;
use redis_script_analysis::{Header, Severity};

use crate::check::{CheckRun, CheckedFile};

/// Each file's rules with what its placeholders stand for, then the rules
/// of every file on one line.
pub fn rules(outcome: &CheckRun) -> String {
    // Redis 6.0 has no channel rules: it refuses `resetchannels`, and
    // grants no channel to start with.
    let channels = if outcome.scripts.iter().any(|script| {
        script.target.platforms().iter().any(|platform| {
            let release = platform.release();
            release.server == Server::Redis && (release.major, release.minor) < (6, 2)
        })
    }) {
        ""
    } else {
        " resetchannels"
    };
    let mut out = format!(
        "# The ACL rules each script and library needs, as `ACL SETUSER <user>`\n\
         # takes them after the user name. Replace each <…> with the key pattern\n\
         # your application passes there; a user made for this starts from\n\
         # nothing: ACL SETUSER app on >password resetkeys{channels} -@all <rules>\n",
    );
    let several = outcome.scripts.len() > 1;
    let mut commands = AclRules::default();
    let mut keys: Vec<(KeyRule, &str)> = Vec::new();
    let mut everything_known = true;
    for script in &outcome.scripts {
        let _ = writeln!(out, "\n# {}", script.path);
        let Some(rules) = &script.acl else {
            everything_known = false;
            let _ = writeln!(
                out,
                "#   no rules: the script does not declare the keys and arguments it takes"
            );
            continue;
        };
        if script.library && rules.before_redis_7 {
            everything_known = false;
            let _ = writeln!(
                out,
                "#   no rules: the target has a release before Redis 7.0, which has no Redis Functions to call"
            );
            continue;
        }
        if script.count(Severity::Error) > 0 {
            let _ = writeln!(
                out,
                "#   the check found errors: the rules hold for the script as the analysis reads it"
            );
        }
        placeholders(&mut out, script, rules);
        let _ = writeln!(out, "{}", rules.render(""));
        commands.merge(&AclRules {
            commands: rules.commands.clone(),
            before_redis_7: rules.before_redis_7,
            ..AclRules::default()
        });
        // Each file's KEYS are its own: the combined line names them by
        // file.
        for rule in &rules.keys {
            keys.push((*rule, short_name(&script.path)));
        }
    }
    if several {
        let _ = writeln!(
            out,
            "\n# all {} files{}",
            outcome.scripts.len(),
            if everything_known {
                ""
            } else {
                " (those with rules)"
            }
        );
        let mut line = commands.render("");
        let mut rendered: Vec<String> = Vec::new();
        for (mut rule, scope) in keys {
            // One user on one server: a file for Redis 6.x makes the whole
            // line take the form 6.x reads.
            if commands.before_redis_7 {
                rule.read = true;
                rule.write = true;
            }
            let key = rule.render(scope);
            if !rendered.contains(&key) {
                line.push(' ');
                line.push_str(&key);
                rendered.push(key);
            }
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// What each placeholder of `rules` stands for, from the header.
fn placeholders(out: &mut String, script: &CheckedFile, rules: &AclRules) {
    let header = Header::parse(&script.source);
    for rule in &rules.keys {
        let Some((keys, index)) = rule.pattern.parameter() else {
            continue;
        };
        let (documented, table) = if keys {
            (&header.keys, "KEYS")
        } else {
            (&header.args, "ARGV")
        };
        let text = documented
            .iter()
            .find(|doc| doc.index == index)
            .map(|doc| first_clause(&doc.text))
            .unwrap_or_default();
        let placeholder = rule.pattern.placeholder("");
        let meaning = match (placeholder.ends_with('*'), text.is_empty()) {
            (true, true) => format!("keys built by appending to {table}[{index}]"),
            (true, false) => format!("keys built by appending to {table}[{index}], {text}"),
            (false, true) => continue,
            (false, false) => text.to_owned(),
        };
        let _ = writeln!(out, "#   {placeholder}: {meaning}");
    }
    for (command, line) in &rules.unbounded {
        let _ = writeln!(
            out,
            "#   `{command}` (line {line}) takes a key read from data or computed: no pattern bounds it, so the rules grant `*` for it"
        );
    }
}

/// A header's description up to a parenthesis it leaves open on its line
/// (the rest continues on the next comment line).
fn first_clause(text: &str) -> &str {
    match text.rfind(" (") {
        Some(open) if !text[open..].contains(')') => text[..open].trim_end(),
        _ => text.trim_end(),
    }
}

/// The file name without its directories, to tell files' KEYS apart.
fn short_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
