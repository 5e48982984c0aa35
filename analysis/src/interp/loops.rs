//! Loops that never end: a condition that can never end the loop (`while
//! true`, `repeat … until false`, a numeric `for` to `math.huge` or with a
//! step of 0 from a start at or past its bound) and a body with no way
//! out: no `break` of its own, no `return`, and no call that may raise
//! (`error`, `assert`, or any function that is not a library member).

use full_moon::ast::{Block, Call, FunctionCall, LastStmt, Prefix, Suffix};
use full_moon::visitors::{Visit, Visitor};

use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::interp::observe::Forever;
use crate::source::tokens::identifier;

impl Forever {
    /// `while` with this condition value never ends by its condition.
    pub fn while_condition(condition: &Value) -> Option<Self> {
        let kinds = condition.ty().kinds;
        (!kinds.is_empty() && !kinds.is_unknown() && !kinds.intersects(Kinds::FALSY))
            .then_some(Self::While)
    }

    /// `repeat … until` with this condition value never ends by it.
    pub fn until_condition(condition: &Value) -> Option<Self> {
        condition
            .ty()
            .kinds
            .within(Kinds::FALSY)
            .then_some(Self::Repeat)
    }

    /// A numeric `for` from `start` to `bound` by `step` never ends by its
    /// range. Lua 5.1 goes on while `i <= bound` for a positive step and
    /// while `i >= bound` otherwise, so a step of 0 never ends from a start
    /// at or past the bound (and never runs from one before it).
    pub fn numeric_range(start: &Value, bound: &Value, step: Option<&Value>) -> Option<Self> {
        let step = match step {
            Some(step) => step.as_number()?,
            None => 1.0,
        };
        let bound = bound.as_number()?;
        let endless = if step > 0.0 {
            bound == f64::INFINITY
        } else if step < 0.0 {
            bound == f64::NEG_INFINITY
        } else {
            start.as_number().is_some_and(|start| start >= bound)
        };
        endless.then_some(Self::For)
    }
}

/// Whether running `body` may leave the loop it belongs to.
pub(crate) fn may_leave(body: &Block) -> bool {
    let mut exits = Exits::default();
    body.visit(&mut exits);
    exits.found
}

/// Looks for a way out of one loop body: nested functions' returns and
/// nested loops' breaks do not leave it.
#[derive(Default)]
struct Exits {
    functions: usize,
    loops: usize,
    found: bool,
}

impl Visitor for Exits {
    fn visit_function_body(&mut self, _: &full_moon::ast::FunctionBody) {
        self.functions += 1;
    }

    fn visit_function_body_end(&mut self, _: &full_moon::ast::FunctionBody) {
        self.functions -= 1;
    }

    fn visit_while(&mut self, _: &full_moon::ast::While) {
        self.loops += 1;
    }

    fn visit_while_end(&mut self, _: &full_moon::ast::While) {
        self.loops -= 1;
    }

    fn visit_repeat(&mut self, _: &full_moon::ast::Repeat) {
        self.loops += 1;
    }

    fn visit_repeat_end(&mut self, _: &full_moon::ast::Repeat) {
        self.loops -= 1;
    }

    fn visit_numeric_for(&mut self, _: &full_moon::ast::NumericFor) {
        self.loops += 1;
    }

    fn visit_numeric_for_end(&mut self, _: &full_moon::ast::NumericFor) {
        self.loops -= 1;
    }

    fn visit_generic_for(&mut self, _: &full_moon::ast::GenericFor) {
        self.loops += 1;
    }

    fn visit_generic_for_end(&mut self, _: &full_moon::ast::GenericFor) {
        self.loops -= 1;
    }

    fn visit_last_stmt(&mut self, last: &LastStmt) {
        if self.functions > 0 {
            return;
        }
        match last {
            LastStmt::Return(_) => self.found = true,
            LastStmt::Break(_) if self.loops == 0 => self.found = true,
            _ => {}
        }
    }

    fn visit_function_call(&mut self, call: &FunctionCall) {
        if self.functions == 0 && may_raise(call) {
            self.found = true;
        }
    }
}

/// Library members that never raise for a script that calls them right,
/// or whose raising is no way out anyone writes: a loop calling only these
/// has no exit through them. (`redis.call` raises on a command error, but
/// no loop is written to end by failing a command.)
const QUIET_TABLES: &[&str] = &[
    "redis", "server", "string", "table", "math", "cjson", "cmsgpack", "struct", "bit",
];
const QUIET_FUNCTIONS: &[&str] = &[
    "tonumber", "tostring", "type", "pairs", "ipairs", "unpack", "next", "select", "rawget",
    "rawset", "rawequal", "pcall", "xpcall",
];

/// Whether the call may raise and so end the loop: `error`, `assert`,
/// and every function the analysis does not know (a helper may raise).
fn may_raise(call: &FunctionCall) -> bool {
    let Prefix::Name(name) = call.prefix() else {
        return true;
    };
    let name = identifier(name);
    let member_call = matches!(call.suffixes().next(), Some(Suffix::Index(_)));
    if member_call {
        return !QUIET_TABLES.contains(&name);
    }
    let direct_call = matches!(
        call.suffixes().next(),
        Some(Suffix::Call(Call::AnonymousCall(_)))
    );
    !(direct_call && QUIET_FUNCTIONS.contains(&name))
}
