//! The findings about values and operational safety: bugs the value
//! analysis proves (a comparison the types decide, a missing key's `false`
//! in arithmetic) and scripts that block the server (a loop nothing ends,
//! a read that grows with the data), each class with a stable code and
//! name (see [`Code`]) that messages show, `--format json` reports, and an
//! opt-out takes.
//!
//! A finding is an error when the bug happens on every execution that
//! reaches the line, and a warning when it depends on data or input (the
//! message says when). What the analysis cannot prove is unknown and says
//! nothing.
//!
//! Each finding is one file here, named as the finding is, holding a unit
//! struct named as its [`Code`] variant that implements the hooks of
//! [`Finding`] it needs; the list below registers it. The walk shows every
//! registered finding each moment it describes (see
//! [`observe`](crate::interp::observe)), and knows none of them.
//!
//! Any finding can be silenced, for one line or a whole script:
//!
//! ```lua
//! -- redis-script: allow(always_true)          -- in the header: the whole script
//! local n = redis.call('INCR', KEYS[1]) -- redis-script: allow(always_true)
//! -- redis-script: allow(nil_value)            -- on its own line: the next line
//! ```
//!
//! and for a whole declaration with the attribute's `allow(…)` or the
//! command line's `--allow`.

use crate::domain::types::Kinds;
use crate::interp::observe::{Finding, Site};
use crate::source::code::Code;
use crate::source::span::Span;

/// Declares the findings' modules and lists them, each with its code: the
/// struct `Name` in `name.rs` reports as `Code::Name`.
macro_rules! findings {
    ($($module:ident::$finding:ident,)*) => {
        $(mod $module;)*

        /// Every finding with its code, in the order their reports at one
        /// place are listed.
        pub(crate) const ALL: &[(Code, &dyn Finding)] = &[
            $((Code::$finding, &$module::$finding),)*
        ];
    };
}

findings! {
    mismatched_comparison::MismatchedComparison,
    constant_equality::ConstantEquality,
    always_true::AlwaysTrue,
    refused_argument::RefusedArgument,
    empty_unpack::EmptyUnpack,
    fractional_argument::FractionalArgument,
    nil_value::NilValue,
    fractional_reply::FractionalReply,
    reply_hole::ReplyHole,
    returned_metatable::ReturnedMetatable,
    unbounded_unpack::UnboundedUnpack,
    unbounded_read::UnboundedRead,
    keyspace_walk::KeyspaceWalk,
    dangerous_command::DangerousCommand,
    protected_global_read::ProtectedGlobalRead,
    single_command::SingleCommand,
    endless_loop::EndlessLoop,
    bit_width::BitWidth,
    key_as_value::KeyAsValue,
}

#[cfg(test)]
mod tests;

/// How a finding names the expression it is about: quoted when it is short
/// enough to read in a message, described otherwise.
pub(crate) struct Shown {
    text: Option<String>,
    description: &'static str,
}

/// Expressions longer than this are described instead of quoted.
const MAX_SHOWN_CHARS: usize = 72;

impl Shown {
    /// The expression under `span`, to name in a finding (`description`,
    /// "this value", when it is too long to quote).
    pub fn of(site: &Site<'_>, span: Span, description: &'static str) -> Shown {
        Shown {
            text: site.map().snippet_up_to(span, MAX_SHOWN_CHARS),
            description,
        }
    }

    /// For a message: `` `x > 1` ``, or "this comparison".
    pub fn named(&self) -> String {
        self.text
            .as_ref()
            .map_or_else(|| self.description.to_owned(), |text| format!("`{text}`"))
    }

    /// For code in a hint: the expression, or `v` standing for it.
    pub fn code(&self) -> &str {
        self.text.as_deref().unwrap_or("v")
    }
}

/// "a string", "a number or nil", … for messages.
pub(crate) fn describe(kinds: Kinds) -> String {
    // "a string (or false)": what it is, then how it may be missing.
    let present = kinds.without(Kinds::FALSY);
    let absent = kinds.intersection(Kinds::FALSY);
    if !present.is_empty() && !absent.is_empty() && !kinds.intersects(Kinds::TRUE) {
        return format!("{} (or {})", list(present), list(absent));
    }
    list(kinds)
}

fn list(kinds: Kinds) -> String {
    let names: Vec<&str> = kinds
        .lua_types()
        .into_iter()
        .map(|name| match name {
            "nil" => "nil",
            "boolean" if kinds.intersection(Kinds::BOOLEAN) == Kinds::FALSE => "false",
            "boolean" if kinds.intersection(Kinds::BOOLEAN) == Kinds::TRUE => "true",
            "boolean" => "a boolean",
            "number" => "a number",
            "string" => "a string",
            "table" => "a table",
            "function" => "a function",
            _ => "a userdata",
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "nothing".to_owned(),
    }
}

/// Whether `<`, `<=`, `>` or `>=` between values of these kinds raises
/// whatever they hold: Lua orders two numbers or two strings (or tables
/// with a metamethod), and nothing else. Unknown kinds decide nothing.
pub(crate) fn ordering_raises(left: Kinds, right: Kinds) -> bool {
    let comparable = (left.intersects(Kinds::NUMBER) && right.intersects(Kinds::NUMBER))
        || (left.intersects(Kinds::STRING) && right.intersects(Kinds::STRING))
        || (left.intersects(Kinds::TABLE) && right.intersects(Kinds::TABLE));
    !(left.is_unknown() || right.is_unknown() || left.is_empty() || right.is_empty() || comparable)
}
