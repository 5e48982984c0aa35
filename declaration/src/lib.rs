//! The declarations of `#[redis_script]` and `#[redis_library]`, read
//! from their tokens: the attribute's arguments, the function signature,
//! a library module's functions, and the analysis signature they declare,
//! built by the one [`SignatureBuilder`] that the command-line checker's
//! declarations (options, configuration, headers) go through too.
//!
//! The attribute reads them at compile time; the checker's language server
//! reads them from a crate's sources, so that the editor and `cargo build`
//! check a script against the same declaration. Nothing here depends on
//! `proc_macro`: spans are `proc_macro2`'s, and errors accumulate in
//! [`errors::Errors`].

// Reads user input inside the compiler and the editor: it reports
// problems as errors, it never panics.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod builder;
pub mod errors;
mod parse;
pub mod shown;

pub use builder::{Count, Model, SignatureBuilder, library_signature, script_target};
pub use parse::*;

use redis_script_analysis as lua;

impl Declaration {
    /// The parameter sent as the `KEYS` or `ARGV` element a diagnostic is
    /// about.
    pub fn parameter(&self, parameter: lua::Parameter) -> Option<&Param> {
        let signature = &self.signature;
        match parameter {
            lua::Parameter::Key(index) => signature.key_params().get(index.checked_sub(1)?),
            lua::Parameter::Arg(index) => signature.arg_params().get(index.checked_sub(1)?),
            lua::Parameter::KeyCount => None,
        }
    }

    /// Where the declaration writes what a diagnostic about `parameter` is
    /// about: the parameter's name, or `keys = N` for how it splits them.
    pub fn parameter_span(&self, parameter: lua::Parameter) -> Option<proc_macro2::Span> {
        match parameter {
            lua::Parameter::KeyCount => Some(self.options.keys_span),
            parameter => Some(self.parameter(parameter)?.ident.span()),
        }
    }

    /// Where a library function is named: its `name = "…"`, else its
    /// identifier.
    pub fn name_span(&self) -> proc_macro2::Span {
        self.options
            .registered_name
            .as_ref()
            .map_or_else(|| self.signature.ident.span(), syn::LitStr::span)
    }
}

/// The name a declared function is registered under: `name = "…"`, else
/// the Rust name.
pub fn registered_name(function: &Declaration) -> String {
    function
        .options
        .registered_name
        .as_ref()
        .map_or_else(|| function.signature.ident.to_string(), syn::LitStr::value)
}
