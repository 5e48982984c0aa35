//! Completion inside a command call's strings: command names the target
//! has, a command's subcommands, and the words of its grammar.
//!
//! A command every server of the target refuses in scripts (`MULTI`,
//! `EVAL`, `SUBSCRIBE`, `CONFIG GET`: the model's `noscript` flag) is not
//! offered, nor one any of a named target's servers refuses (`BLPOP` on a
//! target with Redis 7.0): the checker rejects the call there, so the menu
//! would only offer an error, and hovering the name says why. Under the
//! lenient default target, where only a refusal by every server is an
//! error, a command some servers refuse is offered last, its detail naming
//! them.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionItemTag, CompletionTextEdit, Documentation,
    MarkupContent, MarkupKind, Position, Range, TextEdit,
};
use redis_script_analysis::Target;
use redis_script_analysis::commands::shapes::{self, Argument, ArgumentKind};
use redis_script_analysis::commands::{self, COMMANDS, CommandEntry};
use redis_script_analysis::target::{ReleaseSet, Server};

use super::call_site::{self, Operand};
use super::hover;
use super::text;

/// One word to offer, before it is spelled as the user types.
struct Offer {
    word: String,
    detail: String,
    documentation: Option<String>,
    deprecated: bool,
    /// Offered after the others: deprecated, or refused by some servers.
    last: bool,
}

/// What to offer at `position` of `source`, checked for `target`.
pub fn complete(source: &str, position: Position, target: &Target) -> Vec<CompletionItem> {
    let line = text::line_text(source, position.line as usize);
    let at = text::offset(line, Position::new(0, position.character));
    let literals = call_site::literals(line);
    // Inside the quotes of a literal (or after the opening quote of one
    // not closed yet).
    let Some(index) = literals
        .iter()
        .position(|literal| (literal.text_start..=literal.text_end).contains(&at))
    else {
        return Vec::new();
    };
    let literal = literals[index];
    let typed = line.get(literal.text_start..at).unwrap_or("");
    let lowercase = !typed.is_empty() && typed.chars().all(|c| !c.is_ascii_uppercase());
    let replaced = Range::new(
        Position::new(position.line, text::utf16_len(&line[..literal.text_start])),
        Position::new(position.line, text::utf16_len(&line[..literal.text_end])),
    );
    let offers: Vec<Offer> = match call_site::operand(line, &literals, index) {
        Some(Operand::Command) => COMMANDS
            .iter()
            .filter_map(|entry| command(entry, &entry.name.to_uppercase(), target))
            .collect(),
        Some(Operand::AfterCommand { command: name }) => match commands::lookup(&name) {
            Some(parent) if !parent.subcommands.is_empty() => parent
                .subcommands
                .iter()
                .filter_map(|entry| {
                    let sub = entry.name.rsplit('|').next().unwrap_or(entry.name);
                    command(entry, &sub.to_uppercase(), target)
                })
                .collect(),
            Some(entry) => tokens(entry, target),
            None => Vec::new(),
        },
        Some(Operand::Later { command: name }) => {
            commands::lookup(&name).map_or_else(Vec::new, |entry| tokens(entry, target))
        }
        None => Vec::new(),
    };
    offers
        .into_iter()
        .map(|offer| {
            let word = if lowercase {
                offer.word.to_lowercase()
            } else {
                offer.word
            };
            CompletionItem {
                label: word.clone(),
                kind: Some(CompletionItemKind::KEYWORD),
                detail: Some(offer.detail),
                documentation: offer.documentation.map(|value| {
                    Documentation::MarkupContent(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value,
                    })
                }),
                tags: offer
                    .deprecated
                    .then(|| vec![CompletionItemTag::DEPRECATED]),
                sort_text: Some(format!("{}{word}", u8::from(offer.last))),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(replaced, word))),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// A command (or subcommand) named `word`, if a script on the target may
/// call it.
fn command(entry: &'static CommandEntry, word: &str, target: &Target) -> Option<Offer> {
    let has = on_target(entry, target);
    if has.is_empty() {
        return None;
    }
    let refused = hover::refused_in_scripts(entry, has);
    let refused_everywhere = refused == has;
    if refused_everywhere || (target.is_strict() && !refused.is_empty()) {
        return None;
    }
    let mut detail = vec![since(entry, target)];
    if has != target.releases() {
        detail.push(format!("the target has it {}", has.describe()));
    }
    if !refused.is_empty() {
        detail.push(format!(
            "refused in scripts on {}",
            hover::titles(refused).join(", ")
        ));
    }
    if let Some(deprecation) = entry.deprecation {
        detail.push(format!(
            "deprecated since {}: use {}",
            deprecation.since, deprecation.replaced_by
        ));
    }
    Some(Offer {
        word: word.to_owned(),
        detail: detail.join("; "),
        documentation: Some(hover::command(entry, target)),
        deprecated: entry.deprecation.is_some(),
        last: entry.deprecation.is_some() || !refused.is_empty(),
    })
}

/// The target's releases having the command, with its module loaded.
fn on_target(entry: &CommandEntry, target: &Target) -> ReleaseSet {
    target
        .platforms()
        .iter()
        .filter(|platform| {
            entry.releases().contains(platform.release)
                && entry
                    .module
                    .is_none_or(|module| platform.has_module(module))
        })
        .fold(ReleaseSet::NONE, |set, platform| {
            set.union(ReleaseSet::only(platform.release))
        })
}

/// The release that introduced the command on the target's servers, as
/// the server documents it: `since Redis 2.6.0`, `since Redis and Valkey
/// 2.0.0`, `since Redis 2.9.50, Valkey 3.0.0`, `since the JSON module
/// 1.0.0`.
fn since(entry: &CommandEntry, target: &Target) -> String {
    let since = entry.since;
    if let Some((module, version)) = entry.module.zip(since.module) {
        return format!("since the {} module {version}", module.title());
    }
    let mut by_version: Vec<(&str, Vec<&str>)> = Vec::new();
    for (server, version) in [(Server::Redis, since.redis), (Server::Valkey, since.valkey)] {
        let on_target = target
            .platforms()
            .iter()
            .any(|platform| platform.release().server == server);
        let Some(version) = version.filter(|_| on_target) else {
            continue;
        };
        match by_version.iter_mut().find(|(known, _)| *known == version) {
            Some((_, servers)) => servers.push(server.title()),
            None => by_version.push((version, vec![server.title()])),
        }
    }
    if by_version.is_empty() {
        return "release not documented".to_owned();
    }
    let parts: Vec<String> = by_version
        .iter()
        .map(|(version, servers)| format!("{} {version}", servers.join(" and ")))
        .collect();
    format!("since {}", parts.join(", "))
}

/// The words of a command's grammar on the target (`EX`, `NX`,
/// `WITHSCORES`), once each.
fn tokens(entry: &CommandEntry, target: &Target) -> Vec<Offer> {
    let mut words: Vec<String> = Vec::new();
    let Some(shape) = shapes::shape(entry.name) else {
        return Vec::new();
    };
    for form in shape.forms_for(target.releases()) {
        collect_tokens(form.arguments, &mut words);
    }
    let command = entry.name.replace('|', " ").to_uppercase();
    words
        .into_iter()
        .map(|word| Offer {
            word,
            detail: format!("a word of {command}"),
            documentation: None,
            deprecated: false,
            last: false,
        })
        .collect()
}

fn collect_tokens(arguments: &[Argument], words: &mut Vec<String>) {
    for argument in arguments {
        if let Some(token) = argument.token {
            let token = token.to_uppercase();
            if !words.contains(&token) {
                words.push(token);
            }
        }
        match argument.kind {
            ArgumentKind::OneOf(inner) | ArgumentKind::Block(inner) => {
                collect_tokens(inner, words);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(source: &str, character: u32, target: &str) -> Vec<String> {
        let target = Target::parse(target).expect("a target");
        complete(source, Position::new(0, character), &target)
            .into_iter()
            .map(|item| item.label)
            .collect()
    }

    #[test]
    fn offers_the_targets_commands() {
        let source = "return redis.call('HGET";
        let on_8 = labels(source, 23, "redis-8.0");
        assert!(on_8.contains(&"HGETEX".to_owned()));
        assert!(on_8.contains(&"HGETALL".to_owned()));
        let on_7 = labels(source, 23, "redis-7.2");
        assert!(on_7.contains(&"HGETALL".to_owned()));
        assert!(!on_7.contains(&"HGETEX".to_owned()));
        // Typed in lower case, offered in lower case.
        assert!(labels("redis.call('hg", 14, "redis-7.2").contains(&"hgetall".to_owned()));
    }

    #[test]
    fn offers_subcommands_and_words() {
        let subcommands = labels("redis.call('OBJECT', '')", 22, "redis-7.2");
        assert!(
            subcommands.contains(&"ENCODING".to_owned()),
            "{subcommands:?}"
        );
        let words = labels("redis.call('SET', KEYS[1], ARGV[1], '')", 37, "redis-7.2");
        for word in ["EX", "PX", "NX", "XX", "KEEPTTL", "GET"] {
            assert!(words.contains(&word.to_owned()), "{word}: {words:?}");
        }
        assert!(labels("print('x')", 7, "redis-7.2").is_empty());
    }

    fn items(source: &str, target: &str) -> Vec<CompletionItem> {
        let target = Target::parse(target).expect("a target");
        let end = u32::try_from(source.len()).expect("a short line");
        complete(source, Position::new(0, end), &target)
    }

    fn item<'a>(items: &'a [CompletionItem], label: &str) -> Option<&'a CompletionItem> {
        items.iter().find(|item| item.label == label)
    }

    #[test]
    fn leaves_out_what_scripts_cannot_call() {
        for target in ["redis-7.0", "redis-8.6", "valkey-9.1", "any"] {
            let offered = labels("redis.call('", 12, target);
            for refused in ["MULTI", "EXEC", "EVAL", "FCALL", "SUBSCRIBE", "MONITOR"] {
                assert!(
                    !offered.contains(&refused.to_owned()),
                    "{refused} on {target}"
                );
            }
            assert!(offered.contains(&"PUBLISH".to_owned()), "{target}");
            // Scripts may ask CONFIG for its help, not for the settings.
            let config = labels("redis.call('CONFIG', '", 22, target);
            assert_eq!(config, ["HELP"], "CONFIG's subcommands on {target}");
        }
        // Blocking commands: refused by Redis 7.0 only.
        assert!(!labels("redis.call('BL", 14, "redis-7.0").contains(&"BLPOP".to_owned()));
        assert!(!labels("redis.call('BL", 14, "redis-7.0,redis-7.2").contains(&"BLPOP".to_owned()));
        let on_7_2 = items("redis.call('BLPOP", "redis-7.2");
        let blpop = item(&on_7_2, "BLPOP").expect("BLPOP on redis-7.2");
        assert_eq!(blpop.detail.as_deref(), Some("since Redis 2.0.0"));
        // The lenient default keeps it, saying where it fails, after the rest.
        let anywhere = items("redis.call('BL", "any");
        let blpop = item(&anywhere, "BLPOP").expect("BLPOP on any");
        let detail = blpop.detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains("refused in scripts on Redis 7.0"),
            "{detail}"
        );
        assert_eq!(blpop.sort_text.as_deref(), Some("1BLPOP"));
        let blmpop = item(&anywhere, "BLMPOP").expect("BLMPOP on any");
        assert_eq!(blmpop.sort_text.as_deref(), Some("0BLMPOP"));
    }

    #[test]
    fn says_when_each_command_came_and_what_replaces_a_deprecated_one() {
        for (typed, target, label, detail) in [
            ("GET", "redis-7.2", "GET", "since Redis 1.0.0"),
            ("GET", "valkey-8.1", "GET", "since Valkey 1.0.0"),
            ("GET", "any", "GETEX", "since Redis and Valkey 6.2.0"),
            (
                "HGETEX",
                "redis-7.4,redis-8.0",
                "HGETEX",
                "since Redis 8.0.0; the target has it on Redis 8.0",
            ),
        ] {
            let offered = items(&format!("redis.call('{typed}"), target);
            assert_eq!(
                item(&offered, label).and_then(|item| item.detail.as_deref()),
                Some(detail),
                "{label} on {target}"
            );
        }
        let get = items("redis.call('GET", "any");
        let getset = item(&get, "GETSET").expect("GETSET");
        assert_eq!(getset.tags, Some(vec![CompletionItemTag::DEPRECATED]));
        assert_eq!(
            getset.detail.as_deref(),
            Some(
                "since Redis and Valkey 1.0.0; deprecated since 6.2.0: use `SET` with the `GET` argument"
            )
        );
        assert_eq!(item(&get, "GET").and_then(|item| item.tags.clone()), None);
    }

    /// Every command offered, on every release, against the model: one a
    /// script may call there, its first release as the model records it,
    /// tagged deprecated exactly when the model deprecates it.
    #[test]
    fn every_offer_agrees_with_the_model() {
        for release in redis_script_analysis::target::RELEASES {
            let target = Target::parse(release.name).expect("a release");
            let offered = complete("redis.call('", Position::new(0, 12), &target);
            assert!(offered.len() > 150, "{}: {}", release.name, offered.len());
            for offer in &offered {
                let entry = commands::lookup(&offer.label).expect("a command of the model");
                let has = on_target(entry, &target);
                assert!(
                    hover::refused_in_scripts(entry, has).is_empty(),
                    "{} is refused on {}",
                    offer.label,
                    release.name
                );
                let version = match (entry.module, release.server) {
                    (Some(_), _) => entry.since.module,
                    (None, Server::Redis) => entry.since.redis,
                    (None, Server::Valkey) => entry.since.valkey,
                };
                if let Some(version) = version {
                    let detail = offer.detail.as_deref().unwrap_or_default();
                    assert!(
                        detail.starts_with("since ")
                            && detail
                                .split(';')
                                .next()
                                .is_some_and(|first| first.ends_with(version)),
                        "{} on {}: {detail}",
                        offer.label,
                        release.name
                    );
                }
                assert_eq!(
                    offer.tags.is_some(),
                    entry.deprecation.is_some(),
                    "{} on {}",
                    offer.label,
                    release.name
                );
            }
        }
    }
}
