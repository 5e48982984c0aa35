//! `#[derive(ScriptReply)]`, `#[derive(ScriptError)]` and
//! `#[derive(JsonShape)]`.
//!
//! Each works in steps kept apart: [`ast`] reads the item into a model (its
//! helper attributes through [`attr`], the one reader of them), [`valid`]
//! checks the model and reports every mistake, and [`expand`] generates the
//! impls. On any error a derive still emits impls that compile, next to the
//! errors, so that uses of the type do not pile up follow-on errors.
//! `JsonShape` reads serde's attributes ([`serde_attr`]) into a model of
//! its own ([`json_model`]), the keys serde writes and reads.

mod ast;
mod attr;
mod expand;
mod json_model;
mod serde_attr;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;

use crate::errors::Errors;
use ast::Container;
use attr::Helper;

/// What differs between the derives.
struct Derive {
    helper: &'static Helper,
    check: fn(&Container<'_>, &mut Errors),
    impls: fn(&Container<'_>) -> TokenStream,
    fallback: fn(&Container<'_>) -> TokenStream,
}

/// `#[derive(ScriptReply)]`.
pub fn script_reply(input: TokenStream) -> TokenStream {
    derive(
        input,
        &Derive {
            helper: &attr::REPLY,
            check: valid::script_reply,
            impls: expand::reply::impls,
            fallback: expand::reply::fallback,
        },
    )
}

/// `#[derive(ScriptError)]`.
pub fn script_error(input: TokenStream) -> TokenStream {
    derive(
        input,
        &Derive {
            helper: &attr::ERROR_CODE,
            check: valid::script_error,
            impls: expand::script_error::impls,
            fallback: expand::script_error::fallback,
        },
    )
}

/// `#[derive(JsonShape)]`: parse, check, generate, as the others.
pub fn json_shape(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let container = json_model::JsonContainer::from_ast(&input);
    let mut errors = Errors::default();
    valid::json_shape(&container, &mut errors);
    match errors.into_tokens() {
        None => expand::json_shape::impls(&container),
        Some(errors) => {
            let fallback = expand::json_shape::fallback(&container);
            quote! { #errors #fallback }
        }
    }
}

fn derive(input: TokenStream, derive: &Derive) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let container = Container::from_ast(&input, derive.helper);
    let mut errors = Errors::default();
    (derive.check)(&container, &mut errors);
    match errors.into_tokens() {
        None => (derive.impls)(&container),
        Some(errors) => {
            let fallback = (derive.fallback)(&container);
            quote! { #errors #fallback }
        }
    }
}
