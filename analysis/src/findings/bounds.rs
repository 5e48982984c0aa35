//! `unbounded_read`: a loop, `unpack` or `return` whose size comes from a
//! read that grows with the data: a whole collection (`SMEMBERS`,
//! `HGETALL`), a whole index range (`LRANGE … 0 -1`), a range by score or
//! by ID without its `LIMIT` or `COUNT`. The script's work then grows with
//! the data rather than with the request, and the server serves no one
//! else while it runs.
//!
//! How large a reply can grow is the server model's
//! ([`ReplySize`](crate::model::commands::shapes::ReplySize)); the call's
//! literal words decide the rest: a `LIMIT` or `COUNT` given, a range
//! whose end is not `-1`, a bound from ARGV. A read whose result the script
//! only tests or measures is not reported: the finding is about work.

use std::rc::Rc;

use super::Certainty;
use crate::domain::types::UnboundedRead;
use crate::domain::value::Value;
use crate::interp::{Analyzer, Operand};
use crate::model::commands::shapes::{self, ReplySize};
use crate::model::target::ReleaseSet;
use crate::source::code::Code;
use crate::source::span::Span;

impl Analyzer<'_> {
    /// The read `redis.call(operands…)` of `command` on `releases`, when
    /// its reply grows with the data.
    pub(crate) fn unbounded_read(
        &self,
        command: &str,
        releases: ReleaseSet,
        operands: &[Operand],
        span: Span,
    ) -> Option<Rc<UnboundedRead>> {
        // Where the releases differ in grammar, only a size they agree on.
        let mut sizes = shapes::shape(command)?
            .forms_for(releases)
            .map(|form| form.reply_size());
        let size = sizes.next()?;
        if sizes.any(|other| other != size) {
            return None;
        }
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
            operands.iter().skip(1).any(|operand| {
                literal(operand).is_some_and(|word| word.eq_ignore_ascii_case(token))
            })
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

    /// `value` is used by `how` ("a loop iterates it"): a warning at the
    /// read, once per read.
    pub(crate) fn check_unbounded_use(&mut self, value: &Value, how: &str) {
        let Some(read) = value.ty().unbounded else {
            return;
        };
        let position = (read.span.line, read.span.column);
        if self.facts.unbounded_reads_reported.contains_key(&position) {
            return;
        }
        self.facts
            .unbounded_reads_reported
            .insert(position, self.facts.diagnostics.len());
        self.report(
            Code::UnboundedRead,
            Certainty::Sometimes,
            read.span,
            format!(
                "`{}` reads {}, and {how}: the script's work grows with the data, not with the request, and the server serves no other client meanwhile",
                read.command, read.reads
            ),
            read.bound.clone(),
        );
    }
}

fn limit_hint(token: &str) -> String {
    match token {
        "LIMIT" => "add a bound: `'LIMIT', 0, tonumber(ARGV[n])`".to_owned(),
        token => format!("add a bound: `'{token}', tonumber(ARGV[n])`"),
    }
}
