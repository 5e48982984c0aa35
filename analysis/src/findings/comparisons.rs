//! `mismatched_comparison` and `constant_equality`: comparisons the types
//! decide. Lua converts strings to numbers in arithmetic but never in a
//! comparison: `<` between a number and a string raises, and `==` between
//! values of different types is false.

use super::{Certainty, Sink};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::source::code::Code;
use crate::source::span::Span;

/// One side of a comparison: its value and its text.
pub(crate) struct Side<'v> {
    pub value: &'v Value,
    pub span: Span,
}

impl Sink<'_> {
    /// `left < right` (and `<=`, `>`, `>=`): Lua compares two numbers or
    /// two strings, and raises for anything else.
    pub(crate) fn check_ordering(&mut self, left: Side<'_>, right: Side<'_>, span: Span) {
        let (a, b) = (left.value.ty().kinds, right.value.ty().kinds);
        let comparable = (a.intersects(Kinds::NUMBER) && b.intersects(Kinds::NUMBER))
            || (a.intersects(Kinds::STRING) && b.intersects(Kinds::STRING))
            || (a.intersects(Kinds::TABLE) && b.intersects(Kinds::TABLE));
        if a.is_unknown() || b.is_unknown() || a.is_empty() || b.is_empty() || comparable {
            // Where a side may be nil or false, the nil findings say when:
            // nil and false raise against anything.
            for side in [&left, &right] {
                self.check_nil_use(side.value, side.span, "compare", span);
            }
            return;
        }
        let shown = self.shown(span, "this comparison");
        let shown_named = shown.named();
        let (left_type, right_type) = (describe(a), describe(b));
        let hint = if a.within(Kinds::STRING) && b.within(Kinds::NUMBER) {
            let left_text = self.shown(left.span, "the string");
            let left_text_code = left_text.code();
            format!("convert the string first: `tonumber({left_text_code})`")
        } else if a.within(Kinds::NUMBER) && b.within(Kinds::STRING) {
            let right_text = self.shown(right.span, "the string");
            let right_text_code = right_text.code();
            format!("convert the string first: `tonumber({right_text_code})`")
        } else {
            "compare values of one type: two numbers, or two strings".to_owned()
        };
        self.report(
            Code::MismatchedComparison,
            Certainty::Always,
            span,
            format!(
                "{shown_named} compares {left_type} with {right_type}: Lua raises \"attempt to compare\" on every call (it converts strings to numbers in arithmetic, never in comparisons)"
            ),
            hint,
        );
    }

    /// `left == right` (`equal`) or `left ~= right`: values of different
    /// Lua types are never equal.
    pub(crate) fn check_equality(
        &mut self,
        left: Side<'_>,
        right: Side<'_>,
        equal: bool,
        span: Span,
    ) {
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
        let shown = self.shown(span, "this comparison");
        let shown_named = shown.named();
        let outcome = if equal { "false" } else { "true" };
        let (tested, other_kinds) = if matches!(right.value, Value::Nil) {
            (&left, b)
        } else {
            (&right, a)
        };
        let tested_text = self.shown(tested.span, "the value");
        let (tested_text_named, tested_text_code) =
            (tested_text.named(), tested_text.code().to_owned());
        let tested_kinds = tested.value.ty().kinds;
        let (message, hint) = if other_kinds == Kinds::NIL && tested_kinds.intersects(Kinds::FALSE)
        {
            (
                format!(
                    "{shown_named} is always {outcome}: {tested_text_named} is never nil: it is {}, and a missing value is `false` in a script",
                    describe(tested_kinds)
                ),
                format!(
                    "test for the missing value: `{tested_text_code} == false`, or `not {tested_text_code}`"
                ),
            )
        } else if other_kinds == Kinds::NIL {
            (
                format!(
                    "{shown_named} is always {outcome}: {tested_text_named} is never nil: it is {}",
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
        self.report(
            Code::ConstantEquality,
            Certainty::Always,
            span,
            message,
            hint,
        );
    }
}

/// "a string", "a number or nil", … for messages.
pub(crate) fn describe(kinds: Kinds) -> String {
    // "a string (or false)": what it is, then how it may be missing.
    let present = kinds.without(Kinds::FALSY);
    let absent = kinds.intersection(Kinds::FALSY);
    if !present.is_empty() && !absent.is_empty() && !kinds.intersects(Kinds::TRUE) {
        return format!("{} (or {})", list(present), list(absent));
    }
    list(kinds)
}

fn list(kinds: Kinds) -> String {
    let names: Vec<&str> = kinds
        .lua_types()
        .into_iter()
        .map(|name| match name {
            "nil" => "nil",
            "boolean" if kinds.intersection(Kinds::BOOLEAN) == Kinds::FALSE => "false",
            "boolean" if kinds.intersection(Kinds::BOOLEAN) == Kinds::TRUE => "true",
            "boolean" => "a boolean",
            "number" => "a number",
            "string" => "a string",
            "table" => "a table",
            "function" => "a function",
            _ => "a userdata",
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "nothing".to_owned(),
    }
}
