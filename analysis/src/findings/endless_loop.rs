//! `endless_loop`: a loop that nothing ends. A script blocks its server
//! while it runs; once it runs past `busy-reply-threshold` (formerly
//! `lua-time-limit`) the server answers `BUSY` to every client until
//! `SCRIPT KILL`, or `SHUTDOWN NOSAVE` once the script has written.
//!
//! Which loops never end is the walk's fact (see
//! [`LoopWalked::endless`]): a condition that never ends the loop, and a
//! body with no way out.

use crate::interp::observe::{Certainty, Finding, Forever, LoopWalked, Site};

pub(crate) struct EndlessLoop;

impl Finding for EndlessLoop {
    fn loop_walked(&self, site: &mut Site<'_>, walked: &LoopWalked<'_>) {
        let Some(forever) = walked.endless else {
            return;
        };
        let why = match forever {
            Forever::While => "its condition is never false",
            Forever::Repeat => "its `until` condition is never true",
            Forever::For => "its range never ends",
        };
        let span = site.map().token(walked.keyword);
        site.report(
            Certainty::Always,
            span,
            format!(
                "this loop never ends: {why}, and nothing in it breaks, returns or raises; the script runs until the server's busy-reply-threshold, then the server answers BUSY to every client until SCRIPT KILL (or SHUTDOWN NOSAVE once the script has written)"
            ),
            "give it an exit (`if not item then break end`) or a bound (`for i = 1, tonumber(ARGV[1]) do`)",
        );
    }
}
