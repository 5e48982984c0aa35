//! `empty_unpack`: `unpack(t)` supplying a command's required arguments
//! when `t` may be empty. It then supplies none, and the server refuses
//! the call for its number of arguments.

use super::Shown;
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, CommandCall, Finding, Site};

pub(crate) struct EmptyUnpack;

impl Finding for EmptyUnpack {
    fn command(&self, site: &mut Site<'_>, call: &CommandCall<'_>) {
        let Some(runnable) = call.runnable else {
            return;
        };
        let Some(last) = call.operands.last().filter(|operand| operand.many) else {
            return;
        };
        let Value::Spread(table) = &last.value else {
            return;
        };
        // What the forms still need from the `unpack` on.
        let before = call.operands.len() - 1;
        if runnable.min_args.saturating_sub(before) == 0 {
            return;
        }
        let may_be_empty = table.table_type().is_some_and(|table| table.may_be_empty);
        if !may_be_empty || !table.kinds.within(Kinds::TABLE) {
            return;
        }
        let shown_named = Shown::of(site, last.span, "the unpacked table").named();
        site.report(
            Certainty::Sometimes,
            last.span,
            format!(
                "{shown_named} may be empty, and then `{}` gets too few arguments: Redis fails with \"Wrong number of args calling Redis command from script\"",
                runnable.name
            ),
            "guard the call: `if #t > 0 then … end`",
        );
    }
}
