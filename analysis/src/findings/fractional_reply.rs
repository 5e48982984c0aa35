//! `fractional_reply`: a returned number that may have a fraction. Redis
//! truncates a Lua number in a reply to an integer, so `0.75` arrives as
//! `0`.

use super::Shown;
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, ReplyValue, Site};
use crate::source::span::Span;

pub(crate) struct FractionalReply;

impl Finding for FractionalReply {
    fn reply(&self, site: &mut Site<'_>, reply: &ReplyValue<'_>) {
        match reply.value {
            // A table built by a constructor: each of its elements.
            Value::Table(Some(table)) => {
                for (value, span) in &table.values {
                    check(site, value, *span);
                }
            }
            value => check(site, value, reply.span),
        }
    }
}

fn check(site: &mut Site<'_>, value: &Value, span: Span) {
    let ty = value.ty();
    if ty.is_unknown() || !ty.kinds.intersects(Kinds::FRACTION) || !ty.kinds.within(Kinds::NUMBER)
    {
        return;
    }
    // Sometimes a fraction: only when the script's own `/` or `^` makes
    // one possible.
    if !ty.kinds.within(Kinds::FRACTION) && !ty.divided {
        return;
    }
    let shown = Shown::of(site, span, "this value");
    let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
    let (certainty, may) = if ty.kinds.within(Kinds::FRACTION) {
        (Certainty::Always, "has a fraction")
    } else {
        (
            Certainty::Sometimes,
            "may have a fraction (`/` and `^` make fractions)",
        )
    };
    site.report(
        certainty,
        span,
        format!("{shown_named} {may}: Redis truncates a Lua number in a reply to an integer, and 0.75 arrives as 0"),
        format!("return it as a string (`tostring({shown_code})`), or round it on purpose (`math.floor({shown_code})`)"),
    );
}
