//! Code actions: apply a diagnostic's "did you mean", and silence a
//! warning with an opt-out comment on its line. What each diagnostic
//! allows travels in its `data`, computed when it is published.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Position, Range, TextEdit, Uri, WorkspaceEdit,
};
use redis_script_analysis::{Diagnostic, Severity};
use serde_json::{Value, json};

use super::text;

/// What a code action can do about `diagnostic`, underlining `range` of
/// `source`: `{"replace": …}` and `{"allow": …}`.
pub fn fixes(source: &str, range: Range, diagnostic: &Diagnostic) -> Option<Value> {
    let mut data = serde_json::Map::new();
    if let Some(replacement) = replacement(source, range, diagnostic) {
        data.insert("replace".to_owned(), json!(replacement));
    }
    if diagnostic.severity == Severity::Warning && diagnostic.code.is_finding() {
        data.insert("allow".to_owned(), json!(diagnostic.code.name()));
    }
    (!data.is_empty()).then_some(Value::Object(data))
}

/// The text to put in place of the underlined one, from "did you mean
/// `X`?": inside the quotes of a string, in the case it was typed in.
fn replacement(source: &str, range: Range, diagnostic: &Diagnostic) -> Option<String> {
    let said = diagnostic.help.iter().chain([&diagnostic.message]);
    let suggested = said.into_iter().find_map(|text| {
        let (_, rest) = text.split_once("did you mean `")?;
        let (suggested, _) = rest.split_once('`')?;
        Some(suggested.to_owned())
    })?;
    if range.start.line != range.end.line
        || suggested.is_empty()
        || suggested.contains(char::is_whitespace)
    {
        return None;
    }
    let line = text::line_text(source, range.start.line as usize);
    let start = text::offset(line, Position::new(0, range.start.character));
    let end = text::offset(line, Position::new(0, range.end.character));
    let underlined = line.get(start..end)?;
    let quoted = underlined.len() >= 2
        && (underlined.starts_with('\'') || underlined.starts_with('"'))
        && underlined.ends_with(&underlined[..1]);
    let typed = if quoted {
        &underlined[1..underlined.len() - 1]
    } else {
        underlined
    };
    let lowercase = typed.chars().any(|c| c.is_ascii_lowercase())
        && !typed.chars().any(|c| c.is_ascii_uppercase());
    let word = if lowercase {
        suggested.to_lowercase()
    } else {
        suggested
    };
    if word == typed {
        return None;
    }
    Some(if quoted {
        format!("{}{word}{}", &underlined[..1], &underlined[..1])
    } else {
        word
    })
}

/// The actions for the diagnostics an editor sends back for a range of
/// the document `uri` holding `source`.
pub fn code_actions(
    uri: &Uri,
    source: &str,
    diagnostics: &[lsp_types::Diagnostic],
) -> Vec<CodeActionOrCommand> {
    let mut actions = Vec::new();
    for diagnostic in diagnostics {
        let Some(data) = &diagnostic.data else {
            continue;
        };
        let edit = |edits: Vec<TextEdit>| WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..WorkspaceEdit::default()
        };
        if let Some(replacement) = data.get("replace").and_then(Value::as_str) {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Replace with `{replacement}`"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic.clone()]),
                edit: Some(edit(vec![TextEdit::new(
                    diagnostic.range,
                    replacement.to_owned(),
                )])),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
        if let Some(name) = data.get("allow").and_then(Value::as_str) {
            let line = diagnostic.range.start.line;
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Allow `{name}` on this line"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic.clone()]),
                edit: Some(edit(vec![allow_edit(source, line, name)])),
                ..CodeAction::default()
            }));
        }
    }
    actions
}

/// The opt-out for `name` on line `line`: added to the line's opt-out
/// comment, or as a new comment at its end.
fn allow_edit(source: &str, line: u32, name: &str) -> TextEdit {
    let text = text::line_text(source, line as usize);
    let utf16 = |bytes: usize| text::utf16_len(&text[..bytes]);
    const OPENING: &str = "redis-script: allow(";
    if let Some(start) = text.find(OPENING)
        && let Some(close) = text[start..].find(')')
    {
        let at = Position::new(line, utf16(start + close));
        return TextEdit::new(Range::new(at, at), format!(", {name}"));
    }
    let end = Position::new(line, utf16(text.len()));
    TextEdit::new(
        Range::new(end, end),
        format!(" -- redis-script: allow({name})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis_script_analysis::Code;

    fn suggestion(source: &str, column: usize, width: usize, help: &str) -> Option<String> {
        let diagnostic =
            Diagnostic::error(Code::ALL[0], 1, column, width, "unknown").with_help(help);
        let range = text::range(source, 1, column, width);
        replacement(source, range, &diagnostic)
    }

    #[test]
    fn did_you_mean_keeps_quotes_and_case() {
        let source = "return redis.call('hgetalll', KEYS[1])";
        assert_eq!(
            suggestion(source, 19, 10, "did you mean `HGETALL`?").as_deref(),
            Some("'hgetall'")
        );
        let source = "return strin.format('%d', 1)";
        assert_eq!(
            suggestion(source, 8, 12, "did you mean `string.format`?").as_deref(),
            Some("string.format")
        );
        assert_eq!(suggestion(source, 8, 12, "write it differently"), None);
    }

    #[test]
    fn opt_outs_join_the_lines_comment() {
        let edit = allow_edit(
            "local a = 1 -- redis-script: allow(nil_value)\n",
            0,
            "always_true",
        );
        assert_eq!(edit.new_text, ", always_true");
        assert_eq!(edit.range.start, Position::new(0, 44));
        let edit = allow_edit("local a = 1\n", 0, "always_true");
        assert_eq!(edit.new_text, " -- redis-script: allow(always_true)");
        assert_eq!(edit.range.start, Position::new(0, 11));
    }
}
