//! `refused_argument`, `fractional_argument` and `empty_unpack`: what a
//! `redis.call` argument holds. Redis takes strings and numbers only;
//! a number with a fraction is sent as `3.5`, which an integer argument
//! refuses; `unpack` of an empty table supplies no argument at all.

use super::{Certainty, EMPTY_UNPACK, REFUSED_ARGUMENT};
use crate::span::Span;
use crate::types::Kinds;
use crate::value::Value;
use crate::walker::{Analyzer, Operand};

/// What Redis answers a script that passes a boolean, nil or a table.
const REFUSAL: &str = "arguments must be strings or integers";

impl Analyzer<'_> {
    /// The arguments of a `redis.call` of `command` (its display name):
    /// every one after the command name must be a string or a number.
    pub(crate) fn check_argument_values(&mut self, command: &str, operands: &[Operand]) {
        for operand in operands.iter().skip(1) {
            if operand.many {
                // `unpack(t)`: its elements, not a value of its own.
                continue;
            }
            let ty = operand.value.ty();
            if ty.is_unknown() || ty.kinds.is_empty() {
                continue;
            }
            let shown = self.shown(operand.span, "this argument");
            let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
            if !ty.kinds.intersects(Kinds::STRING | Kinds::NUMBER) {
                let what = super::comparisons::describe(ty.kinds);
                self.report(
                    REFUSED_ARGUMENT,
                    Certainty::Always,
                    operand.span,
                    format!(
                        "argument {shown_named} of `{command}` is {what}: Redis refuses the call on every execution (\"{REFUSAL}\")"
                    ),
                    "pass a string or a number: `tostring(…)`, or `v and '1' or '0'` for a boolean",
                );
                continue;
            }
            if !ty.kinds.intersects(Kinds::FALSY) {
                continue;
            }
            let Some(absence) = &ty.absence else {
                continue;
            };
            self.report(
                REFUSED_ARGUMENT,
                Certainty::Sometimes,
                operand.span,
                format!(
                    "argument {shown_named} of `{command}` may be nil or false: {} {}, and Redis then refuses the call (\"{REFUSAL}\")",
                    absence.source, absence.when
                ),
                format!("give it a default (`{shown_code} or ''`), or test it before the call"),
            );
        }
    }

    /// `unpack(table)`, whose table is `table_value`, supplies the
    /// arguments of `command` from `first_spread` on, and the command needs
    /// at least `needed` arguments from there.
    pub(crate) fn check_spread(
        &mut self,
        command: &str,
        table_value: &Value,
        needed: usize,
        span: Span,
    ) {
        if needed == 0 {
            return;
        }
        let ty = table_value.ty();
        let may_be_empty = ty.table_type().is_some_and(|table| table.may_be_empty);
        if !may_be_empty || !ty.kinds.within(Kinds::TABLE) {
            return;
        }
        let shown = self.shown(span, "the unpacked table");
        let shown_named = shown.named();
        self.report(
            EMPTY_UNPACK,
            Certainty::Sometimes,
            span,
            format!(
                "{shown_named} may be empty, and then `{command}` gets too few arguments: Redis fails with \"Wrong number of args calling Redis command from script\""
            ),
            "guard the call: `if #t > 0 then … end`",
        );
    }
}
