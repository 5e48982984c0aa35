//! `unbounded_unpack`: `unpack(t)` of a whole table whose length the data
//! or an argument sets: a read of a whole collection or of a range whose
//! end the script computes, or a table filled in a loop that runs once per
//! element of such a read or up to a computed count. Lua 5.1 passes the
//! elements on its C stack, which holds 8000 values: from 7999 elements on
//! (fewer beside `unpack`'s own arguments) the call fails with "too many
//! results to unpack", on every run while the data stays that large.
//!
//! `unpack(t, from, to)` over ranges the script bounds is the fix, and is
//! not reported; `KEYS` and `ARGV` are as long as the request, which the
//! caller sizes.

use crate::interp::observe::{Certainty, Finding, Site, Whole, WholeUse};

pub(crate) struct UnboundedUnpack;

impl Finding for UnboundedUnpack {
    fn whole_use(&self, site: &mut Site<'_>, used: &WholeUse<'_>) {
        if used.how != Whole::Unpacked {
            return;
        }
        let ty = used.value.ty();
        let why = match (&ty.unbounded, &ty.grows) {
            (Some(read), _) => format!(
                "is the reply of `{}` at line {}, which reads {}",
                read.command, read.span.line, read.reads
            ),
            (None, Some(growth)) => growth.why.clone(),
            (None, None) => return,
        };
        // The table as the call names it, for the help: `unpack(active)`.
        let table = site
            .map()
            .snippet(used.span)
            .and_then(|call| {
                let inner = call.split_once('(')?.1.strip_suffix(')')?.trim().to_owned();
                let simple = !inner.is_empty()
                    && inner
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_');
                simple.then_some(inner)
            })
            .unwrap_or_else(|| "t".to_owned());
        site.report(
            Certainty::Sometimes,
            used.span,
            format!(
                "`unpack` passes every element of a table that {why}: from about 8000 elements on, Lua's stack cannot hold them and the call fails with \"too many results to unpack\""
            ),
            format!(
                "pass it in batches: `for i = 1, #{table}, 1000 do … unpack({table}, i, math.min(i + 999, #{table})) … end`, or bound what fills the table"
            ),
        );
    }
}
