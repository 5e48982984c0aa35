//! Procedural macros of `redis-script`. Depend on the `redis-script` crate,
//! which re-exports them, rather than on this crate directly.
//!
//! The attribute works in three phases kept apart: `parse` reads the
//! attribute arguments and the function signature, `check` reads the
//! `.lua` file and runs the Lua analysis (accumulating every error), and
//! `generate` emits the typed function. On any error the declared
//! function is still emitted, with an unreachable body, so call sites keep
//! type-checking and IDEs keep completing.

mod check;
mod generate;
mod lua;
mod parse;

use proc_macro::TokenStream;

/// Declares a typed call of a Redis Lua script checked at compile time.
///
/// See the `redis-script` crate for the full documentation.
#[proc_macro_attribute]
pub fn redis_script(attribute: TokenStream, item: TokenStream) -> TokenStream {
    expand(attribute.into(), item.into()).into()
}

fn expand(
    attribute: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let declaration = match parse::Declaration::parse(attribute, item) {
        Ok(declaration) => declaration,
        Err(parsed) => {
            let errors = parsed.errors.to_compile_error();
            let fallback = parsed
                .signature
                .map(|signature| generate::unreachable_function(&signature));
            return quote::quote! { #errors #fallback };
        }
    };
    match check::check(&declaration) {
        Ok(script) => generate::script_function(&declaration, &script),
        Err(errors) => {
            let errors = errors.to_compile_error();
            let fallback = generate::unreachable_function(&declaration.signature);
            quote::quote! { #errors #fallback }
        }
    }
}
