//! `constant_equality`: `==` or `~=` whose result the types fix. Values
//! of different Lua types are never equal, and Lua never converts in `==`:
//! a string against a number, or a reply that is never nil against `nil`.

use full_moon::ast::BinOp;

use super::{Shown, describe};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, Operation, Site};

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
