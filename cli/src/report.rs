//! What the user reads: diagnostics in the compiler's layout, or one JSON
//! document for tools.

use std::fmt::Write as _;

use redis_script_analysis::text::plural;
use redis_script_analysis::{DeclaredBy, Diagnostic, Parameter, Signature};

use crate::check::CheckRun;

/// Every diagnostic as rustc would print it, then a summary line.
pub fn human(outcome: &CheckRun, deny_warnings: bool) -> String {
    let mut out = String::new();
    for unreadable in &outcome.unreadable {
        let _ = writeln!(
            out,
            "error: cannot read `{}`: {}\n",
            unreadable.path, unreadable.reason
        );
    }
    for script in &outcome.scripts {
        for located in &script.diagnostics {
            let (path, source) = script.place(located);
            out.push_str(&located.diagnostic.render_standalone(path, source));
            out.push_str("\n\n");
        }
    }
    let (errors, warnings) = (outcome.errors(), outcome.warnings());
    let libraries = outcome
        .scripts
        .iter()
        .filter(|script| script.library)
        .count();
    let scripts = outcome.scripts.len() - libraries + outcome.unreadable.len();
    let checked = match libraries {
        0 => plural(scripts, "script"),
        1 => format!("{} and 1 library", plural(scripts, "script")),
        _ => format!("{} and {libraries} libraries", plural(scripts, "script")),
    };
    let found = match (errors, warnings) {
        (0, 0) => "no problems found".to_string(),
        (0, _) => plural(warnings, "warning"),
        (_, 0) => plural(errors, "error"),
        _ => format!(
            "{}, {}",
            plural(errors, "error"),
            plural(warnings, "warning")
        ),
    };
    let denied = if deny_warnings && warnings > 0 {
        " (warnings are denied)"
    } else {
        ""
    };
    let _ = writeln!(out, "checked {checked}: {found}{denied}");
    if !outcome.built_at_run_time.is_empty() {
        let _ = writeln!(
            out,
            "not checked: {} built at run time ({})",
            plural(outcome.built_at_run_time.len(), "script"),
            outcome.built_at_run_time.join(", ")
        );
    }
    if outcome.includes_detected > 0 {
        let _ = writeln!(
            out,
            "includes: the `--- @include` lines of {} were read as bullmq's loader reads them, as no configuration says how: say so with `includes = \"bullmq\"` in `redis-script.toml`, or `--includes bullmq`",
            plural(outcome.includes_detected, "script")
        );
    }
    let guessed: Vec<String> = outcome
        .scripts
        .iter()
        .filter_map(|script| {
            let embedded = script.embedded_in.as_ref()?;
            embedded
                .guessed
                .any()
                .then(|| format!("{} ({})", script.path, embedded.guessed.describe()))
        })
        .collect();
    if !guessed.is_empty() {
        // A count no call states is the highest index read: it can never
        // be out of range, so the user should know which were guessed.
        let _ = writeln!(
            out,
            "counts guessed from the indices read (nothing states them): {}",
            guessed.join(", ")
        );
    }
    out
}

/// One JSON document: the scripts checked (with the keys and arguments
/// each was checked against), every diagnostic, and the totals.
pub fn json(outcome: &CheckRun) -> String {
    let mut files = Vec::new();
    let mut diagnostics = Vec::new();
    for unreadable in &outcome.unreadable {
        files.push(format!(
            "{{\"path\": {}, \"signature\": null}}",
            string(&unreadable.path)
        ));
        diagnostics.push(format!(
            "{{\"severity\": \"error\", \"code\": null, \"path\": {}, \"line\": null, \"column\": null, \"width\": null, \"message\": {}, \"notes\": [], \"help\": null, \"parameter\": null, \"finding\": null}}",
            string(&unreadable.path),
            string(&format!("cannot read `{}`: {}", unreadable.path, unreadable.reason)),
        ));
    }
    for script in &outcome.scripts {
        let embedded_in = match &script.embedded_in {
            Some(embedded) => {
                let guessed: Vec<&str> = [
                    (embedded.guessed.keys, "\"keys\""),
                    (embedded.guessed.args, "\"args\""),
                ]
                .into_iter()
                .filter_map(|(guessed, name)| guessed.then_some(name))
                .collect();
                format!(
                    ", \"embedded_in\": {{\"path\": {}, \"line\": {}}}, \"guessed\": [{}]",
                    string(&embedded.path),
                    embedded.line,
                    guessed.join(", ")
                )
            }
            None => String::new(),
        };
        files.push(format!(
            "{{\"path\": {}, \"signature\": {}{embedded_in}}}",
            string(&script.path),
            script
                .signature
                .as_ref()
                .map_or("null".to_string(), signature),
        ));
        diagnostics.extend(
            script
                .diagnostics
                .iter()
                .map(|located| diagnostic(script.place(located).0, &located.diagnostic)),
        );
    }
    let built: Vec<String> = outcome
        .built_at_run_time
        .iter()
        .map(|place| string(place))
        .collect();
    format!(
        "{{\n  \"files\": {},\n  \"built_at_run_time\": {},\n  \"diagnostics\": {},\n  \"errors\": {},\n  \"warnings\": {}\n}}\n",
        array(&files),
        array(&built),
        array(&diagnostics),
        outcome.errors(),
        outcome.warnings()
    )
}

/// One element a line, so that the document diffs and greps well.
fn array(elements: &[String]) -> String {
    if elements.is_empty() {
        return "[]".to_string();
    }
    format!("[\n    {}\n  ]", elements.join(",\n    "))
}

fn signature(signature: &Signature) -> String {
    let declared_by = match signature.declared_by {
        DeclaredBy::RustFunction => "rust-function",
        DeclaredBy::Header => "header",
        DeclaredBy::CommandLine => "command-line",
        DeclaredBy::Configuration => "configuration",
        DeclaredBy::HostCall => "host-call",
        DeclaredBy::ScriptReads => "script-reads",
    };
    format!(
        "{{\"keys\": {}, \"variadic_keys\": {}, \"args\": {}, \"variadic_args\": {}, \"declared_by\": \"{declared_by}\"}}",
        signature.keys, signature.variadic_keys, signature.args, signature.variadic_args
    )
}

fn diagnostic(path: &str, diagnostic: &Diagnostic) -> String {
    let severity = diagnostic.severity.label();
    let parameter = match diagnostic.parameter {
        Some(Parameter::Key(index)) => string(&format!("KEYS[{index}]")),
        Some(Parameter::Arg(index)) => string(&format!("ARGV[{index}]")),
        Some(Parameter::KeyCount) => string("keys"),
        None => "null".to_string(),
    };
    format!(
        "{{\"severity\": \"{severity}\", \"code\": \"{}\", \"path\": {}, \"line\": {}, \"column\": {}, \"width\": {}, \"message\": {}, \"notes\": [{}], \"help\": {}, \"parameter\": {parameter}, \"finding\": {}}}",
        diagnostic.code,
        string(path),
        diagnostic.line,
        diagnostic.column,
        diagnostic.width,
        string(&diagnostic.message),
        diagnostic
            .notes
            .iter()
            .map(|note| string(note))
            .collect::<Vec<_>>()
            .join(", "),
        diagnostic
            .help
            .as_deref()
            .map_or("null".to_string(), string),
        diagnostic.finding().map_or("null".to_string(), string),
    )
}

/// A JSON string literal: quotes, backslashes and control characters
/// escaped (RFC 8259, section 7); everything else as UTF-8.
pub(crate) fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            control if u32::from(control) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(control));
            }
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_json_strings() {
        assert_eq!(string("plain"), "\"plain\"");
        assert_eq!(
            string("say \"hi\"\\now\n\ttab\r\u{1}\u{8}\u{c}\u{1f}"),
            "\"say \\\"hi\\\"\\\\now\\n\\ttab\\r\\u0001\\b\\f\\u001f\""
        );
        assert_eq!(string("… `x` ü"), "\"… `x` ü\"");
        assert_eq!(string("\u{7f}"), "\"\u{7f}\"");
    }
}
