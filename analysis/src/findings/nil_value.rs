//! `nil_value`: arithmetic, concatenation, comparison, indexing or calling
//! a value that may be nil or false. Always nil or false: an error on every
//! call that gets there. Sometimes: a warning that says when (a missing
//! key, a non-numeric input).

use full_moon::ast::{BinOp, UnOp};

use super::{Shown, ordering_raises};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, Operation, SandboxCall, Side, Site};
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
                    check(site, side, &raised(doing, side.value), span);
                }
            }
            Operation::Unary {
                operator,
                operand,
                span,
            } => match operator {
                UnOp::Hash(_) => check(site, operand, &raised("get the length of", operand.value), span),
                UnOp::Minus(_) => check(site, operand, &raised("perform arithmetic on", operand.value), span),
                _ => {}
            },
            Operation::Suffix {
                value,
                called,
                span,
            } => {
                let doing = if called { "call" } else { "index" };
                check(site, value, &raised(doing, value.value), span);
            }
        }
    }

    /// A library function that raises for a nil or false argument where
    /// it takes a string or a number (`cjson.decode(false)`).
    fn sandbox_call(&self, site: &mut Site<'_>, call: &SandboxCall<'_>) {
        let Some(member) = call.member else {
            return;
        };
        let checked = match (call.global, member) {
            ("cjson", "decode") | ("cmsgpack", "unpack") => 1,
            (
                "string",
                "len" | "sub" | "upper" | "lower" | "rep" | "reverse" | "byte" | "find"
                | "match" | "gmatch" | "gsub",
            ) => 1,
            ("math", "floor" | "ceil" | "abs" | "sqrt" | "exp" | "log" | "log10") => 1,
            ("bit", _) => call.operands.len(),
            _ => return,
        };
        for (position, operand) in call.operands.iter().take(checked).enumerate() {
            if operand.many {
                continue;
            }
            let side = Side {
                value: &operand.value,
                span: operand.span,
            };
            let expected = match call.global {
                "math" | "bit" => "number",
                _ => "string",
            };
            let raises = format!(
                "bad argument #{} to '{member}' ({expected} expected, got {})",
                position + 1,
                lua_type_name(&operand.value),
            );
            check(site, side, &raises, call.span);
        }
    }
}

/// What Lua raises when an operator (`doing`: "concatenate") meets `value`
/// nil or false: "attempt to concatenate … (a nil value)".
fn raised(doing: &str, value: &Value) -> String {
    if doing == "compare" {
        return "attempt to compare".to_owned();
    }
    let article = match lua_type_name(value) {
        "boolean" => "a boolean value",
        _ => "a nil value",
    };
    format!("attempt to {doing} … ({article})")
}

/// Lua's name of the type of a nil or false `value`: "nil" where it may be
/// nil, "boolean" where only false.
fn lua_type_name(value: &Value) -> &'static str {
    let ty = value.ty();
    if !ty.is_unknown() && ty.kinds.intersection(Kinds::FALSY) == Kinds::FALSE {
        "boolean"
    } else {
        "nil"
    }
}

/// `used` is used in the expression at `span`, which raises `lua_error`
/// when it is nil or false.
fn check(site: &mut Site<'_>, used: Side<'_>, lua_error: &str, span: Span) {
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
    let what = if absent == Kinds::FALSE {
        "false"
    } else if absent == Kinds::NIL {
        "nil"
    } else {
        "nil or false"
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
