//! `nil_value`: arithmetic, concatenation, comparison, indexing or calling
//! a value that may be nil or false. Always nil or false: an error on every
//! call that gets there. Sometimes: a warning that says when (a missing
//! key, a non-numeric input).

use full_moon::ast::{BinOp, UnOp};

use super::{Shown, ordering_raises};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, Operation, Side, Site};
use crate::source::span::Span;

pub(crate) struct NilValue;

impl Finding for NilValue {
    fn operation(&self, site: &mut Site<'_>, operation: &Operation<'_>) {
        match *operation {
            Operation::Binary {
                operator,
                left,
                right,
                span,
            } => {
                let doing = match operator {
                    BinOp::LessThan(_)
                    | BinOp::LessThanEqual(_)
                    | BinOp::GreaterThan(_)
                    | BinOp::GreaterThanEqual(_) => {
                        // Where the types decide that the comparison raises,
                        // `mismatched_comparison` says so.
                        let kinds = (left.value.ty().kinds, right.value.ty().kinds);
                        if ordering_raises(kinds.0, kinds.1) {
                            return;
                        }
                        "compare"
                    }
                    BinOp::Plus(_)
                    | BinOp::Minus(_)
                    | BinOp::Star(_)
                    | BinOp::Slash(_)
                    | BinOp::Percent(_)
                    | BinOp::Caret(_) => "perform arithmetic on",
                    BinOp::TwoDots(_) => "concatenate",
                    _ => return,
                };
                for side in [left, right] {
                    check(site, side, doing, span);
                }
            }
            Operation::Unary {
                operator,
                operand,
                span,
            } => match operator {
                UnOp::Hash(_) => check(site, operand, "get the length of", span),
                UnOp::Minus(_) => check(site, operand, "perform arithmetic on", span),
                _ => {}
            },
            Operation::Suffix {
                value,
                called,
                span,
            } => check(site, value, if called { "call" } else { "index" }, span),
        }
    }
}

/// `used` is used by `operation` ("perform arithmetic on", "concatenate",
/// "compare", "index", "call", "get the length of") in the expression at
/// `span`.
fn check(site: &mut Site<'_>, used: Side<'_>, operation: &str, span: Span) {
    // Missing library members have findings of their own.
    if matches!(used.value, Value::Missing(_)) {
        return;
    }
    let ty = used.value.ty();
    // An unknown value is no finding, unless something says why it may be
    // nil (a function whose one path returns nil).
    if (ty.is_unknown() && ty.absence.is_none()) || !ty.kinds.intersects(Kinds::FALSY) {
        return;
    }
    let shown = Shown::of(site, used.span, "this value");
    let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
    let expression = Shown::of(site, span, "the expression").named();
    let absent = if ty.is_unknown() {
        Kinds::NIL
    } else {
        ty.kinds.intersection(Kinds::FALSY)
    };
    let (what, lua_type) = if absent == Kinds::FALSE {
        ("false", "a boolean value")
    } else if absent == Kinds::NIL {
        ("nil", "a nil value")
    } else {
        ("nil or false", "a nil value")
    };
    let lua_error = if operation == "compare" {
        "attempt to compare".to_owned()
    } else {
        format!("attempt to {operation} … ({lua_type})")
    };
    if ty.kinds.within(Kinds::FALSY) {
        site.report(
            Certainty::Always,
            span,
            format!("{shown_named} is always {what} here: {expression} raises \"{lua_error}\" on every call that gets here"),
            "use a value that exists here",
        );
        return;
    }
    // Sometimes: only when the analysis knows when.
    let Some(absence) = ty
        .absence
        .as_ref()
        .filter(|absence| !absence.is_unset_on_some_path())
    else {
        return;
    };
    site.report(
        Certainty::Sometimes,
        span,
        format!(
            "{shown_named} may be {what}: {} {}, and {expression} then raises \"{lua_error}\"",
            absence.source, absence.when
        ),
        format!("give it a default (`({shown_code} or 0)`), or test it before this line"),
    );
}
