//! The source as written: Lua 5.1 syntax and its spans, the `#!lua` line,
//! the header comment, the token helpers, and the diagnostics that point
//! into the file. Nothing here knows the server or the walk.

pub(crate) mod allow;
pub(crate) mod code;
pub(crate) mod diagnostic;
pub(crate) mod header;
pub(crate) mod shebang;
pub(crate) mod span;
pub mod suggest;
pub(crate) mod syntax;
pub mod text;
pub(crate) mod tokens;
