//! `--baseline FILE`: the findings a team accepts for now, so that a
//! legacy folder can adopt the checker and fail only on new ones.
//!
//! A finding is recorded by its file (relative to the baseline's
//! directory), code, message and the text of its source line, not by its
//! line number: adding a line above it does not make it new. The same
//! finding twice in a file is recorded with its count, and each recorded
//! one hides one found.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::check::{CheckRun, CheckedFile, Located, replace_line_numbers};

/// The file's format version; a file of another version is refused.
const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    about: String,
    version: u32,
    findings: Vec<Recorded>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recorded {
    path: String,
    code: String,
    message: String,
    source_line: String,
    count: usize,
}

/// What applying a baseline did, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub file: PathBuf,
    /// Findings the baseline hid.
    pub hidden: usize,
    /// Recorded findings no longer found: fixed, or their line changed.
    pub gone: usize,
}

impl Summary {
    /// The lines after the human report's summary.
    pub fn describe(&self) -> String {
        let file = self.file.display();
        let mut out = String::new();
        if self.hidden > 0 {
            out.push_str(&format!(
                "{} recorded in the baseline `{file}` not shown\n",
                plural(self.hidden, "finding")
            ));
        }
        if self.gone > 0 {
            out.push_str(&format!(
                "{} of the baseline no longer found: run with `--update-baseline` to drop {}\n",
                plural(self.gone, "finding"),
                if self.gone == 1 { "it" } else { "them" }
            ));
        }
        out
    }
}

fn plural(count: usize, noun: &str) -> String {
    redis_script_analysis::text::plural(count, noun)
}

/// The key a finding is matched by.
type Key = (String, String, String, String);

/// Records every diagnostic of `outcome` in `file`; the count recorded.
pub fn write(file: &Path, outcome: &CheckRun) -> Result<usize, String> {
    let base = directory_of(file);
    let mut counts: BTreeMap<Key, usize> = BTreeMap::new();
    for script in &outcome.scripts {
        for located in &script.diagnostics {
            *counts.entry(key(&base, script, located)).or_default() += 1;
        }
    }
    let recorded: usize = counts.values().sum();
    let findings = counts
        .into_iter()
        .map(|((path, code, message, source_line), count)| Recorded {
            path,
            code,
            message,
            source_line,
            count,
        })
        .collect();
    let document = File {
        about: "Findings of redis-script-check accepted for now: `--baseline` hides them and reports only new ones. Written by `--update-baseline`.".to_owned(),
        version: VERSION,
        findings,
    };
    let text = serde_json::to_string_pretty(&document)
        .map_err(|error| format!("cannot write the baseline: {error}"))?;
    std::fs::write(file, text + "\n")
        .map_err(|error| format!("cannot write `{}`: {error}", file.display()))?;
    Ok(recorded)
}

/// What `--update-baseline` prints on standard error.
pub fn written_message(file: &Path, recorded: usize) -> String {
    format!(
        "recorded {} in `{}`",
        plural(recorded, "finding"),
        file.display()
    )
}

/// Hides from `outcome` every diagnostic `file` records.
pub fn apply(file: &Path, outcome: &mut CheckRun) -> Result<Summary, String> {
    let shown = file.display();
    let text = std::fs::read_to_string(file).map_err(|error| {
        format!("cannot read the baseline `{shown}`: {error}; `--update-baseline` writes it")
    })?;
    let document: File = serde_json::from_str(&text)
        .map_err(|error| format!("`{shown}` is not a baseline written by this checker: {error}"))?;
    if document.version != VERSION {
        return Err(format!(
            "`{shown}` is a baseline of format {}, this checker reads format {VERSION}: write it again with `--update-baseline`",
            document.version
        ));
    }
    let mut remaining: BTreeMap<Key, usize> = BTreeMap::new();
    for recorded in document.findings {
        let key = (
            recorded.path,
            recorded.code,
            normalized(&recorded.message),
            recorded.source_line,
        );
        *remaining.entry(key).or_default() += recorded.count;
    }
    let base = directory_of(file);
    let mut hidden = 0;
    for script in &mut outcome.scripts {
        let keys: Vec<Key> = script
            .diagnostics
            .iter()
            .map(|located| key(&base, script, located))
            .collect();
        let mut keys = keys.into_iter();
        script.diagnostics.retain(|_| {
            let Some(key) = keys.next() else {
                return true;
            };
            match remaining.get_mut(&key) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    hidden += 1;
                    false
                }
                _ => true,
            }
        });
    }
    Ok(Summary {
        file: file.to_path_buf(),
        hidden,
        gone: remaining.values().sum(),
    })
}

fn key(base: &Path, script: &CheckedFile, located: &Located) -> Key {
    let (path, source) = script.place(located);
    let diagnostic = &located.diagnostic;
    let source_line = source
        .lines()
        .nth(diagnostic.line.saturating_sub(1))
        .unwrap_or_default()
        .trim()
        .to_owned();
    (
        relative_to(base, path),
        diagnostic.code.to_string(),
        normalized(&diagnostic.message),
        source_line,
    )
}

/// A message with the line numbers it mentions ("decoded at line 48")
/// written `line …`, so that a finding keeps its key when lines above it
/// move.
fn normalized(message: &str) -> String {
    replace_line_numbers(message, |_| "…".to_owned())
}

fn directory_of(file: &Path) -> PathBuf {
    std::path::absolute(file)
        .ok()
        .and_then(|absolute| absolute.parent().map(Path::to_path_buf))
        .unwrap_or_default()
}

/// `path` relative to `base` with `/` separators when it is below it; as
/// shown otherwise.
fn relative_to(base: &Path, path: &str) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    match absolute.strip_prefix(base) {
        Ok(relative) => relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_in_messages_do_not_make_a_finding_new() {
        assert_eq!(
            normalized("a value decoded by `cjson.decode` at line 48, and line 7"),
            "a value decoded by `cjson.decode` at line …, and line …"
        );
        assert_eq!(normalized("the last line of it"), "the last line of it");
    }
}
