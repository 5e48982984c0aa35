//! The declared function: its parameters (KEYS, then ARGV) and reply.

use proc_macro2::{Span, TokenStream};
use redis_script_analysis::text::plural;
use syn::spanned::Spanned as _;
use syn::{Attribute, FnArg, Generics, Ident, Pat, Type, Visibility};

use super::CONNECTION_PARAM;
use crate::errors::Errors;

/// The declared function: what the generated one keeps and what it sends.
#[derive(Debug)]
pub struct FunctionSignature {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    pub generics: Generics,
    pub params: Vec<Param>,
    /// Index of the first non-key parameter.
    pub first_arg: usize,
    pub reply: Type,
    /// The signature wrote `-> T` (rather than leaving it to `returns`).
    pub declared_reply: bool,
}

/// One parameter: a KEYS element (or several, for a slice) or an ARGV one.
#[derive(Debug)]
pub struct Param {
    pub ident: Ident,
    pub ty: Type,
    /// A slice or `Vec`: sent as the remaining KEYS or ARGV, one per element.
    pub variadic: bool,
    /// `#[key_prefix]`: the script builds keys by appending to this
    /// argument, and each call checks its hash tag.
    pub key_prefix: Option<Span>,
}

impl FunctionSignature {
    pub fn key_params(&self) -> &[Param] {
        self.params.get(..self.first_arg).unwrap_or_default()
    }

    pub fn arg_params(&self) -> &[Param] {
        self.params.get(self.first_arg..).unwrap_or_default()
    }
}

const IMPL_BLOCK: &str = "a `#[redis_script]` declaration takes no `self`: declare it outside `impl` and `trait` blocks (at module level or in a function body), where its companion type `name::call`/`name::SCRIPT` can go, and call it as `name(&mut connection, …)`";
/// The reply type of `-> T`. The generated function wraps it in a
/// `Result` itself, so a declared `Result<T, _>` is a mistake: reported,
/// and `T` is used so that call sites still type-check.
pub(super) fn without_result(ty: &Type, errors: &mut Errors) -> Type {
    let Type::Path(path) = ty else {
        return ty.clone();
    };
    let Some(last) = path.path.segments.last() else {
        return ty.clone();
    };
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return ty.clone();
    };
    let mut types = arguments.args.iter().filter_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    let (Some(ok), true) = (types.next(), last.ident == "Result") else {
        return ty.clone();
    };
    let shown = quote::quote!(#ok).to_string().replace(' ', "");
    errors.push(syn::Error::new(
        ty.span(),
        format!(
            "declare the reply type only: `-> {shown}`; the generated function returns `Result<{shown}, redis_script::Error>` by itself (`Result<{shown}, redis_script::Failure<E>>` with `errors = E`)"
        ),
    ));
    ok.clone()
}

pub(super) fn parse_signature(
    item: TokenStream,
    keys: Option<(usize, Span)>,
    errors: &mut Errors,
) -> Option<FunctionSignature> {
    let function = match syn::parse2::<syn::ForeignItemFn>(item.clone()) {
        Ok(function) => function,
        Err(error) => {
            errors.push(match syn::parse2::<syn::ItemFn>(item) {
                Ok(with_body) => syn::Error::new(
                    with_body.block.span(),
                    "remove the function body: #[redis_script] generates it; end the signature with `;`",
                ),
                Err(_) => syn::Error::new(
                    error.span(),
                    format!("#[redis_script] applies to a bodyless `async fn` signature: {error}"),
                ),
            });
            return None;
        }
    };
    let sig = &function.sig;
    if let Some(receiver) = sig.receiver() {
        // A method sits in an `impl` or `trait` block, where the generated
        // companion type cannot go: emitting it would only add rustc's
        // errors to this one.
        errors.push(syn::Error::new(receiver.self_token.span(), IMPL_BLOCK));
        return None;
    }
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span(),
            "declare the function `async fn`: the generated call talks to Redis asynchronously",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new(
            variadic.span(),
            "C variadics are not supported; use a slice parameter such as `ids: &[&str]`",
        ));
    }
    if let Some(constness) = &sig.constness {
        errors.push(syn::Error::new(
            constness.span(),
            "a script call cannot be `const`",
        ));
    }
    let params: Vec<Param> = sig
        .inputs
        .iter()
        .filter_map(|input| parse_param(input, errors))
        .collect();
    let (reply, declared_reply) = match &sig.output {
        syn::ReturnType::Default => (syn::parse_quote!(()), false),
        syn::ReturnType::Type(_, ty) => (without_result(ty, errors), true),
    };
    let first_arg = keys.map_or(0, |(keys, _)| keys).min(params.len());
    if let Some((keys, keys_span)) = keys.filter(|&(keys, _)| keys > params.len()) {
        errors.push(syn::Error::new(
            keys_span,
            format!(
                "`keys = {keys}` but the function has only {}: the first `keys` parameters are sent as KEYS",
                plural(params.len(), "parameter")
            ),
        ));
    }
    check_variadic_positions(&params, first_arg, errors);
    check_key_prefixes(&params, first_arg, errors);
    Some(FunctionSignature {
        attrs: function.attrs,
        vis: function.vis,
        ident: sig.ident.clone(),
        generics: sig.generics.clone(),
        params,
        first_arg,
        reply,
        declared_reply,
    })
}

fn parse_param(input: &FnArg, errors: &mut Errors) -> Option<Param> {
    // A receiver never gets here: `parse_signature` rejects it first.
    let FnArg::Typed(typed) = input else {
        return None;
    };
    let Pat::Ident(pattern) = &*typed.pat else {
        errors.push(syn::Error::new(
            typed.pat.span(),
            "use a plain parameter name: each parameter becomes one KEYS or ARGV element",
        ));
        return None;
    };
    if pattern.ident == CONNECTION_PARAM {
        errors.push(syn::Error::new(
            pattern.ident.span(),
            format!("rename this parameter: the generated function takes the Redis connection as `{CONNECTION_PARAM}`"),
        ));
    }
    let mut key_prefix = None;
    for attribute in &typed.attrs {
        let path = attribute.path();
        if !path.is_ident(KEY_PREFIX) {
            let shown = quote::ToTokens::to_token_stream(path)
                .to_string()
                .replace(' ', "");
            errors.push(syn::Error::new(
                path.span(),
                format!("`#[{shown}]` is not an attribute of a script parameter; the one there is, `#[{KEY_PREFIX}]`, declares an argument the script builds keys from by appending to it"),
            ));
            continue;
        }
        if let Err(error) = attribute.meta.require_path_only() {
            errors.push(syn::Error::new(
                error.span(),
                format!(
                    "`#[{KEY_PREFIX}]` takes no arguments: write it alone before the parameter"
                ),
            ));
        }
        key_prefix = Some(path.span());
    }
    let variadic = is_variadic(&typed.ty);
    if let (Some(span), true) = (key_prefix, variadic) {
        errors.push(syn::Error::new(
            span,
            format!(
                "`#[{KEY_PREFIX}]` marks one argument, and `{}` spreads into several",
                pattern.ident
            ),
        ));
    }
    Some(Param {
        ident: pattern.ident.clone(),
        ty: (*typed.ty).clone(),
        variadic,
        key_prefix,
    })
}

/// The parameter attribute that declares an argument a key prefix.
pub const KEY_PREFIX: &str = "key_prefix";

/// `&[T]`, `&mut [T]`, `Vec<T>` and `&Vec<T>` spread into one element each,
/// except byte strings (`&[u8]`, `Vec<u8>`), which redis-rs sends as one.
fn is_variadic(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => match &*reference.elem {
            Type::Slice(slice) => !is_u8(&slice.elem),
            other => vec_element(other).is_some_and(|element| !is_u8(element)),
        },
        Type::Paren(inner) => is_variadic(&inner.elem),
        Type::Group(inner) => is_variadic(&inner.elem),
        other => vec_element(other).is_some_and(|element| !is_u8(element)),
    }
}

/// `T` of a `Vec<T>` type.
fn vec_element(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let segment = path.path.segments.last()?;
    if segment.ident != "Vec" {
        return None;
    }
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(arguments) => {
            arguments.args.iter().find_map(|argument| match argument {
                syn::GenericArgument::Type(element) => Some(element),
                _ => None,
            })
        }
        _ => None,
    }
}

fn is_u8(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.path.is_ident("u8"))
}

/// `#[key_prefix]` belongs on an argument of a call that has a key: a key
/// parameter is a prefix already when the script appends to it, and a
/// call without keys is routed by nothing, so no prefix reaches its slot.
fn check_key_prefixes(params: &[Param], first_arg: usize, errors: &mut Errors) {
    let fixed_keys = params
        .get(..first_arg)
        .unwrap_or_default()
        .iter()
        .filter(|param| !param.variadic)
        .count();
    for (index, param) in params.iter().enumerate() {
        let Some(span) = param.key_prefix else {
            continue;
        };
        if index < first_arg {
            errors.push(syn::Error::new(
                span,
                format!(
                    "`{}` is a key parameter: keys the script builds by appending to a key are checked without `#[{KEY_PREFIX}]`; remove it",
                    param.ident
                ),
            ));
        } else if fixed_keys == 0 {
            errors.push(syn::Error::new(
                span,
                format!(
                    "a key prefix needs a key parameter: Redis Cluster routes a script by its KEYS, so a call without keys reaches any node, not the prefix's slot; pass the prefix as a key (`keys = 1` with `{}` first), or add a key in its slot",
                    param.ident
                ),
            ));
        }
    }
}

/// A slice must be the last key parameter or the last parameter: the
/// script finds its elements after the fixed ones.
fn check_variadic_positions(params: &[Param], first_arg: usize, errors: &mut Errors) {
    let groups = [
        ("key", params.get(..first_arg).unwrap_or_default()),
        ("argument", params.get(first_arg..).unwrap_or_default()),
    ];
    for (role, group) in groups {
        let last = group.len().saturating_sub(1);
        for (index, param) in group.iter().enumerate() {
            if param.variadic && index != last {
                errors.push(syn::Error::new(
                    param.ty.span(),
                    format!(
                        "`{}` spreads into several {} elements, so it must be the last {role} parameter: the script reads its elements after the fixed ones",
                        param.ident,
                        if role == "key" { "KEYS" } else { "ARGV" },
                    ),
                ));
            }
        }
    }
}
