//! Completion inside a command call's strings: command names the target
//! has, a command's subcommands, and the words of its grammar.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, Position, Range, TextEdit,
};
use redis_script_analysis::Target;
use redis_script_analysis::commands::shapes::{self, Argument, ArgumentKind};
use redis_script_analysis::commands::{self, COMMANDS, CommandEntry};

use super::call_site::{self, Operand};
use super::text;

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
    let words: Vec<(String, String, Option<String>)> =
        match call_site::operand(line, &literals, index) {
            Some(Operand::Command) => COMMANDS
                .iter()
                .filter(|entry| on_target(entry, target))
                .map(|entry| {
                    (
                        entry.name.to_uppercase(),
                        summary(entry),
                        Some(super::hover::command(entry, target)),
                    )
                })
                .collect(),
            Some(Operand::AfterCommand { command }) => match commands::lookup(&command) {
                Some(parent) if !parent.subcommands.is_empty() => parent
                    .subcommands
                    .iter()
                    .filter(|entry| on_target(entry, target))
                    .map(|entry| {
                        let sub = entry.name.rsplit('|').next().unwrap_or(entry.name);
                        (
                            sub.to_uppercase(),
                            summary(entry),
                            Some(super::hover::command(entry, target)),
                        )
                    })
                    .collect(),
                Some(entry) => tokens(entry, target),
                None => Vec::new(),
            },
            Some(Operand::Later { command }) => {
                commands::lookup(&command).map_or_else(Vec::new, |entry| tokens(entry, target))
            }
            None => Vec::new(),
        };
    words
        .into_iter()
        .map(|(word, detail, documentation)| {
            let word = if lowercase { word.to_lowercase() } else { word };
            CompletionItem {
                label: word.clone(),
                kind: Some(CompletionItemKind::KEYWORD),
                detail: Some(detail),
                documentation: documentation.map(|value| {
                    Documentation::MarkupContent(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value,
                    })
                }),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(replaced, word))),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// Whether some server of the target has the command (its module
/// included).
fn on_target(entry: &CommandEntry, target: &Target) -> bool {
    target.platforms().iter().any(|platform| {
        entry.releases().contains(platform.release)
            && entry
                .module
                .is_none_or(|module| platform.has_module(module))
    })
}

fn summary(entry: &CommandEntry) -> String {
    let mut summary = entry.releases().describe();
    if entry.deprecation.is_some() {
        summary.push_str(", deprecated");
    }
    summary
}

/// The words of a command's grammar on the target (`EX`, `NX`,
/// `WITHSCORES`), once each.
fn tokens(entry: &CommandEntry, target: &Target) -> Vec<(String, String, Option<String>)> {
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
        .map(|word| (word, format!("a word of {command}"), None))
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
}
