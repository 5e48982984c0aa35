//! `always_true`: a number tested for truth. Every number is true in Lua,
//! 0 included, so `if redis.call('SISMEMBER', …) then` always runs.

use full_moon::ast::{Call, Expression, FunctionArgs, FunctionCall, Prefix, Suffix, UnOp, Var};

use super::Shown;
use crate::source::tokens::identifier;
use crate::domain::types::Kinds;
use crate::interp::observe::{Certainty, Condition, Finding, Site, Test};

pub(crate) struct AlwaysTrue;

impl Finding for AlwaysTrue {
    fn condition(&self, site: &mut Site<'_>, condition: &Condition<'_>) {
        // `while true do`, `while 1 do`: written on purpose.
        if is_literal(condition.expression) {
            return;
        }
        // `n and n < 1`: a guard against nil before a use of the same
        // value, redundant for a number but never wrong, since the right
        // side decides.
        if let Some(guarded) = condition.guarded
            && let Some(name) = local_name(condition.expression)
            && reads(guarded, name)
        {
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

/// The name `expression` reads, when it is a name.
fn local_name(expression: &Expression) -> Option<&str> {
    match expression {
        Expression::Var(Var::Name(token)) => Some(identifier(token)),
        Expression::Parentheses { expression, .. } => local_name(expression),
        _ => None,
    }
}

/// Whether `expression` reads the name `name`.
fn reads(expression: &Expression, name: &str) -> bool {
    match expression {
        Expression::Var(Var::Name(token)) => identifier(token) == name,
        Expression::Var(Var::Expression(var)) => {
            matches!(var.prefix(), Prefix::Name(token) if identifier(token) == name)
                || matches!(var.prefix(), Prefix::Expression(inner) if reads(inner, name))
        }
        Expression::Parentheses { expression, .. }
        | Expression::UnaryOperator { expression, .. } => reads(expression, name),
        Expression::BinaryOperator { lhs, rhs, .. } => reads(lhs, name) || reads(rhs, name),
        Expression::FunctionCall(call) => match call.prefix() {
            Prefix::Name(token) => identifier(token) == name || call_arguments_read(call, name),
            Prefix::Expression(inner) => reads(inner, name) || call_arguments_read(call, name),
            _ => false,
        },
        _ => false,
    }
}

/// Whether the arguments of `call`'s calls read the name `name`.
fn call_arguments_read(call: &FunctionCall, name: &str) -> bool {
    call.suffixes().any(|suffix| match suffix {
        Suffix::Call(Call::AnonymousCall(arguments)) => match &**arguments {
            FunctionArgs::Parentheses { arguments, .. } => {
                arguments.iter().any(|argument| reads(argument, name))
            }
            _ => false,
        },
        _ => false,
    })
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
