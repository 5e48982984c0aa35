//! The operands of a call as the walk evaluated them, and what the
//! server receives of them.

use crate::domain::value::Value;
use crate::source::span::Span;

/// One evaluated call argument or table element.
#[derive(Debug, Clone)]
pub(crate) struct Operand {
    pub value: Value,
    pub span: Span,
    /// A trailing call or `...` whose number of values is unknown.
    pub many: bool,
}

/// The operands after the command's name (and subcommand's name), which
/// its grammar describes, with their literal texts (`words`, as
/// [`literal_text`] gives them for every operand of the call) and the index
/// of the first `unpack(…)` or trailing call among them.
pub(crate) fn after_name<'o, 'w, 't>(
    name: &str,
    operands: &'o [Operand],
    words: &'w [Option<&'t str>],
) -> (&'o [Operand], &'w [Option<&'t str>], Option<usize>) {
    let skip = if name.contains('|') { 2 } else { 1 };
    let operands = operands.get(skip..).unwrap_or_default();
    let words = words.get(skip..).unwrap_or_default();
    let spread_from = operands.iter().position(|operand| operand.many);
    (operands, words, spread_from)
}

/// The text Redis receives for an argument, when it is a literal: strings
/// as written, numbers as Lua 5.1 converts them (`%.14g`).
pub(crate) fn literal_text(operand: &Operand) -> Option<String> {
    if operand.many {
        return None;
    }
    match &operand.value {
        Value::Str(text) => Some(text.clone()),
        Value::Number(_) => operand
            .value
            .as_integer()
            .map(|integer| integer.to_string()),
        _ => None,
    }
}
