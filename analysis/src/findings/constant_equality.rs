//! `constant_equality`: `==` or `~=` whose result the types fix. Values
//! of different Lua types are never equal, and Lua never converts in `==`:
//! a string against a number, or a reply that is never nil against `nil`.

use full_moon::ast::BinOp;

use super::{Shown, describe};
use crate::domain::signature::SentAs;
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, Operation, Side, Site};
use crate::source::span::Span;

pub(crate) struct ConstantEquality;

impl Finding for ConstantEquality {
    fn operation(&self, site: &mut Site<'_>, operation: &Operation<'_>) {
        let Operation::Binary {
            operator: operator @ (BinOp::TwoEqual(_) | BinOp::TildeEqual(_)),
            left,
            right,
            span,
        } = *operation
        else {
            return;
        };
        let equal = matches!(operator, BinOp::TwoEqual(_));
        if never_sent(site, left, right, span, equal) || never_sent(site, right, left, span, equal) {
            return;
        }
        let (a, b) = (left.value.ty().kinds, right.value.ty().kinds);
        if a.is_unknown() || b.is_unknown() || a.is_empty() || b.is_empty() {
            return;
        }
        // Decided only because an earlier test narrowed a side: a
        // repeated guard, not a bug.
        let (a_before, b_before) = (
            left.value.ty().kinds_before_tests(),
            right.value.ty().kinds_before_tests(),
        );
        let shared = a_before
            .lua_types()
            .iter()
            .any(|name| b_before.lua_types().contains(name));
        if shared {
            return;
        }
        let shown_named = Shown::of(site, span, "this comparison").named();
        let outcome = if equal { "false" } else { "true" };
        let (tested, other_kinds) = if matches!(right.value, Value::Nil) {
            (left, b)
        } else {
            (right, a)
        };
        let tested_text = Shown::of(site, tested.span, "the value");
        let (tested_named, tested_code) = (tested_text.named(), tested_text.code().to_owned());
        let tested_kinds = tested.value.ty().kinds;
        let (message, hint) = if other_kinds == Kinds::NIL && tested_kinds.intersects(Kinds::FALSE)
        {
            (
                format!(
                    "{shown_named} is always {outcome}: {tested_named} is never nil: it is {}, and a missing value is `false` in a script",
                    describe(tested_kinds)
                ),
                format!(
                    "test for the missing value: `{tested_code} == false`, or `not {tested_code}`"
                ),
            )
        } else if other_kinds == Kinds::NIL {
            (
                format!(
                    "{shown_named} is always {outcome}: {tested_named} is never nil: it is {}",
                    describe(tested_kinds)
                ),
                "remove the test, or test what can really be missing".to_owned(),
            )
        } else {
            let numbers_and_strings = (a.within(Kinds::NUMBER | Kinds::FALSY)
                && b.within(Kinds::STRING | Kinds::FALSY))
                || (a.within(Kinds::STRING | Kinds::FALSY)
                    && b.within(Kinds::NUMBER | Kinds::FALSY));
            let hint = if numbers_and_strings {
                "compare a string with a string (`== '2'`) or convert it (`tonumber(v) == 2`): Lua never converts in `==`".to_owned()
            } else {
                "compare values that can have the same type".to_owned()
            };
            (
                format!(
                    "{shown_named} is always {outcome}: it compares {} with {}, and values of different types are never equal in Lua",
                    describe(a),
                    describe(b)
                ),
                hint,
            )
        };
        site.report(Certainty::Always, span, message, hint);
    }
}

/// `argument == 'literal'` where `argument` is an element of ARGV whose
/// Rust parameter never sends that text (`enabled: bool` sends "1" or
/// "0", never "true"): reported, and true.
fn never_sent(site: &mut Site<'_>, argument: Side<'_>, literal: Side<'_>, span: Span, equal: bool) -> bool {
    let (Value::Arg(Some(index)), Value::Str(text)) = (argument.value, literal.value) else {
        return false;
    };
    let signature = site.signature();
    let Some(declared) = index.checked_sub(1).and_then(|at| signature.arg_types.get(at)) else {
        return false;
    };
    if declared.sent.admits(text) {
        return false;
    }
    let parameter = match signature.arg_names.get(index - 1) {
        Some(name) => format!("`{name}: {}`", declared.rust),
        None => format!("a `{}`", declared.rust),
    };
    let (sent, rust) = (declared.sent, declared.rust.clone());
    let shown_named = Shown::of(site, span, "this comparison").named();
    let argument_code = Shown::of(site, argument.span, "the argument").code().to_owned();
    let outcome = if equal { "false" } else { "true" };
    let hint = match sent {
        SentAs::Bool => format!(
            "compare with what a `bool` sends: `{argument_code} == '1'`"
        ),
        SentAs::Float => format!(
            "compare numbers: `tonumber({argument_code}) == {text}`"
        ),
        _ if text.parse::<f64>().is_ok() => format!(
            "compare numbers: `tonumber({argument_code}) == {text}`"
        ),
        _ => format!("pass a `&str` if the caller sends words, or compare with a value a `{rust}` sends"),
    };
    site.report(
        Certainty::Always,
        span,
        format!(
            "{shown_named} is always {outcome}: the argument is the Rust parameter {parameter}, which redis-rs sends as {}, never '{text}'",
            sent.describe()
        ),
        hint,
    );
    true
}
