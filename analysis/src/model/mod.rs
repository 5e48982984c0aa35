//! The servers as data: commands (arity, flags, key specs, argument
//! grammars, replies as a script sees them), the sandbox, the releases a
//! target names, and the commands a project declares. Generated from live
//! servers and specification files by `scripts/gen-server-model.py`.

pub(crate) mod argument_grammar;
pub mod commands;
pub(crate) mod declared;
pub mod sandbox;
pub mod target;
