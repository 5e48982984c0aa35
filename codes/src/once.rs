//! Where a call of an `exactly_once` script carries its record: the one
//! definition the analysis's wrapper (which reads it in Lua) and the
//! runtime (which sends it) both follow.
//!
//! The call sends the record's key after the script's own keys and the
//! record's time to live, in milliseconds, before the script's own
//! arguments:
//!
//! ```text
//! EVALSHA <sha> <numkeys + 1> <key>… <record key> <ttl ms> <argument>…
//! ```
//!
//! ```
//! use redis_script_codes::once::{RECORD_KEY, TTL_MS};
//!
//! assert_eq!(RECORD_KEY.lua("KEYS"), "KEYS[#KEYS]");
//! assert_eq!(TTL_MS.lua("ARGV"), "ARGV[1]");
//! assert_eq!(RECORD_KEY.others("KEYS"), ("1", "#KEYS - 1".to_owned()));
//! assert_eq!(TTL_MS.others("ARGV"), ("2", "#ARGV".to_owned()));
//! ```

/// Where in KEYS or ARGV an element the wrapper adds goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Before the script's own elements.
    First,
    /// After the script's own elements.
    Last,
}

impl Position {
    /// The Lua expression of the added element of `table`.
    pub fn lua(self, table: &str) -> String {
        match self {
            Position::First => format!("{table}[1]"),
            Position::Last => format!("{table}[#{table}]"),
        }
    }

    /// The Lua bounds (first, last) of the script's own elements of
    /// `table`, around the added one.
    pub fn others(self, table: &str) -> (&'static str, String) {
        match self {
            Position::First => ("2", format!("#{table}")),
            Position::Last => ("1", format!("#{table} - 1")),
        }
    }
}

/// The record's key: after the script's own keys, in their slot (a call
/// without keys is routed by it).
pub const RECORD_KEY: Position = Position::Last;

/// The record's time to live in milliseconds: before the script's own
/// arguments.
pub const TTL_MS: Position = Position::First;
