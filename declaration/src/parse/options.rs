//! The arguments of `#[redis_script(…)]` and `#[function(…)]`.

use proc_macro2::{Span, TokenStream};
use redis_script_analysis::Code;
use syn::ext::IdentExt as _;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{Ident, LitStr, Type};

use super::attr::{Attr, Flag};
use super::signature::without_result;
use super::{Form, SCRIPT_FORM, path_text, unknown_argument};
use crate::errors::Errors;

/// The parsed attribute arguments.
#[derive(Debug)]
pub struct Options {
    /// `path = "lua/x.lua"`, relative to the crate's manifest directory.
    pub path: LitStr,
    /// `keys = N`: how many leading parameters are KEYS.
    pub keys: usize,
    pub keys_span: Span,
    /// `allow_unused`: declared keys or arguments may go unused by the script.
    pub allow_unused: bool,
    /// `dynamic_keys`: key positions may hold values not taken from KEYS.
    pub dynamic_keys: bool,
    /// `returns = T`: the reply type, when the signature does not say it
    /// (or to restate it; then both must agree).
    pub returns: Option<Type>,
    /// `errors = E`: the script's declared error type (`#[derive(ScriptError)]`).
    pub errors: Option<Type>,
    /// `target = "redis-7.2"`: the servers this script must run on,
    /// overriding the crate's `REDIS_SCRIPT_TARGET`.
    pub target: Option<LitStr>,
    /// `#[function(name = "…")]`: the name the library registers the
    /// function under, when it differs from the Rust name.
    pub registered_name: Option<LitStr>,
    /// `exactly_once` or `exactly_once(ttl_secs = N, prefix = "…", retries = N)`.
    pub exactly_once: Option<ExactlyOnceOptions>,
    /// `read_from = "primary" | "prefer_replica" | "replica_only"`: where
    /// the calls read, and the word's span for errors about it.
    pub read_from: Option<(ReadFrom, Span)>,
    /// `allow(name, …)`: value findings silenced for the whole script.
    pub allow: Vec<String>,
}

/// The values of `read_from = "…"`, named as `redis_script::ReadFrom`'s
/// variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    Primary,
    PreferReplica,
    ReplicaOnly,
}

impl ReadFrom {
    /// Every value, as written in the attribute.
    pub const WRITTEN: [(&'static str, ReadFrom); 3] = [
        ("primary", ReadFrom::Primary),
        ("prefer_replica", ReadFrom::PreferReplica),
        ("replica_only", ReadFrom::ReplicaOnly),
    ];

    /// The value as written in the attribute.
    pub fn written(self) -> &'static str {
        Self::WRITTEN
            .iter()
            .find(|(_, value)| *value == self)
            .map_or("", |(text, _)| text)
    }

    /// The name of `redis_script::ReadFrom`'s variant.
    pub fn variant(self) -> &'static str {
        match self {
            ReadFrom::Primary => "Primary",
            ReadFrom::PreferReplica => "PreferReplica",
            ReadFrom::ReplicaOnly => "ReplicaOnly",
        }
    }
}

/// The settings of `exactly_once(…)`, each `None` when left to the default.
#[derive(Debug)]
pub struct ExactlyOnceOptions {
    /// The `exactly_once` word, where errors about the script point.
    pub span: Span,
    pub ttl_secs: Option<u64>,
    pub prefix: Option<String>,
    pub retries: Option<u32>,
}

/// `allow(name, …)`: the names of value findings, each checked.
pub(super) fn parse_allow(
    meta: &syn::meta::ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Vec<String>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let names = content.parse_terminated(Ident::parse_any, syn::Token![,])?;
    let mut allowed = Vec::new();
    for name in names {
        let text = name.to_string();
        if Code::finding(&text).is_some() {
            allowed.push(text);
            continue;
        }
        let message = format!(
            "`allow({text})` names no finding; {}",
            Code::finding_help(&text)
        );
        errors.push(syn::Error::new(name.span(), message));
    }
    Ok(allowed)
}

pub(super) fn parse_options(
    attribute: TokenStream,
    form: Form<'_>,
    errors: &mut Errors,
) -> Option<Options> {
    let mut path: Attr<LitStr> = Attr::argument("path");
    let mut keys: Attr<(usize, Span)> = Attr::argument("keys");
    let mut allow_unused = Flag::argument("allow_unused");
    let mut dynamic_keys = Flag::argument("dynamic_keys");
    let mut returns: Attr<Type> = Attr::argument("returns");
    let mut error_type: Attr<Type> = Attr::argument("errors");
    let mut target: Attr<LitStr> = Attr::argument("target");
    let mut registered_name: Attr<LitStr> = Attr::argument("name");
    let mut exactly_once: Attr<ExactlyOnceOptions> = Attr::argument("exactly_once");
    let mut allow: Attr<Vec<String>> = Attr::argument("allow");
    let mut read_from: Attr<(ReadFrom, Span)> = Attr::argument("read_from");
    // Arguments already reported (misspelt, or of the wrong form): not
    // reported again as missing.
    let mut reported: Vec<&str> = Vec::new();
    let attribute_span = attribute.span();

    let parser = syn::meta::parser(|meta| {
        let name = meta
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        let at = meta.path.span();
        let known = form.arguments().contains(&name.as_str());
        match name.as_str() {
            "path" | "target" if !known => {
                errors.push(syn::Error::new(
                    at,
                    format!("`{name}` belongs to the library: give it once in `#[redis_library({name} = …)]`, for every function"),
                ));
                let _: syn::Expr = meta.value()?.parse()?;
            }
            "name" if known => {
                let literal: LitStr = meta.value()?.parse()?;
                registered_name.set(at, literal, errors);
            }
            "path" => {
                let literal: LitStr = meta.value()?.parse()?;
                if !path.is_set() && literal.value().is_empty() {
                    reported.push("path");
                    errors.push(syn::Error::new(
                        literal.span(),
                        "`path` is empty: name the .lua file, e.g. `path = \"lua/lock.lua\"`",
                    ));
                } else {
                    path.set(at, literal, errors);
                }
            }
            "keys" => {
                let value: syn::Expr = meta.value()?.parse()?;
                let count = match &value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(literal),
                        ..
                    }) => literal.base10_parse::<usize>().ok(),
                    _ => None,
                };
                match count {
                    Some(count) => keys.set(at, (count, value.span()), errors),
                    None => {
                        reported.push("keys");
                        errors.push(syn::Error::new(
                            value.span(),
                            "`keys` must be an integer literal: how many leading parameters are sent as KEYS, e.g. `keys = 2`",
                        ));
                    }
                }
            }
            "target" => {
                let literal: LitStr = meta.value()?.parse()?;
                target.set(at, literal, errors);
            }
            "returns" => {
                let ty: Type = meta.value()?.parse()?;
                if returns.is_set() {
                    returns.set(at, ty, errors);
                } else {
                    returns.set(at, without_result(&ty, errors), errors);
                }
            }
            "errors" => {
                let ty: Type = meta.value()?.parse()?;
                error_type.set(at, ty, errors);
            }
            "exactly_once" if !known => {
                errors.push(syn::Error::new(
                    at,
                    "`exactly_once` is for `#[redis_script]` scripts: a library function's code is loaded as written, so there is no place to record its calls; call the logic as a script, or make the function idempotent (an owner token, `SET NX`)",
                ));
                if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                    let _: proc_macro2::TokenStream = meta.input.parse()?;
                }
            }
            "exactly_once" => {
                let options = parse_exactly_once(&meta, errors)?;
                exactly_once.set(at, options, errors);
            }
            "read_from" => {
                let literal: LitStr = meta.value()?.parse()?;
                let text = literal.value();
                match ReadFrom::WRITTEN.iter().find(|(written, _)| *written == text) {
                    Some((_, value)) => read_from.set(at, (*value, at), errors),
                    None => errors.push(syn::Error::new(
                        literal.span(),
                        format!(
                            "`read_from = \"{text}\"` is not a read policy: write \"primary\", \"prefer_replica\" or \"replica_only\""
                        ),
                    )),
                }
            }
            "allow" => {
                let names = parse_allow(&meta, errors)?;
                allow.set(at, names, errors);
            }
            "allow_unused" | "dynamic_keys" => {
                let flag = if name == "allow_unused" {
                    &mut allow_unused
                } else {
                    &mut dynamic_keys
                };
                flag.set(at, (), errors);
                if meta.input.peek(syn::Token![=]) {
                    errors.push(meta.error(format!(
                        "`{name}` is a flag and takes no value: write just `{name}`"
                    )));
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            _ => {
                // The argument meant is not missing, it is misspelt.
                if let Some(near) = unknown_argument(&meta, form.arguments(), form.usage(), errors)?
                {
                    reported.push(near);
                }
            }
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(attribute) {
        errors.push(error);
        return None;
    }
    let path = match form {
        Form::Function { library_path } => Some(library_path.clone()),
        Form::Script => path.get(),
    };
    if path.is_none() && !reported.contains(&"path") {
        errors.push(syn::Error::new(
            attribute_span,
            format!("missing `path`: name the Lua file; {SCRIPT_FORM}"),
        ));
    }
    let keys = keys.get();
    if keys.is_none() && !reported.contains(&"keys") {
        errors.push(syn::Error::new(
            attribute_span,
            format!(
                "missing `keys`: say how many leading parameters are KEYS (`keys = 0` if none); {}",
                form.usage()
            ),
        ));
    }
    let ((keys, keys_span), path) = (keys?, path?);
    Some(Options {
        allow: allow.get().unwrap_or_default(),
        path,
        keys,
        keys_span,
        allow_unused: allow_unused.given(),
        dynamic_keys: dynamic_keys.given(),
        returns: returns.get(),
        errors: error_type.get(),
        target: target.get(),
        registered_name: registered_name.get(),
        exactly_once: exactly_once.get(),
        read_from: read_from.get(),
    })
}

/// The most retries `exactly_once(retries = N)` takes: each one waits up
/// to a second and then a response timeout.
const MAX_EXACTLY_ONCE_RETRIES: u32 = 100;

/// `exactly_once` alone, or with `(ttl_secs = N, prefix = "…", retries = N)`.
fn parse_exactly_once(
    meta: &syn::meta::ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<ExactlyOnceOptions> {
    let span = meta.path.span();
    let mut ttl_secs: Attr<u64> = exactly_once_setting("ttl_secs");
    let mut prefix: Attr<String> = exactly_once_setting("prefix");
    let mut retries: Attr<u32> = exactly_once_setting("retries");
    if meta.input.peek(syn::Token![=]) {
        errors.push(meta.error(
            "`exactly_once` takes no value: write `exactly_once`, or `exactly_once(ttl_secs = 600, prefix = \"rs:once:\", retries = 3)`",
        ));
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|nested| {
            let name = nested
                .path
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            match name.as_str() {
                "ttl_secs" => {
                    let literal: syn::LitInt = nested.value()?.parse()?;
                    match literal.base10_parse::<u64>() {
                        Ok(seconds @ 1..=MAX_TTL_SECS) => ttl_secs.set(literal.span(), seconds, errors),
                        _ if ttl_secs.is_set() => ttl_secs.set(literal.span(), 0, errors),
                        _ => errors.push(syn::Error::new(literal.span(), format!(
                            "`ttl_secs` must be between 1 and {MAX_TTL_SECS}: how many seconds a call's record lives, e.g. `ttl_secs = 600`"
                        ))),
                    }
                }
                "retries" => {
                    let literal: syn::LitInt = nested.value()?.parse()?;
                    match literal.base10_parse::<u32>() {
                        Ok(count @ 0..=MAX_EXACTLY_ONCE_RETRIES) => retries.set(literal.span(), count, errors),
                        _ if retries.is_set() => retries.set(literal.span(), 0, errors),
                        _ => errors.push(syn::Error::new(literal.span(), format!(
                            "`retries` must be between 0 and {MAX_EXACTLY_ONCE_RETRIES}: how many times a call is sent again after a connection failure or a timeout"
                        ))),
                    }
                }
                "prefix" => {
                    let literal: LitStr = nested.value()?.parse()?;
                    let text = literal.value();
                    if !prefix.is_set() && (text.is_empty() || text.contains(['{', '}'])) {
                        errors.push(syn::Error::new(
                            literal.span(),
                            "`prefix` must be non-empty and without `{` or `}`: the record key adds its own hash tag to share the call's slot",
                        ));
                    } else {
                        prefix.set(literal.span(), text, errors);
                    }
                }
                _ => {
                    let text = path_text(&nested.path);
                    let settings = ["ttl_secs", "prefix", "retries"];
                    let message = match redis_script_analysis::suggest::closest(&text, settings) {
                        Some(near) => format!("unknown `exactly_once` setting `{text}`: did you mean `{near}`?"),
                        None => format!("unknown `exactly_once` setting `{text}`: expected `ttl_secs = N`, `prefix = \"…\"` or `retries = N`"),
                    };
                    errors.push(syn::Error::new(nested.path.span(), message));
                    if nested.input.peek(syn::Token![=]) {
                        let _: syn::Expr = nested.value()?.parse()?;
                    }
                }
            }
            Ok(())
        })?;
    }
    Ok(ExactlyOnceOptions {
        span,
        ttl_secs: ttl_secs.get(),
        prefix: prefix.get(),
        retries: retries.get(),
    })
}

fn exactly_once_setting<T>(name: &str) -> Attr<T> {
    Attr::named(format!("`{name}` in `exactly_once(…)`"))
}

/// The longest record TTL `exactly_once(ttl_secs = N)` takes: 30 days.
const MAX_TTL_SECS: u64 = 30 * 24 * 3600;
