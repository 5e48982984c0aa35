//! `returned_metatable`: the reply is a table with a metatable, or holds
//! one. The server converts the reply after the script has ended: some
//! releases read an error table's fields through `__index`, so a
//! metamethod runs outside the script (it can write, and a raise there
//! kills Redis 7.0 to 8.6 and Valkey); others read raw and ignore it.
//! redis-script's calls strip metatables from what they send back, so the
//! reply never holds what the metamethods would have given.

use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, ReplyValue, Site};
use crate::source::span::Span;

pub(crate) struct ReturnedMetatable;

/// How deep a reply's tables are searched.
const DEPTH: usize = 3;

impl Finding for ReturnedMetatable {
    fn reply(&self, site: &mut Site<'_>, reply: &ReplyValue<'_>) {
        let Some(at) = with_metatable(site, reply.value, reply.span, DEPTH) else {
            return;
        };
        site.report(
            Certainty::Sometimes,
            at,
            "the reply is a table with a metatable, or holds one: the server converts the reply after the script has ended, and some releases read an error table's fields through `__index`, so the metamethod runs outside the script (a raise there ends the server process); others ignore it",
            "return plain tables: copy what the metamethods provide into fields (`rawset`) before returning, or build the reply without `setmetatable`",
        );
    }
}

/// Where `value` (written at `span`) is or holds a table with a metatable.
fn with_metatable(site: &Site<'_>, value: &Value, span: Span, depth: usize) -> Option<Span> {
    const CALL: &str = "setmetatable(";
    let set_here = site.map().text(span.offset, span.offset + CALL.len()) == Some(CALL);
    let ty = value.ty();
    if set_here || ty.metatable {
        return Some(span);
    }
    if depth == 0 {
        return None;
    }
    if let Value::Table(Some(shape)) = value {
        return shape
            .values
            .iter()
            .find_map(|(element, at)| with_metatable(site, element, *at, depth - 1));
    }
    let table = ty.table_type()?;
    let held = table
        .elements
        .iter()
        .chain(&table.positions)
        .any(|element| element.metatable);
    held.then_some(span)
}
