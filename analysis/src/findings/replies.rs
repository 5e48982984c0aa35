//! `reply_hole` and `fractional_reply`: what a script returns. Redis reads
//! a returned table up to its first nil, so an element that may be nil cuts
//! the reply there; and it truncates Lua numbers to integers, so `0.75`
//! arrives as `0`.

use super::{Certainty, Sink};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::source::code::Code;
use crate::source::span::Span;

impl Sink<'_> {
    /// A value the script returns as its reply (or an element of it).
    pub(crate) fn check_reply_number(&mut self, value: &Value, span: Span) {
        let ty = value.ty();
        if ty.is_unknown()
            || !ty.kinds.intersects(Kinds::FRACTION)
            || !ty.kinds.within(Kinds::NUMBER)
        {
            return;
        }
        // Sometimes a fraction: only when the script's own `/` or `^`
        // makes one possible.
        if !ty.kinds.within(Kinds::FRACTION) && !ty.divided {
            return;
        }
        let shown = self.shown(span, "this value");
        let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
        let certainty = if ty.kinds.within(Kinds::FRACTION) {
            Certainty::Always
        } else {
            Certainty::Sometimes
        };
        let may = match certainty {
            Certainty::Always => "has a fraction",
            Certainty::Sometimes => "may have a fraction (`/` and `^` make fractions)",
        };
        self.report(
            Code::FractionalReply,
            certainty,
            span,
            format!("{shown_named} {may}: Redis truncates a Lua number in a reply to an integer, and 0.75 arrives as 0"),
            format!("return it as a string (`tostring({shown_code})`), or round it on purpose (`math.floor({shown_code})`)"),
        );
    }

    /// The elements of a table the script returns, built by a constructor:
    /// the reply ends at the first nil.
    pub(crate) fn check_reply_elements(&mut self, elements: &[(Value, Span)]) {
        let last = elements.len();
        for (position, (value, span)) in elements.iter().enumerate() {
            self.check_reply_number(value, *span);
            let ty = value.ty();
            if ty.is_unknown() || !ty.kinds.intersects(Kinds::NIL) || position + 1 == last {
                continue;
            }
            // `{nil, nil}`: nothing after it can be lost (an empty reply,
            // written that way on purpose).
            let later_always_nil = elements.iter().skip(position + 1).all(|(later, _)| {
                let later = later.ty();
                !later.is_unknown() && later.kinds.within(Kinds::NIL)
            });
            if later_always_nil {
                continue;
            }
            let shown = self.shown(*span, "this element");
            let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
            let lost = last - position - 1;
            let lost = if lost == 1 {
                "the element after it is lost".to_owned()
            } else {
                format!("the {lost} elements after it are lost")
            };
            if ty.kinds.within(Kinds::NIL) {
                self.report(
                    Code::ReplyHole,
                    Certainty::Always,
                    *span,
                    format!("element {} of the reply, {shown_named}, is always nil: Redis reads a table up to its first nil, so the reply stops here and {lost}", position + 1),
                    "put a value there (`false` arrives as a null element), or move it to the end",
                );
                continue;
            }
            let Some(absence) = &ty.absence else {
                continue;
            };
            self.report(
                Code::ReplyHole,
                Certainty::Sometimes,
                *span,
                format!(
                    "element {} of the reply, {shown_named}, may be nil: {} {}, and Redis reads a table up to its first nil, so the reply then stops here and {lost}",
                    position + 1,
                    absence.source,
                    absence.when
                ),
                format!("give it a default (`{shown_code} or false` arrives as a null element)"),
            );
        }
    }
}
