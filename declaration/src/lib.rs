//! The declarations of `#[redis_script]` and `#[redis_library]`, read
//! from their tokens: the attribute's arguments, the function signature,
//! a library module's functions, and the analysis signature they declare.
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

pub mod errors;
mod parse;
pub mod shown;

pub use parse::*;

use redis_script_analysis as lua;

/// The keys, arguments and options a declaration gives the analysis; the
/// target and the declared commands come from the crate's settings.
pub fn lua_signature(declaration: &Declaration) -> lua::Signature {
    let signature = &declaration.signature;
    let count = |params: &[crate::Param]| {
        let variadic = params.last().is_some_and(|param| param.variadic);
        (params.len() - usize::from(variadic), variadic)
    };
    let (keys, variadic_keys) = count(signature.key_params());
    let (args, variadic_args) = count(signature.arg_params());
    let names = |params: &[crate::Param]| {
        params
            .iter()
            .filter(|param| !param.variadic)
            .map(|param| param.ident.to_string())
            .collect()
    };
    lua::Signature {
        key_names: names(signature.key_params()),
        arg_names: names(signature.arg_params()),
        keys,
        args,
        variadic_keys,
        variadic_args,
        allow_unused: declaration.options.allow_unused,
        dynamic_keys: declaration.options.dynamic_keys,
        key_prefix_args: signature
            .arg_params()
            .iter()
            .enumerate()
            .filter(|(_, param)| param.key_prefix.is_some())
            .map(|(index, _)| index + 1)
            .collect(),
        allow: declaration.options.allow.clone(),
        ..lua::Signature::default()
    }
}

impl Declaration {
    /// The parameter sent as the `KEYS` or `ARGV` element a diagnostic is
    /// about.
    pub fn parameter(&self, parameter: lua::Parameter) -> Option<&Param> {
        let signature = &self.signature;
        match parameter {
            lua::Parameter::Key(index) => signature.key_params().get(index.checked_sub(1)?),
            lua::Parameter::Arg(index) => signature.arg_params().get(index.checked_sub(1)?),
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
