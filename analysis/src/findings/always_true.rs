//! `always_true`: a number tested for truth. Every number is true in Lua,
//! 0 included, so `if redis.call('SISMEMBER', …) then` always runs.

use full_moon::ast::{Expression, UnOp};

use super::Shown;
use crate::domain::types::Kinds;
use crate::interp::observe::{Certainty, Condition, Finding, Site, Test};

pub(crate) struct AlwaysTrue;

impl Finding for AlwaysTrue {
    fn condition(&self, site: &mut Site<'_>, condition: &Condition<'_>) {
        // `while true do`, `while 1 do`: written on purpose.
        if is_literal(condition.expression) {
            return;
        }
        let ty = condition.value.ty();
        if !ty.kinds_before_tests().within(Kinds::NUMBER) {
            return;
        }
        let shown = Shown::of(site, condition.span, "this value");
        let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
        let compare = match ty.integers.as_deref() {
            Some([0, 1]) => format!("`{shown_code} == 1`"),
            _ => format!("`{shown_code} > 0` (or `~= 0`)"),
        };
        let message = format!(
            "{shown_named} is a number, so this test always passes: every number is true in Lua, 0 included"
        );
        if condition.test == Test::DefaultGuard {
            // `if not ttl then ttl = 0 end` after a command that never
            // answers nil: the default is never needed, which is harmless
            // (redis-py's lock extension does it after `PTTL`).
            site.report_with_note(
                Certainty::Sometimes,
                condition.span,
                message,
                "drop the `if`: the value is never nil or false here",
                "the branch only assigns a default, which is never needed",
            );
            return;
        }
        // A length tested for truth (`if #t then`) is the same mistake,
        // but scripts that make it usually test the elements they read
        // next, so it rarely changes what they do: a warning.
        let certainty = if is_length(condition.expression) {
            Certainty::Sometimes
        } else {
            Certainty::Always
        };
        site.report(
            certainty,
            condition.span,
            message,
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
