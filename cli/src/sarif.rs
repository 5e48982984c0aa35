//! `--format sarif`: the findings as a SARIF 2.1.0 log, the format code
//! scanning services read (GitHub's among them). Each diagnostic code is a
//! rule, with its summary, level and long explanation; each diagnostic a
//! result at its file, line and columns (in characters, as the log says).

use redis_script_analysis::{Code, Level};
use serde_json::{Value, json};

use crate::check::CheckRun;

/// The log: one run of the checker.
pub fn log(outcome: &CheckRun) -> String {
    let rules: Vec<Value> = Code::ALL.iter().map(|&code| rule(code)).collect();
    let mut results = Vec::new();
    for script in &outcome.scripts {
        for located in &script.diagnostics {
            let diagnostic = &located.diagnostic;
            let (path, _) = script.place(located);
            let mut text = diagnostic.message.clone();
            for note in &diagnostic.notes {
                text.push_str(&format!("\nnote: {note}"));
            }
            if let Some(help) = &diagnostic.help {
                text.push_str(&format!("\nhelp: {help}"));
            }
            results.push(json!({
                "ruleId": diagnostic.code.code(),
                "ruleIndex": rule_index(diagnostic.code),
                "level": diagnostic.severity.label(),
                "message": { "text": text },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri(path), "uriBaseId": "%SRCROOT%" },
                        "region": {
                            "startLine": diagnostic.line,
                            "startColumn": diagnostic.column,
                            "endColumn": diagnostic.column + diagnostic.width,
                        }
                    }
                }],
            }));
        }
    }
    let notifications: Vec<Value> = outcome
        .unreadable
        .iter()
        .map(|unreadable| {
            json!({
                "level": "error",
                "message": { "text": format!("cannot read `{}`: {}", unreadable.path, unreadable.reason) },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri(&unreadable.path), "uriBaseId": "%SRCROOT%" }
                    }
                }],
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "redis-script-check",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules,
                }
            },
            "invocations": [{
                "executionSuccessful": outcome.unreadable.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

fn rule(code: Code) -> Value {
    let level = match code.level() {
        Level::Warning => "warning",
        Level::Error | Level::ErrorOrWarning => "error",
    };
    let mut tags = vec![if code.is_finding() {
        "finding"
    } else {
        "correctness"
    }];
    if code.level() == Level::ErrorOrWarning {
        tags.push("error-or-warning");
    }
    json!({
        "id": code.code(),
        "name": code.name(),
        "shortDescription": { "text": code.summary() },
        "help": { "text": code.explanation(), "markdown": code.explanation() },
        "defaultConfiguration": { "level": level },
        "properties": { "tags": tags },
    })
}

fn rule_index(code: Code) -> usize {
    Code::ALL
        .iter()
        .position(|&other| other == code)
        .unwrap_or(0)
}

/// A relative path as a URI reference: `/` between parts, and every byte
/// outside the unreserved characters percent-encoded.
fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path.strip_prefix("./").unwrap_or(&path);
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(uri("lua/release_lock.lua"), "lua/release_lock.lua");
        assert_eq!(uri("./my scripts/ü.lua"), "my%20scripts/%C3%BC.lua");
        assert_eq!(uri("a\\b#c.lua"), "a/b%23c.lua");
    }
}
