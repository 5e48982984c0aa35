//! Opt-outs: `-- redis-script: allow(name, …)` comments, and the names a
//! declaration allows for its whole script.

use std::collections::{BTreeSet, HashMap};

use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::syntax::quick_scan::Comment;

/// The findings silenced for a script: by name for the whole script, and
/// by line.
#[derive(Debug, Default, Clone)]
pub(crate) struct Silenced {
    everywhere: BTreeSet<String>,
    lines: HashMap<usize, BTreeSet<String>>,
}

impl Silenced {
    /// Whether `diagnostic` is a finding silenced where it is.
    pub fn covers(&self, diagnostic: &Diagnostic) -> bool {
        let Some(name) = diagnostic.finding() else {
            return false;
        };
        self.everywhere.contains(name)
            || self
                .lines
                .get(&diagnostic.line)
                .is_some_and(|names| names.contains(name))
    }
}

/// What opens an opt-out in a comment.
const DIRECTIVE: &str = "redis-script:";

/// The findings silenced in `source`, with the names `declared` allows
/// for the whole script (the attribute's `allow(…)`, the command line's
/// `--allow`), and the errors for names that are no finding.
pub(crate) fn silenced(source: &str, declared: &[String]) -> (Silenced, Vec<Diagnostic>) {
    let mut silenced = Silenced::default();
    let mut errors = Vec::new();
    for name in declared {
        if Code::finding(name).is_some() {
            silenced.everywhere.insert(name.clone());
        } else {
            errors.push(unknown(name, 1, 1, 1));
        }
    }
    if !source.contains(DIRECTIVE) {
        return (silenced, errors);
    }
    for directive in directives(source) {
        let Some(names) = allowed_names(&directive.comment.text) else {
            continue;
        };
        let (line, column) = (directive.comment.line, directive.comment.column);
        let names = match names {
            Ok(names) => names,
            Err(message) => {
                errors.push(
                    Diagnostic::error(Code::AllowDirective, line, column, 2, message).with_help(
                        format!(
                            "write `-- {DIRECTIVE} allow(name)`; the names are {}",
                            Code::finding_names()
                        ),
                    ),
                );
                continue;
            }
        };
        for name in names {
            if Code::finding(&name).is_none() {
                errors.push(unknown(&name, line, column, 2));
                continue;
            }
            match directive.reach {
                Reach::Line(code_line) => {
                    silenced.lines.entry(code_line).or_default().insert(name);
                }
                Reach::Script => {
                    silenced.everywhere.insert(name);
                }
                Reach::Nothing => {}
            }
        }
    }
    (silenced, errors)
}

/// What a comment is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// The whole script: a comment before any code (its header).
    Script,
    /// One line of code: the comment's own line when code comes first on
    /// it, else the next line with code.
    Line(usize),
    /// No code: a comment after the last line of code (read still, so
    /// that a mistake in it is reported).
    Nothing,
}

/// A comment, with what it is about.
struct Directive {
    comment: Comment,
    reach: Reach,
}

/// Every comment of `source`, with what it is about, in order.
fn directives(source: &str) -> Vec<Directive> {
    let (lexemes, comments) =
        crate::source::syntax::quick_scan::scan(&crate::source::syntax::lexable(source));
    let mut comments = comments.into_iter().peekable();
    let mut last_code_line = None;
    // Comments on lines of their own, waiting for the next line of code.
    let mut pending: Vec<Comment> = Vec::new();
    let mut directives = Vec::new();
    // Each code lexeme, then the end of the file: the comments before it
    // are placed first.
    for lexeme in lexemes.iter().map(Some).chain([None]) {
        let before = |comment: &Comment| {
            lexeme.is_none_or(|lexeme| {
                (comment.line, comment.byte_column) < (lexeme.line, lexeme.column)
            })
        };
        while let Some(comment) = comments.next_if(before) {
            if last_code_line == Some(comment.line) {
                let reach = Reach::Line(comment.line);
                directives.push(Directive { comment, reach });
            } else {
                pending.push(comment);
            }
        }
        let Some(lexeme) = lexeme else { break };
        if last_code_line != Some(lexeme.line) {
            let reach = match last_code_line {
                Some(_) => Reach::Line(lexeme.line),
                None => Reach::Script,
            };
            directives.extend(
                pending
                    .drain(..)
                    .map(|comment| Directive { comment, reach }),
            );
            last_code_line = Some(lexeme.line);
        }
    }
    // In a file without code, the comments are its header.
    let reach = match last_code_line {
        Some(_) => Reach::Nothing,
        None => Reach::Script,
    };
    directives.extend(
        pending
            .into_iter()
            .map(|comment| Directive { comment, reach }),
    );
    directives
}

/// The names of `allow(a, b)` in a comment's text; `None` when the comment
/// is no opt-out; an error when it starts like one but is not.
fn allowed_names(comment: &str) -> Option<Result<BTreeSet<String>, String>> {
    let rest = comment.trim().strip_prefix(DIRECTIVE)?.trim();
    let Some(inner) = rest
        .strip_prefix("allow")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix('('))
        .and_then(|rest| rest.split_once(')'))
        .map(|(inner, _)| inner)
    else {
        return Some(Err(format!(
            "`{DIRECTIVE} {rest}` is not an opt-out: the checker reads `{DIRECTIVE} allow(name, …)`"
        )));
    };
    Some(Ok(inner
        .split(',')
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .collect()))
}

fn unknown(name: &str, line: usize, column: usize, width: usize) -> Diagnostic {
    Diagnostic::error(
        Code::AllowDirective,
        line,
        column,
        width,
        format!("`allow({name})` names no finding, so it silences nothing"),
    )
    .with_help(Code::finding_help(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(silenced: &Silenced, name: &'static str, line: usize) -> bool {
        let code = Code::finding(name).expect("a finding");
        silenced.covers(&Diagnostic::warning(code, line, 1, 1, "x"))
    }

    #[test]
    fn comments_silence_their_line_the_next_or_the_script() {
        let source = "-- a header\n-- redis-script: allow(always_true)\nlocal a = 1\nlocal b = 2 -- redis-script: allow(nil_value, reply_hole)\n-- redis-script: allow(empty_unpack)\n\nlocal c = 3\n";
        let (silenced, errors) = silenced(source, &[]);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(covers(&silenced, "always_true", 7));
        assert!(covers(&silenced, "nil_value", 4) && covers(&silenced, "reply_hole", 4));
        assert!(!covers(&silenced, "nil_value", 3));
        assert!(covers(&silenced, "empty_unpack", 7));
        assert!(!covers(&silenced, "empty_unpack", 4));
    }

    #[test]
    fn declared_names_silence_everywhere_and_unknown_names_are_errors() {
        let (silenced, errors) = silenced(
            "return 1 -- redis-script: allow(nil_valeu)\n-- redis-script: alow(x)\n",
            &["reply_hole".to_owned(), "nope".to_owned()],
        );
        assert!(covers(&silenced, "reply_hole", 12));
        let messages: Vec<&str> = errors.iter().map(|error| error.message.as_str()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].starts_with("`allow(nope)` names no finding"));
        assert!(
            errors[1]
                .help
                .as_deref()
                .is_some_and(|hint| hint.contains("did you mean `nil_value`"))
        );
        assert!(messages[2].contains("is not an opt-out"));
    }

    #[test]
    fn a_directive_inside_a_string_is_no_opt_out() {
        let (silenced, errors) = silenced(
            "local s = '-- redis-script: allow(nil_value)'\nreturn s\n",
            &[],
        );
        assert!(errors.is_empty());
        assert!(!covers(&silenced, "nil_value", 1));
    }
}
