//! Procedural macros of `redis-script`. Depend on the `redis-script` crate,
//! which re-exports them, rather than on this crate directly.
//!
//! The attribute works in three phases kept apart: `parse` reads the
//! attribute arguments and the function signature, `check` reads the
//! `.lua` file and runs the Lua analysis (accumulating every error), and
//! `generate` emits the typed function. On any error the declared
//! function is still emitted, with an unreachable body, so call sites keep
//! type-checking and IDEs keep completing.

// The macro runs inside the compiler on user input: it reports problems as
// `compile_error!`, it never panics.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod check;
mod context;
mod contract;
mod derive;
mod generate;
mod json_contract;

use redis_script_declaration as parse;
use redis_script_declaration::errors;

use proc_macro::TokenStream;

/// The one module of `redis-script` that generated code names; its version
/// changes with the contract between generated code and the runtime.
fn private() -> proc_macro2::TokenStream {
    quote::quote!(::redis_script::__private_v3)
}

/// Declares a typed call of a Redis Lua script checked at compile time.
///
/// See the `redis-script` crate for the full documentation.
#[proc_macro_attribute]
pub fn redis_script(attribute: TokenStream, item: TokenStream) -> TokenStream {
    // Only an indented declaration may sit in an `impl` or `trait` block:
    // one at the start of its line does not cost a read of its file.
    let site = proc_macro::Span::call_site();
    let source_file = (site.column() > 1).then(|| site.local_file()).flatten();
    expand(attribute.into(), item.into(), source_file.as_deref()).into()
}

/// Declares typed `FCALL` calls of the functions a Redis function library
/// (`#!lua name=…`) registers, checked at compile time.
///
/// See the `redis-script` crate for the full documentation.
#[proc_macro_attribute]
pub fn redis_library(attribute: TokenStream, item: TokenStream) -> TokenStream {
    expand_library(attribute.into(), item.into()).into()
}

/// Derives `redis::FromRedisValue` (and the reply's shape for compile-time
/// checks) for a struct decoded from an array reply or an enum decoded from
/// a tagged reply.
#[proc_macro_derive(ScriptReply, attributes(reply))]
pub fn derive_script_reply(item: TokenStream) -> TokenStream {
    derive::script_reply(item.into()).into()
}

/// Derives `redis_script::ScriptError` for an enum of the error codes a
/// script raises with `redis.error_reply('CODE …')`.
#[proc_macro_derive(ScriptError, attributes(error_code))]
pub fn derive_script_error(item: TokenStream) -> TokenStream {
    derive::script_error(item.into()).into()
}

/// Derives `redis_script::JsonShape`: the JSON serde writes for the type
/// and reads into it (field names after serde's renames, which fields may
/// be missing or absent), for the compile-time checks of scripts that
/// `cjson.decode` a `Json<T>` argument or return `cjson.encode(...)`.
///
/// Reads `#[serde(...)]` as serde's derives do; `#[json_shape(any)]` on a
/// field leaves its JSON unchecked. See the `redis-script` crate.
#[proc_macro_derive(JsonShape, attributes(json_shape, serde))]
pub fn derive_json_shape(item: TokenStream) -> TokenStream {
    derive::json_shape(item.into()).into()
}

fn expand(
    attribute: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    source_file: Option<&std::path::Path>,
) -> proc_macro2::TokenStream {
    let declaration = match parse::Declaration::parse(attribute, item) {
        Ok(declaration) => declaration,
        Err(parsed) => {
            let errors = parsed.errors.to_compile_error();
            // Whether the attribute says `exactly_once` may be what failed
            // to parse: offer `call_with_id` so that its callers type-check.
            let fallback = parsed
                .signature
                .map(|signature| generate::unreachable_function(&signature, None, true));
            return quote::quote! { #errors #fallback };
        }
    };
    if let Some(block) = source_file.and_then(|file| enclosing_block(file, &declaration)) {
        return in_block_error(&declaration, block);
    }
    match check::check(&declaration) {
        Ok(script) => generate::script_function(&declaration, &script),
        Err(failed) => {
            let errors = failed.errors.to_compile_error();
            let warnings = contract::WarningSite::new(
                declaration.options.path.span(),
                &declaration.signature.attrs,
            )
            .warnings(&failed.warnings);
            let fallback = generate::unreachable_function(
                &declaration.signature,
                declaration.options.errors.as_ref(),
                declaration.options.exactly_once.is_some(),
            );
            quote::quote! { #errors #warnings #fallback }
        }
    }
}

fn enclosing_block(
    source_file: &std::path::Path,
    declaration: &parse::Declaration,
) -> Option<context::Enclosing> {
    let source = std::fs::read_to_string(source_file).ok()?;
    context::enclosing_block(&source, &declaration.signature.ident.to_string())
}

/// One error of the library's for a declaration inside an `impl` or
/// `trait` block, instead of one of rustc's for each module item the
/// expansion holds; the function alone stands in, so that its callers
/// type-check.
fn in_block_error(
    declaration: &parse::Declaration,
    block: context::Enclosing,
) -> proc_macro2::TokenStream {
    let signature = &declaration.signature;
    let message = format!(
        "a `#[redis_script]` declaration cannot go inside {block}: it comes with a companion type (`{name}::call`, `{name}::SCRIPT`) and compile-time checks, which are module items; declare it at module level (or in a function body) and call it as `{name}(&mut connection, …)`",
        block = block.described(),
        name = signature.ident,
    );
    let error = syn::Error::new(signature.ident.span(), message).to_compile_error();
    let stand_in = match block {
        context::Enclosing::Impl => generate::unreachable_associated_function(
            signature,
            declaration.options.errors.as_ref(),
        ),
        // A trait's `async fn` may have no body; the declaration as written
        // would be one, so nothing stands in.
        context::Enclosing::Trait => proc_macro2::TokenStream::new(),
    };
    quote::quote! { #error #stand_in }
}

fn expand_library(
    attribute: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let declaration = match parse::LibraryDeclaration::parse(attribute, item) {
        Ok(declaration) => declaration,
        Err(parsed) => {
            let errors = parsed.errors.to_compile_error();
            let functions: Vec<_> = parsed
                .functions
                .iter()
                .map(|(signature, errors)| (signature, errors.as_ref()))
                .collect();
            let fallback = parsed
                .module
                .map(|module| generate::unreachable_library(&module, &functions));
            return quote::quote! { #errors #fallback };
        }
    };
    match check::check_library(&declaration) {
        Ok(library) => generate::library_module(&declaration, &library),
        Err(failed) => {
            let errors = failed.errors.to_compile_error();
            let warnings =
                contract::WarningSite::new(declaration.path.span(), &declaration.module.attrs)
                    .warnings(&failed.warnings);
            let functions: Vec<_> = declaration
                .functions
                .iter()
                .map(|function| (&function.signature, function.options.errors.as_ref()))
                .collect();
            let fallback = generate::unreachable_library(&declaration.module, &functions);
            quote::quote! { #errors #warnings #fallback }
        }
    }
}
