//! `unbounded_read`: a loop, `unpack` or `return` whose size comes from a
//! read that grows with the data: a whole collection (`SMEMBERS`,
//! `HGETALL`), a whole index range (`LRANGE … 0 -1`), a range by score or
//! by ID without its `LIMIT` or `COUNT`. The script's work then grows with
//! the data rather than with the request, and the server serves no one
//! else while it runs.
//!
//! Which reads grow with the data is a fact of the walk (each reply's type
//! carries it, from the server model and the call's literal words); a read
//! whose result the script only tests or measures is not reported: the
//! finding is about work. Each read is reported once, at the read. A read
//! passed whole to `unpack` is `unbounded_unpack`'s, at the `unpack`.

use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, ReplyValue, Site, Whole, WholeUse};

pub(crate) struct UnboundedRead;

impl Finding for UnboundedRead {
    fn whole_use(&self, site: &mut Site<'_>, used: &WholeUse<'_>) {
        let how = match used.how {
            Whole::LoopBound => "a loop runs once per element",
            Whole::Iterated => "a loop iterates it",
            // `unbounded_unpack` reports it at the `unpack`: the call
            // fails before the work matters.
            Whole::Unpacked => return,
            Whole::UnpackedInRanges => {
                "`unpack` passes its elements as arguments, a range at a time"
            }
        };
        check(site, used.value, how);
    }

    fn reply(&self, site: &mut Site<'_>, reply: &ReplyValue<'_>) {
        // A table of it returned; its length is small.
        if reply.value.ty().kinds.intersects(Kinds::TABLE) {
            check(site, reply.value, "the script returns it whole");
        }
    }
}

/// `value` is used by `how` ("a loop iterates it"): a warning at the read,
/// once per read.
fn check(site: &mut Site<'_>, value: &Value, how: &str) {
    let Some(read) = value.ty().unbounded else {
        return;
    };
    if site.reported_at(read.span) {
        return;
    }
    site.report(
        Certainty::Sometimes,
        read.span,
        format!(
            "`{}` reads {}, and {how}: the script's work grows with the data, not with the request, and the server serves no other client meanwhile",
            read.command, read.reads
        ),
        read.bound.clone(),
    );
}
