//! `always_true`: a number tested for truth. Every number is true in Lua,
//! 0 included, so `if redis.call('SISMEMBER', …) then` always runs.

use full_moon::ast::{Expression, UnOp};

use super::{Certainty, Sink};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::source::code::Code;
use crate::source::span::Span;

impl Sink<'_> {
    /// `value`, the value of `expression`, decides a branch (`if`,
    /// `while`, `until`, `not`, the left side of `and`).
    pub(crate) fn check_truth(&mut self, value: &Value, expression: &Expression, span: Span) {
        // `while true do`, `while 1 do`: written on purpose.
        if is_literal(expression) {
            return;
        }
        let ty = value.ty();
        if !ty.kinds_before_tests().within(Kinds::NUMBER) {
            return;
        }
        let shown = self.shown(span, "this value");
        let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
        let compare = match ty.integers.as_deref() {
            Some([0, 1]) => format!("`{shown_code} == 1`"),
            _ => format!("`{shown_code} > 0` (or `~= 0`)"),
        };
        // A length tested for truth (`if #t then`) is the same mistake,
        // but scripts that make it usually test the elements they read
        // next, so it rarely changes what they do: a warning.
        let certainty = if is_length(expression) {
            Certainty::Sometimes
        } else {
            Certainty::Always
        };
        self.report(
            Code::AlwaysTrue,
            certainty,
            span,
            format!("{shown_named} is a number, so this test always passes: every number is true in Lua, 0 included"),
            format!("compare it: {compare}"),
        );
    }
}

fn is_length(expression: &Expression) -> bool {
    match expression {
        Expression::UnaryOperator {
            unop: UnOp::Hash(_),
            ..
        } => true,
        Expression::Parentheses { expression, .. } => is_length(expression),
        _ => false,
    }
}

fn is_literal(expression: &Expression) -> bool {
    match expression {
        Expression::Number(_) | Expression::String(_) | Expression::Symbol(_) => true,
        Expression::Parentheses { expression, .. } => is_literal(expression),
        _ => false,
    }
}
