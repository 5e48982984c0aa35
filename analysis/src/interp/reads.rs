//! Reads whose reply grows with the data: a whole collection (`SMEMBERS`,
//! `HGETALL`), a whole index range (`LRANGE … 0 -1`), a range by score or
//! by ID without its `LIMIT` or `COUNT`. How large a reply can grow is the
//! server model's ([`ReplySize`]); the call's literal words decide the
//! rest: a `LIMIT` or `COUNT` given, a range whose end is not `-1`, a bound
//! from ARGV. The reply's type carries what is found, for the findings
//! about what the script does with it.

use std::rc::Rc;

use crate::domain::operand::Operand;
use crate::domain::types::{Growth, UnboundedRead};
use crate::domain::value::Value;
use crate::model::commands::shapes::{self, ReplySize};
use crate::model::target::ReleaseSet;
use crate::source::span::Span;

/// The read `redis.call(operands…)` of `command` on `releases`, when
/// its reply grows with the data.
pub(super) fn unbounded_read(
    command: &str,
    releases: ReleaseSet,
    operands: &[Operand],
    span: Span,
) -> Option<Rc<UnboundedRead>> {
    let size = agreed_size(command, releases)?;
    let literal = |operand: &Operand| match &operand.value {
        Value::Str(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    // An `unpack(…)` among the operands may hold any option.
    if operands
        .iter()
        .any(|operand| operand.many || matches!(operand.value, Value::Spread(_)))
    {
        return None;
    }
    let given = |token: &str| {
        operands
            .iter()
            .skip(1)
            .any(|operand| literal(operand).is_some_and(|word| word.eq_ignore_ascii_case(token)))
    };
    let shown = command.to_ascii_uppercase();
    let (reads, bound) = match size {
        ReplySize::Bounded => return None,
        ReplySize::Whole => (
            "the whole collection",
            format!(
                "keep the collection small by design, or read it in pages from the client (`HSCAN`, `SSCAN`, `ZSCAN` with `COUNT`) instead of `{shown}`"
            ),
        ),
        ReplySize::WholeUnless(token) if !given(token) => {
            ("every element in its range", limit_hint(token))
        }
        ReplySize::WholeUnless(_) => return None,
        ReplySize::IndexRange { start, stop, limit } => {
            let index = |position: usize| {
                operands
                    .get(position + 1)
                    .and_then(literal)
                    .map(|word| (word.parse::<i64>().ok(), word))
            };
            match (index(start), index(stop)) {
                // `0, -1`: from a fixed index to the end.
                (Some((Some(start), _)), Some((Some(stop), _))) if start >= 0 && stop < 0 => (
                    "every element from its start to the end",
                    "bound the range: `0, tonumber(ARGV[n]) - 1` reads at most n elements"
                        .to_owned(),
                ),
                // `'-inf'`, `'(5'`, `'[a'` at either end: by score or
                // by name.
                (Some((None, _)), _) | (_, Some((None, _))) => match limit {
                    Some(token) if !given(token) => {
                        ("every element in its range", limit_hint(token))
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    };
    let span = operands.first().map_or(span, |operand| operand.span);
    Some(Rc::new(UnboundedRead {
        command: shown,
        reads,
        span,
        bound,
    }))
}

/// The read `redis.call(operands…)` of `command` on `releases`, when how
/// many elements it returns is set by a value the script computes: a
/// range from a fixed index to a computed one (`ZRANGE key 0, max - 1`),
/// or a computed `LIMIT` or `COUNT`. Such a reply is as long as the
/// argument or the data says, which `unpack` cannot always take.
pub(super) fn computed_size(
    command: &str,
    releases: ReleaseSet,
    operands: &[Operand],
    span: Span,
) -> Option<Rc<Growth>> {
    let size = agreed_size(command, releases)?;
    // Neither a literal nor an `unpack(…)`, which may hold anything.
    let computed = |operand: &Operand| {
        !operand.many
            && !matches!(
                operand.value,
                Value::Number(_) | Value::Str(_) | Value::Spread(_)
            )
    };
    let shown = command.to_ascii_uppercase();
    let line = span.line;
    let sized = match size {
        ReplySize::IndexRange { start, stop, .. } => {
            let start = operands.get(start + 1)?;
            let stop = operands.get(stop + 1)?;
            let fixed_start = match &start.value {
                Value::Number(number) => *number >= 0.0,
                Value::Str(text) => text.parse::<i64>().is_ok_and(|index| index >= 0),
                _ => false,
            };
            fixed_start && computed(stop)
        }
        ReplySize::WholeUnless(token) => {
            // The count follows the token (`COUNT n`) or its offset
            // (`LIMIT offset count`).
            let at = operands.iter().position(|operand| {
                operand
                    .value
                    .as_str()
                    .is_some_and(|word| word.eq_ignore_ascii_case(token))
            })?;
            let count = operands.get(at + if token == "LIMIT" { 2 } else { 1 })?;
            computed(count)
        }
        ReplySize::Bounded | ReplySize::Whole => false,
    };
    sized.then(|| {
        Rc::new(Growth {
            why: format!(
                "is the reply of `{shown}` at line {line}, whose length a value the script computes sets"
            ),
        })
    })
}

/// How many elements the reply of `redis.call(operands…)` of `command`
/// has, for a command that answers one element per argument of a list it
/// ends with (`MGET key …`, `HMGET key field …`, `SMISMEMBER key member
/// …`): the arguments given to that list, when none is an `unpack(…)`.
/// Its elements are then never nil, only false where the server has none.
pub(super) fn one_per_argument(
    command: &str,
    releases: ReleaseSet,
    operands: &[Operand],
) -> Option<usize> {
    if operands.iter().any(|operand| operand.many) {
        return None;
    }
    let mut lists = shapes::shape(command)?.forms_for(releases).map(|form| {
        let (last, before) = form.arguments.split_last()?;
        let listed = last.multiple
            && last.token.is_none()
            && !matches!(
                last.kind,
                shapes::ArgumentKind::Block(_) | shapes::ArgumentKind::OneOf(_)
            )
            && before
                .iter()
                .all(|argument| !argument.optional && !argument.multiple);
        let array = matches!(form.reply, shapes::Reply::Array(_));
        (listed && array && form.reply_size() == ReplySize::Bounded).then_some(before.len())
    });
    let fixed = lists.next()??;
    if lists.any(|other| other != Some(fixed)) {
        return None;
    }
    // The command's name, then the fixed arguments, then the list.
    operands
        .len()
        .checked_sub(1 + fixed)
        .filter(|count| *count > 0)
}

/// How large the reply of `command` can grow on `releases`; where the
/// releases differ in grammar, only a size they agree on.
fn agreed_size(command: &str, releases: ReleaseSet) -> Option<ReplySize> {
    let mut sizes = shapes::shape(command)?
        .forms_for(releases)
        .map(|form| form.reply_size());
    let size = sizes.next()?;
    sizes.all(|other| other == size).then_some(size)
}

fn limit_hint(token: &str) -> String {
    match token {
        "LIMIT" => "add a bound: `'LIMIT', 0, tonumber(ARGV[n])`".to_owned(),
        token => format!("add a bound: `'{token}', tonumber(ARGV[n])`"),
    }
}
