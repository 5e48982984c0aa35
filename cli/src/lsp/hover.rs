//! Hover: a command's syntax, releases, reply as the script sees it and
//! ACL categories under the file's target; the Rust parameter (or header
//! line) behind `KEYS[n]`/`ARGV[n]`.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position, Range};
use redis_script_analysis::commands::shapes;
use redis_script_analysis::commands::{self, CommandEntry, CommandFlags};
use redis_script_analysis::target::ReleaseSet;
use redis_script_analysis::{Target, reply_lua_types};

use super::call_site::{self, Operand};
use super::diagnose::Verdict;
use super::text;

/// What hovering at `position` of `source` shows.
pub fn hover(source: &str, position: Position, verdict: &Verdict) -> Option<Hover> {
    let line = text::line_text(source, position.line as usize);
    let at = text::offset(line, Position::new(0, position.character));
    if let Some((key, index)) = call_site::parameter_at(line, at) {
        return parameter(verdict, key, index).map(markdown);
    }
    let literals = call_site::literals(line);
    let (index, literal) = literals
        .iter()
        .enumerate()
        .find(|(_, literal)| (literal.start..literal.end.max(literal.start + 1)).contains(&at))?;
    let word = line.get(literal.text_start..literal.text_end)?;
    let entry = match call_site::operand(line, &literals, index)? {
        Operand::Command => commands::lookup(word)?,
        Operand::AfterCommand { command } => {
            commands::lookup_subcommand(commands::lookup(&command)?, word)?
        }
        Operand::Later { .. } => return None,
    };
    let mut shown = markdown(command(entry, &verdict.target));
    let start = Position::new(position.line, text::utf16_len(&line[..literal.start]));
    let end = Position::new(position.line, text::utf16_len(&line[..literal.end]));
    shown.range = Some(Range::new(start, end));
    Some(shown)
}

fn markdown(value: String) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: None,
    }
}

/// The declared parameters `KEYS[index]` (or `ARGV[index]`) stands for.
fn parameter(verdict: &Verdict, key: bool, index: usize) -> Option<String> {
    let table = if key { "KEYS" } else { "ARGV" };
    let matching: Vec<&str> = verdict
        .parameters
        .iter()
        .filter(|parameter| {
            parameter.key == key
                && (parameter.index == index || (parameter.variadic && parameter.index <= index))
        })
        .map(|parameter| parameter.description.as_str())
        .collect();
    if matching.is_empty() {
        return (!verdict.parameters.is_empty())
            .then(|| format!("`{table}[{index}]`: no declared parameter is sent here"));
    }
    Some(matching.join("\n\n---\n\n"))
}

/// A command's card, under `target`.
pub fn command(entry: &'static CommandEntry, target: &Target) -> String {
    let name = entry.name.replace('|', " ").to_uppercase();
    let releases = target.releases();
    let shape = shapes::shape(entry.name);
    let form = shape.and_then(|shape| {
        shape
            .form_for(releases)
            .or_else(|| shape.forms_for(releases).last())
            .or_else(|| shape.forms.last())
    });
    let mut card = String::new();
    card.push_str("```\n");
    card.push_str(&name);
    if let Some(syntax) = form
        .map(|form| form.syntax())
        .filter(|syntax| !syntax.is_empty())
    {
        card.push(' ');
        card.push_str(&syntax);
    }
    card.push_str("\n```\n");
    let has = entry.releases().intersection(releases);
    let mut lines = Vec::new();
    let since = entry.since;
    let documented: Vec<String> = [
        since.redis.map(|version| format!("Redis {version}")),
        since.valkey.map(|version| format!("Valkey {version}")),
        since
            .module
            .zip(entry.module)
            .map(|(version, module)| format!("the {} module {version}", module.title())),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !documented.is_empty() {
        lines.push(format!("Since {}.", documented.join(", ")));
    }
    if has.is_empty() {
        lines.push(format!(
            "**Not on the target `{target}`**: the model has it {}.",
            entry.releases().describe()
        ));
    } else if has != releases {
        let missing = missing_on(entry, releases);
        lines.push(format!(
            "**Missing on {missing}** of the target `{target}`."
        ));
    }
    if let Some(deprecation) = entry.deprecation {
        lines.push(format!(
            "Deprecated since {}: use {}.",
            deprecation.since, deprecation.replaced_by
        ));
    }
    let refused = refused_in_scripts(entry, has);
    if !refused.is_empty() {
        let on = if refused == has {
            "the target's servers".to_owned()
        } else {
            titles(refused).join(", ")
        };
        lines.push(format!(
            "**Refused in scripts** on {on}: the server marks it `noscript`."
        ));
    }
    if let Some(command) = has.releases().next().and_then(|(index, _)| entry.on(index)) {
        lines.push(match (command.is_write(), command.is_readonly()) {
            (true, _) => {
                "Writes: not allowed in a read-only script (`EVAL_RO`, `no-writes`).".to_owned()
            }
            (false, true) => "Read-only.".to_owned(),
            (false, false) => "Neither reads nor writes data.".to_owned(),
        });
    }
    if let Some(newest) = has.releases().last().map(|(_, release)| release) {
        let types = |resp3| {
            reply_lua_types(entry.name, newest.name, resp3)
                .map(|types| types.join(" or "))
                .unwrap_or_else(|| "not described".to_owned())
        };
        lines.push(format!(
            "Reply in the script on {}: {} (RESP2, the default); {} after `redis.setresp(3)`.",
            newest.title(),
            types(false),
            types(true)
        ));
    }
    if let Some(form) = form {
        let categories: Vec<String> = form
            .categories
            .names()
            .map(|name| format!("`@{name}`"))
            .collect();
        if !categories.is_empty() {
            lines.push(format!("ACL categories: {}.", categories.join(" ")));
        }
    }
    card.push_str(&lines.join("\n\n"));
    card
}

/// The target's releases lacking the command, by title.
fn missing_on(entry: &CommandEntry, releases: ReleaseSet) -> String {
    let missing = releases
        .releases()
        .filter(|(index, _)| !entry.releases().contains(*index))
        .fold(ReleaseSet::NONE, |set, (index, _)| {
            set.union(ReleaseSet::only(index))
        });
    titles(missing).join(", ")
}

/// The releases' titles (`Redis 7.0`), in the model's order.
pub(super) fn titles(releases: ReleaseSet) -> Vec<String> {
    releases
        .releases()
        .map(|(_, release)| release.title())
        .collect()
}

/// Those of `releases` that refuse the command in scripts: its form there
/// is flagged `noscript`, or, for a command with subcommands (`CONFIG`,
/// `CLIENT`), every subcommand the release has is.
pub(super) fn refused_in_scripts(entry: &CommandEntry, releases: ReleaseSet) -> ReleaseSet {
    releases
        .releases()
        .filter(|(index, _)| {
            let refuses = |entry: &CommandEntry| {
                entry
                    .form_on(*index)
                    .is_some_and(|form| form.flags.contains(CommandFlags::NOSCRIPT))
            };
            let mut subcommands = entry
                .subcommands
                .iter()
                .filter(|sub| sub.form_on(*index).is_some())
                .peekable();
            refuses(entry) || (subcommands.peek().is_some() && subcommands.all(refuses))
        })
        .fold(ReleaseSet::NONE, |set, (index, _)| {
            set.union(ReleaseSet::only(index))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_card_has_syntax_releases_reply_and_categories() {
        let redis_7_2 = Target::parse("redis-7.2").expect("a target");
        let card = command(commands::lookup("set").expect("SET"), &redis_7_2);
        assert!(card.starts_with("```\nSET key value"), "{card}");
        assert!(card.contains("[NX | XX]"), "{card}");
        assert!(card.contains("Since Redis 1.0.0"), "{card}");
        assert!(
            card.contains("ACL categories: `@write` `@string` `@slow`"),
            "{card}"
        );
        assert!(card.contains("Writes"), "{card}");
        let card = command(commands::lookup("hgetex").expect("HGETEX"), &redis_7_2);
        assert!(
            card.contains("**Not on the target `redis-7.2`**: the model has it since Redis 8.0"),
            "{card}"
        );
        // A name completion leaves out says why when typed anyway.
        let card = command(commands::lookup("multi").expect("MULTI"), &redis_7_2);
        assert!(
            card.contains("**Refused in scripts** on the target's servers"),
            "{card}"
        );
        let redis_7 = Target::parse("redis-7.0,redis-7.2").expect("a target");
        let card = command(commands::lookup("blpop").expect("BLPOP"), &redis_7);
        assert!(
            card.contains("**Refused in scripts** on Redis 7.0:"),
            "{card}"
        );
    }
}
