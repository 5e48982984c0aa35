//! `reply_hole`: a returned table whose element may be nil. Redis reads a
//! returned table up to its first nil, so the reply stops there and the
//! elements after it are lost.

use super::Shown;
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, ReplyValue, Site};

pub(crate) struct ReplyHole;

impl Finding for ReplyHole {
    fn reply(&self, site: &mut Site<'_>, reply: &ReplyValue<'_>) {
        let Value::Table(Some(table)) = reply.value else {
            return;
        };
        let elements = &table.values;
        let last = elements.len();
        for (position, (value, span)) in elements.iter().enumerate() {
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
            let shown = Shown::of(site, *span, "this element");
            let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
            let lost = last - position - 1;
            let lost = if lost == 1 {
                "the element after it is lost".to_owned()
            } else {
                format!("the {lost} elements after it are lost")
            };
            if ty.kinds.within(Kinds::NIL) {
                site.report(
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
            site.report(
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
