//! `refused_argument`, `fractional_argument` and `empty_unpack`: what a
//! `redis.call` argument holds. Redis takes strings and numbers only;
//! a number with a fraction is sent as `3.5`, which an integer argument
//! refuses; `unpack` of an empty table supplies no argument at all.

use super::{Certainty, Sink};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::Operand;
use crate::interp::calls::after_name;
use crate::model::argument_grammar;
use crate::model::commands::shapes::{self, ArgumentKind};
use crate::model::target::ReleaseSet;
use crate::source::code::Code;
use crate::source::span::Span;

/// What Redis answers a script that passes a boolean, nil or a table.
const REFUSAL: &str = "arguments must be strings or integers";

impl Sink<'_> {
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
                    Code::RefusedArgument,
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
            let Some(absence) = ty
                .absence
                .as_ref()
                .filter(|absence| !absence.is_unset_on_some_path())
            else {
                continue;
            };
            self.report(
                Code::RefusedArgument,
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

    /// The operands of a `redis.call` of `name` (the model's name, `get`,
    /// `config|get`) on `releases`, whose literal texts are `arguments`: a
    /// number that may have a fraction where every release's grammar takes
    /// an integer.
    pub(crate) fn check_integer_arguments(
        &mut self,
        name: &str,
        releases: ReleaseSet,
        operands: &[Operand],
        arguments: &[Option<&str>],
    ) {
        let Some(forms) = shapes::shape(name).and_then(|shape| shape.forms_covering(releases))
        else {
            return;
        };
        let (operands, words, spread_from) = after_name(name, operands, arguments);
        let mut integers: Option<Vec<(usize, &'static str)>> = None;
        for form in forms {
            let here: Vec<(usize, &'static str)> =
                argument_grammar::place(form.arguments, words, spread_from)
                    .into_iter()
                    .filter(|placed| {
                        matches!(
                            placed.argument.kind,
                            ArgumentKind::Integer | ArgumentKind::UnixTime
                        )
                    })
                    .map(|placed| (placed.operand, placed.argument.name))
                    .collect();
            integers = Some(match integers {
                None => here,
                Some(before) => before
                    .into_iter()
                    .filter(|item| here.contains(item))
                    .collect(),
            });
        }
        let command = name.replace('|', " ").to_ascii_uppercase();
        for (index, argument) in integers.unwrap_or_default() {
            if let Some(operand) = operands.get(index) {
                self.check_integer_argument(&command, argument, &operand.value, operand.span);
            }
        }
    }

    /// `value` (at `span`) is the `argument` of `command`, which takes an
    /// integer: a number with a fraction is sent as `3.5` and refused.
    fn check_integer_argument(&mut self, command: &str, argument: &str, value: &Value, span: Span) {
        let ty = value.ty();
        if ty.is_unknown() || !ty.kinds.intersects(Kinds::FRACTION) {
            return;
        }
        let (certainty, when) = if ty.kinds.within(Kinds::FRACTION) {
            (Certainty::Always, "is a number with a fraction")
        } else if ty.divided {
            (
                Certainty::Sometimes,
                "may be a number with a fraction (`/` and `^` make fractions)",
            )
        } else {
            return;
        };
        let shown = self.shown(span, "this argument");
        self.report(
            Code::FractionalArgument,
            certainty,
            span,
            format!(
                "{}, the `{argument}` of `{command}`, {when}: Redis refuses a number with a fraction there (\"value is not an integer or out of range\")",
                shown.named()
            ),
            format!("round it: `math.floor({})`", shown.code()),
        );
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
            Code::EmptyUnpack,
            Certainty::Sometimes,
            span,
            format!(
                "{shown_named} may be empty, and then `{command}` gets too few arguments: Redis fails with \"Wrong number of args calling Redis command from script\""
            ),
            "guard the call: `if #t > 0 then … end`",
        );
    }
}
