//! `fractional_argument`: a number that may have a fraction where the
//! command takes an integer. Lua sends it as `3.5`, which the server
//! refuses there.

use super::Shown;
use crate::domain::operand::after_name;
use crate::domain::types::Kinds;
use crate::interp::observe::{Certainty, CommandCall, Finding, Site};
use crate::model::argument_grammar;
use crate::model::commands::shapes::{self, ArgumentKind};

pub(crate) struct FractionalArgument;

impl Finding for FractionalArgument {
    fn command(&self, site: &mut Site<'_>, call: &CommandCall<'_>) {
        let Some((name, releases)) = call.known else {
            return;
        };
        let Some(forms) = shapes::shape(name).and_then(|shape| shape.forms_covering(releases))
        else {
            return;
        };
        let (operands, words, spread_from) = after_name(name, call.operands, call.words);
        // The operands every form the call may meet takes as an integer.
        let integers = argument_grammar::placed_in_every_form(
            &forms,
            words,
            spread_from,
            &[ArgumentKind::Integer, ArgumentKind::UnixTime],
        );
        let command = name.replace('|', " ").to_ascii_uppercase();
        for (index, argument) in integers {
            let Some(operand) = operands.get(index) else {
                continue;
            };
            let ty = operand.value.ty();
            if ty.is_unknown() || !ty.kinds.intersects(Kinds::FRACTION) {
                continue;
            }
            let (certainty, when) = if ty.kinds.within(Kinds::FRACTION) {
                (Certainty::Always, "is a number with a fraction")
            } else if ty.divided {
                (
                    Certainty::Sometimes,
                    "may be a number with a fraction (`/` and `^` make fractions)",
                )
            } else {
                continue;
            };
            let shown = Shown::of(site, operand.span, "this argument");
            site.report(
                certainty,
                operand.span,
                format!(
                    "{}, the `{argument}` of `{command}`, {when}: Redis refuses a number with a fraction there (\"value is not an integer or out of range\")",
                    shown.named()
                ),
                format!("round it: `math.floor({})`", shown.code()),
            );
        }
    }
}
