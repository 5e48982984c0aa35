//! `mismatched_comparison`: `<`, `<=`, `>` or `>=` between values that Lua
//! cannot order. Lua converts strings to numbers in arithmetic but never
//! in a comparison: `<` between a number and a string raises.

use full_moon::ast::BinOp;

use super::{Shown, describe, ordering_raises};
use crate::domain::types::Kinds;
use crate::interp::observe::{Certainty, Finding, Operation, Site};

pub(crate) struct MismatchedComparison;

impl Finding for MismatchedComparison {
    fn operation(&self, site: &mut Site<'_>, operation: &Operation<'_>) {
        let Operation::Binary {
            operator:
                BinOp::LessThan(_)
                | BinOp::LessThanEqual(_)
                | BinOp::GreaterThan(_)
                | BinOp::GreaterThanEqual(_),
            left,
            right,
            span,
        } = *operation
        else {
            return;
        };
        let (a, b) = (left.value.ty().kinds, right.value.ty().kinds);
        if !ordering_raises(a, b) {
            return;
        }
        let shown_named = Shown::of(site, span, "this comparison").named();
        let (left_type, right_type) = (describe(a), describe(b));
        let hint = if a.within(Kinds::STRING) && b.within(Kinds::NUMBER) {
            let string = Shown::of(site, left.span, "the string");
            format!("convert the string first: `tonumber({})`", string.code())
        } else if a.within(Kinds::NUMBER) && b.within(Kinds::STRING) {
            let string = Shown::of(site, right.span, "the string");
            format!("convert the string first: `tonumber({})`", string.code())
        } else {
            "compare values of one type: two numbers, or two strings".to_owned()
        };
        site.report(
            Certainty::Always,
            span,
            format!(
                "{shown_named} compares {left_type} with {right_type}: Lua raises \"attempt to compare\" on every call (it converts strings to numbers in arithmetic, never in comparisons)"
            ),
            hint,
        );
    }
}
