//! `refused_argument`: a `redis.call` argument that is a boolean, nil or a
//! table. Redis takes strings and numbers only, and refuses the call
//! otherwise.

use super::{Shown, describe};
use crate::domain::types::Kinds;
use crate::interp::observe::{Certainty, CommandCall, Finding, Site};

/// What Redis answers a script that passes a boolean, nil or a table.
const REFUSAL: &str = "arguments must be strings or integers";

pub(crate) struct RefusedArgument;

impl Finding for RefusedArgument {
    fn command(&self, site: &mut Site<'_>, call: &CommandCall<'_>) {
        let command = call.shown;
        for operand in call.operands.iter().skip(1) {
            if operand.many {
                // `unpack(t)`: its elements, not a value of its own.
                continue;
            }
            let ty = operand.value.ty();
            if ty.is_unknown() || ty.kinds.is_empty() {
                continue;
            }
            let shown = Shown::of(site, operand.span, "this argument");
            let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
            if !ty.kinds.intersects(Kinds::STRING | Kinds::NUMBER) {
                let what = describe(ty.kinds);
                site.report(
                    Certainty::Always,
                    operand.span,
                    format!(
                        "argument {shown_named} of `{command}` is {what}: Redis refuses the call on every execution (\"{REFUSAL}\")"
                    ),
                    "pass a string or a number: `tostring(…)`, or `v and '1' or '0'` for a boolean",
                );
                continue;
            }
            if !ty.kinds.intersects(Kinds::FALSY) {
                continue;
            }
            let Some(absence) = ty
                .absence
                .as_ref()
                .filter(|absence| !absence.is_unset_on_some_path())
            else {
                continue;
            };
            site.report(
                Certainty::Sometimes,
                operand.span,
                format!(
                    "argument {shown_named} of `{command}` may be nil or false: {} {}, and Redis then refuses the call (\"{REFUSAL}\")",
                    absence.source, absence.when
                ),
                format!("give it a default (`{shown_code} or ''`), or test it before the call"),
            );
        }
    }
}
