//! Phase 1: the attribute arguments and the function signature.

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream};
use redis_script_analysis::text::plural;
use syn::ext::IdentExt as _;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, FnArg, Generics, Ident, LitStr, Pat, Type, Visibility};

/// Everything the macro needs from `#[redis_script(...)] async fn ...;`.
pub struct Declaration {
    pub options: Options,
    pub signature: FunctionSignature,
}

/// The parsed attribute arguments.
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
    /// `allow(name, …)`: value findings silenced for the whole script.
    pub allow: Vec<String>,
}

/// The settings of `exactly_once(…)`, each `None` when left to the default.
pub struct ExactlyOnceOptions {
    /// The `exactly_once` word, where errors about the script point.
    pub span: Span,
    pub ttl_secs: Option<u64>,
    pub prefix: Option<String>,
    pub retries: Option<u32>,
}

/// Which attribute the arguments belong to.
#[derive(Clone, Copy)]
pub enum Form<'a> {
    /// `#[redis_script(path = …, keys = N, …)]`.
    Script,
    /// `#[function(keys = N, …)]` inside a `#[redis_library]` module: the
    /// file and the target are the library's.
    Function { library_path: &'a LitStr },
}

impl Form<'_> {
    fn arguments(self) -> &'static [&'static str] {
        match self {
            Form::Script => &SCRIPT_ARGUMENTS,
            Form::Function { .. } => &FUNCTION_ARGUMENTS,
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Form::Script => SCRIPT_FORM,
            Form::Function { .. } => FUNCTION_FORM,
        }
    }
}

/// The declared function: what the generated one keeps and what it sends.
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

/// Parsing failed; the signature, when it could be read, still lets the
/// macro emit the declared function so call sites do not cascade errors.
pub struct ParseFailure {
    pub errors: syn::Error,
    pub signature: Option<Box<FunctionSignature>>,
}

/// The name of the connection parameter the generated function adds.
pub const CONNECTION_PARAM: &str = "connection";

impl Declaration {
    pub fn parse(attribute: TokenStream, item: TokenStream) -> Result<Self, ParseFailure> {
        Self::parse_as(Form::Script, attribute, item)
    }

    fn parse_as(
        form: Form<'_>,
        attribute: TokenStream,
        item: TokenStream,
    ) -> Result<Self, ParseFailure> {
        let mut errors = Errors::default();
        let options = parse_options(attribute, form, &mut errors);
        let keys = options.as_ref().map(|o| (o.keys, o.keys_span));
        let mut signature = parse_signature(item, keys, &mut errors);
        if let (Some(options), Some(signature)) = (&options, &mut signature) {
            reconcile_reply_type(options, signature, &mut errors);
        }
        match (errors.finish(), options, signature) {
            (Ok(()), Some(options), Some(signature)) => Ok(Self { options, signature }),
            (result, _, signature) => Err(ParseFailure {
                errors: result.err().unwrap_or_else(|| {
                    syn::Error::new(Span::call_site(), "invalid #[redis_script] declaration")
                }),
                signature: signature.map(Box::new),
            }),
        }
    }
}

const IMPL_BLOCK: &str = "a `#[redis_script]` declaration takes no `self`: declare it outside `impl` and `trait` blocks (at module level or in a function body), where its companion type `name::call`/`name::SCRIPT` can go, and call it as `name(&mut connection, …)`";

/// Every argument `#[redis_script]` takes.
const SCRIPT_ARGUMENTS: [&str; 9] = [
    "path",
    "keys",
    "returns",
    "errors",
    "target",
    "allow_unused",
    "dynamic_keys",
    "exactly_once",
    "allow",
];

/// Every argument `#[function]` takes.
const FUNCTION_ARGUMENTS: [&str; 6] = [
    "keys",
    "name",
    "returns",
    "errors",
    "allow_unused",
    "dynamic_keys",
];

const SCRIPT_FORM: &str = "expected `#[redis_script(path = \"lua/script.lua\", keys = N)]`, optionally with `returns = Type`, `errors = Type`, `target = \"redis-7.2\"`, `allow_unused`, `dynamic_keys`, `exactly_once` and `allow(finding, …)`";

const FUNCTION_FORM: &str = "expected `#[function(keys = N)]`, optionally with `name = \"registered_name\"`, `returns = Type`, `errors = Type`, `allow_unused` and `dynamic_keys`";

/// `allow(name, …)`: the names of value findings, each checked.
fn parse_allow(
    meta: &syn::meta::ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Vec<String>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let names = content.parse_terminated(Ident::parse_any, syn::Token![,])?;
    let mut allowed = Vec::new();
    for name in names {
        let text = name.to_string();
        if redis_script_analysis::finding(&text).is_some() {
            allowed.push(text);
            continue;
        }
        let known = redis_script_analysis::FINDINGS
            .iter()
            .map(|class| class.name);
        let message = match redis_script_analysis::suggest::closest(&text, known) {
            Some(near) => {
                format!("`{text}` is not a finding of the checker: did you mean `{near}`?")
            }
            None => format!(
                "`{text}` is not a finding of the checker; the findings are {}",
                redis_script_analysis::FINDINGS
                    .iter()
                    .map(|class| format!("`{}`", class.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        errors.push(syn::Error::new(name.span(), message));
    }
    Ok(allowed)
}

/// `returns = T` fills in a missing `-> T`; when both are written they
/// must name the same type.
fn reconcile_reply_type(options: &Options, signature: &mut FunctionSignature, errors: &mut Errors) {
    let Some(returns) = &options.returns else {
        return;
    };
    if !signature.declared_reply {
        signature.reply = returns.clone();
        return;
    }
    let (declared, attribute) = (&signature.reply, returns);
    if quote::quote!(#declared).to_string() != quote::quote!(#attribute).to_string() {
        errors.push(syn::Error::new(
            returns.span(),
            format!(
                "`returns = {}` disagrees with the signature's `-> {}`: write the reply type once, or the same in both places",
                quote::quote!(#attribute).to_string().replace(' ', ""),
                quote::quote!(#declared).to_string().replace(' ', ""),
            ),
        ));
    }
}

fn parse_options(attribute: TokenStream, form: Form<'_>, errors: &mut Errors) -> Option<Options> {
    let mut path: Option<LitStr> = None;
    let mut keys: Option<(usize, Span)> = None;
    let mut allow_unused: Option<Span> = None;
    let mut dynamic_keys: Option<Span> = None;
    let mut returns: Option<Type> = None;
    let mut error_type: Option<Type> = None;
    let mut target: Option<LitStr> = None;
    let mut registered_name: Option<LitStr> = None;
    let mut exactly_once: Option<ExactlyOnceOptions> = None;
    let mut allow: Option<Vec<String>> = None;
    let mut misspelt: Vec<&str> = Vec::new();
    let attribute_span = attribute.span();

    let parser = syn::meta::parser(|meta| {
        let name = meta
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        let duplicate = || {
            syn::Error::new(
                meta.path.span(),
                format!("duplicate `{name}` argument: give it once"),
            )
        };
        let known = form.arguments().contains(&name.as_str());
        match name.as_str() {
            "path" | "target" if !known => {
                errors.push(syn::Error::new(
                    meta.path.span(),
                    format!("`{name}` belongs to the library: give it once in `#[redis_library({name} = …)]`, for every function"),
                ));
                let _: syn::Expr = meta.value()?.parse()?;
            }
            "name" if known => {
                let literal: LitStr = meta.value()?.parse()?;
                if registered_name.is_some() {
                    errors.push(duplicate());
                } else {
                    registered_name = Some(literal);
                }
            }
            "path" => {
                let literal: LitStr = meta.value()?.parse()?;
                if path.is_some() {
                    errors.push(duplicate());
                } else if literal.value().is_empty() {
                    errors.push(syn::Error::new(
                        literal.span(),
                        "`path` is empty: name the .lua file, e.g. `path = \"lua/lock.lua\"`",
                    ));
                } else {
                    path = Some(literal);
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
                    Some(_) if keys.is_some() => errors.push(duplicate()),
                    Some(count) => keys = Some((count, value.span())),
                    None => errors.push(syn::Error::new(
                        value.span(),
                        "`keys` must be an integer literal: how many leading parameters are sent as KEYS, e.g. `keys = 2`",
                    )),
                }
            }
            "target" => {
                let literal: LitStr = meta.value()?.parse()?;
                if target.is_some() {
                    errors.push(duplicate());
                } else {
                    target = Some(literal);
                }
            }
            "returns" | "errors" => {
                let ty: Type = meta.value()?.parse()?;
                let slot = if name == "returns" {
                    &mut returns
                } else {
                    &mut error_type
                };
                if slot.is_some() {
                    errors.push(duplicate());
                } else if name == "returns" {
                    *slot = Some(without_result(&ty, errors));
                } else {
                    *slot = Some(ty);
                }
            }
            "exactly_once" if !known => {
                errors.push(syn::Error::new(
                    meta.path.span(),
                    "`exactly_once` is for `#[redis_script]` scripts: a library function's code is loaded as written, so there is no place to record its calls; call the logic as a script, or make the function idempotent (an owner token, `SET NX`)",
                ));
                if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                    let _: proc_macro2::TokenStream = meta.input.parse()?;
                }
            }
            "exactly_once" => {
                let options = parse_exactly_once(&meta, errors)?;
                if exactly_once.is_some() {
                    errors.push(duplicate());
                } else {
                    exactly_once = Some(options);
                }
            }
            "allow" => {
                let names = parse_allow(&meta, errors)?;
                if allow.is_some() {
                    errors.push(duplicate());
                } else {
                    allow = Some(names);
                }
            }
            "allow_unused" | "dynamic_keys" => {
                let slot = if name == "allow_unused" {
                    &mut allow_unused
                } else {
                    &mut dynamic_keys
                };
                if slot.is_some() {
                    errors.push(duplicate());
                } else {
                    *slot = Some(meta.path.span());
                }
                if meta.input.peek(syn::Token![=]) {
                    errors.push(meta.error(format!(
                        "`{name}` is a flag and takes no value: write just `{name}`"
                    )));
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            _ => {
                let text = path_text(&meta.path);
                let near = redis_script_analysis::suggest::closest(
                    &text,
                    form.arguments().iter().copied(),
                );
                let message = match near {
                    Some(near) => {
                        // Reported here only: the argument the user meant
                        // is not missing, it is misspelt.
                        misspelt.push(near);
                        format!("unknown argument `{text}`: did you mean `{near}`?")
                    }
                    None => format!("unknown argument `{text}`; {}", form.usage()),
                };
                errors.push(syn::Error::new(meta.path.span(), message));
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(attribute) {
        errors.push(error);
        return None;
    }
    if let Form::Function { library_path } = form {
        path = Some(library_path.clone());
    }
    if path.is_none() && !misspelt.contains(&"path") {
        errors.push(syn::Error::new(
            attribute_span,
            format!("missing `path`: name the Lua file; {SCRIPT_FORM}"),
        ));
    }
    if keys.is_none() && !misspelt.contains(&"keys") {
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
        allow: allow.unwrap_or_default(),
        path,
        keys,
        keys_span,
        allow_unused: allow_unused.is_some(),
        dynamic_keys: dynamic_keys.is_some(),
        returns,
        errors: error_type,
        target,
        registered_name,
        exactly_once,
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
    let mut options = ExactlyOnceOptions {
        span: meta.path.span(),
        ttl_secs: None,
        prefix: None,
        retries: None,
    };
    if meta.input.peek(syn::Token![=]) {
        errors.push(meta.error(
            "`exactly_once` takes no value: write `exactly_once`, or `exactly_once(ttl_secs = 600, prefix = \"rs:once:\", retries = 3)`",
        ));
        let _: syn::Expr = meta.value()?.parse()?;
        return Ok(options);
    }
    if !meta.input.peek(syn::token::Paren) {
        return Ok(options);
    }
    meta.parse_nested_meta(|setting| {
        let name = setting
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        let duplicate = |span: Span| {
            syn::Error::new(span, format!("duplicate `{name}` in `exactly_once(…)`: give it once"))
        };
        match name.as_str() {
            "ttl_secs" | "retries" => {
                let literal: syn::LitInt = setting.value()?.parse()?;
                let parsed = literal.base10_parse::<u64>();
                let error = |message: &str| syn::Error::new(literal.span(), message);
                if name == "ttl_secs" {
                    match parsed {
                        _ if options.ttl_secs.is_some() => errors.push(duplicate(literal.span())),
                        Ok(seconds @ 1..=MAX_TTL_SECS) => options.ttl_secs = Some(seconds),
                        _ => errors.push(error(&format!(
                            "`ttl_secs` must be between 1 and {MAX_TTL_SECS}: how many seconds a call's record lives, e.g. `ttl_secs = 600`"
                        ))),
                    }
                } else {
                    match parsed.ok().and_then(|retries| u32::try_from(retries).ok()) {
                        _ if options.retries.is_some() => errors.push(duplicate(literal.span())),
                        Some(retries) if retries <= MAX_EXACTLY_ONCE_RETRIES => {
                            options.retries = Some(retries);
                        }
                        _ => errors.push(error(&format!(
                            "`retries` must be between 0 and {MAX_EXACTLY_ONCE_RETRIES}: how many times a call is sent again after a connection failure or a timeout"
                        ))),
                    }
                }
            }
            "prefix" => {
                let literal: LitStr = setting.value()?.parse()?;
                let prefix = literal.value();
                if options.prefix.is_some() {
                    errors.push(duplicate(literal.span()));
                } else if prefix.is_empty() || prefix.contains(['{', '}']) {
                    errors.push(syn::Error::new(
                        literal.span(),
                        "`prefix` must be non-empty and without `{` or `}`: the record key adds its own hash tag to share the call's slot",
                    ));
                } else {
                    options.prefix = Some(prefix);
                }
            }
            _ => {
                let text = path_text(&setting.path);
                let settings = ["ttl_secs", "prefix", "retries"];
                let message = match redis_script_analysis::suggest::closest(&text, settings) {
                    Some(near) => format!("unknown `exactly_once` setting `{text}`: did you mean `{near}`?"),
                    None => format!("unknown `exactly_once` setting `{text}`: expected `ttl_secs = N`, `prefix = \"…\"` or `retries = N`"),
                };
                errors.push(syn::Error::new(setting.path.span(), message));
                if setting.input.peek(syn::Token![=]) {
                    let _: syn::Expr = setting.value()?.parse()?;
                }
            }
        }
        Ok(())
    })?;
    Ok(options)
}

/// The longest record TTL `exactly_once(ttl_secs = N)` takes: 30 days.
const MAX_TTL_SECS: u64 = 30 * 24 * 3600;

/// The reply type of `-> T`. The generated function wraps it in a
/// `Result` itself, so a declared `Result<T, _>` is a mistake: reported,
/// and `T` is used so that call sites still type-check.
fn without_result(ty: &Type, errors: &mut Errors) -> Type {
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

fn parse_signature(
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

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// Everything the macro needs from `#[redis_library(path = …)] mod name { … }`.
pub struct LibraryDeclaration {
    /// `path = "lua/lib.lua"`, relative to the crate's manifest directory.
    pub path: LitStr,
    /// `target = "redis-7.2"`, for every function of the library.
    pub target: Option<LitStr>,
    /// `allow(name, …)`: value findings silenced in the whole file.
    pub allow: Vec<String>,
    pub module: ModuleShell,
    /// One per `#[function(…)]` signature, in order.
    pub functions: Vec<Declaration>,
}

/// The module around the functions: what the expansion keeps as written.
pub struct ModuleShell {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    /// Items other than the declared functions (`use`, types, …).
    pub items: Vec<syn::Item>,
}

/// Parsing the library failed; what could be read still lets the macro
/// emit the module so call sites do not cascade errors.
pub struct LibraryParseFailure {
    pub errors: syn::Error,
    pub module: Option<Box<ModuleShell>>,
    pub functions: Vec<(FunctionSignature, Option<Type>)>,
}

const LIBRARY_FORM: &str = "expected `#[redis_library(path = \"lua/library.lua\")]` on a module, optionally with `target = \"redis-7.2\"` and `allow(finding, …)`";

/// The attribute that declares one function inside the module.
const FUNCTION_ATTRIBUTE: &str = "function";

impl LibraryDeclaration {
    pub fn parse(attribute: TokenStream, item: TokenStream) -> Result<Self, LibraryParseFailure> {
        let mut errors = Errors::default();
        let library_options = parse_library_options(attribute, &mut errors);
        let mut module = None;
        let mut functions = Vec::new();
        let mut fallbacks = Vec::new();
        match syn::parse2::<syn::ItemMod>(item) {
            Ok(item) => {
                let (shell, declared) = split_module(item, &mut errors);
                module = shell;
                if let Some((path, _, _)) = &library_options {
                    for (function, attribute) in declared {
                        match Declaration::parse_as(
                            Form::Function { library_path: path },
                            attribute,
                            quote::quote!(#function),
                        ) {
                            Ok(declaration) => functions.push(declaration),
                            Err(failure) => {
                                errors.push(failure.errors);
                                if let Some(signature) = failure.signature {
                                    fallbacks.push((*signature, None));
                                }
                            }
                        }
                    }
                }
            }
            Err(error) => errors.push(syn::Error::new(
                error.span(),
                format!("#[redis_library] applies to a module: `mod name {{ #[function(keys = 1)] async fn …; }}` ({error})"),
            )),
        }
        match (errors.finish(), library_options, module) {
            (Ok(()), Some((path, target, allow)), Some(module)) => Ok(Self {
                path,
                target,
                allow,
                module,
                functions,
            }),
            (result, _, module) => {
                fallbacks.extend(
                    functions
                        .into_iter()
                        .map(|declaration| (declaration.signature, declaration.options.errors)),
                );
                Err(LibraryParseFailure {
                    errors: result.err().unwrap_or_else(|| {
                        syn::Error::new(Span::call_site(), "invalid #[redis_library] declaration")
                    }),
                    module: module.map(Box::new),
                    functions: fallbacks,
                })
            }
        }
    }
}

/// `path` and `target` of `#[redis_library(…)]`.
fn parse_library_options(
    attribute: TokenStream,
    errors: &mut Errors,
) -> Option<(LitStr, Option<LitStr>, Vec<String>)> {
    let mut path: Option<LitStr> = None;
    let mut target: Option<LitStr> = None;
    let mut allow: Option<Vec<String>> = None;
    let attribute_span = attribute.span();
    let parser = syn::meta::parser(|meta| {
        let name = path_text(&meta.path);
        let slot = match name.as_str() {
            "path" => &mut path,
            "target" => &mut target,
            "allow" => {
                let names = parse_allow(&meta, errors)?;
                if allow.is_some() {
                    errors.push(syn::Error::new(
                        meta.path.span(),
                        "duplicate `allow` argument: give it once",
                    ));
                } else {
                    allow = Some(names);
                }
                return Ok(());
            }
            "keys" | "returns" | "errors" | "allow_unused" | "dynamic_keys" | "name" => {
                errors.push(syn::Error::new(
                    meta.path.span(),
                    format!("`{name}` belongs to each function: write it in `#[function({name} …)]` on the function's signature inside the module"),
                ));
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                return Ok(());
            }
            _ => {
                let message = match redis_script_analysis::suggest::closest(
                    &name,
                    ["path", "target", "allow"],
                ) {
                    Some(near) => format!("unknown argument `{name}`: did you mean `{near}`?"),
                    None => format!("unknown argument `{name}`; {LIBRARY_FORM}"),
                };
                errors.push(syn::Error::new(meta.path.span(), message));
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                return Ok(());
            }
        };
        let literal: LitStr = meta.value()?.parse()?;
        if slot.is_some() {
            errors.push(syn::Error::new(
                meta.path.span(),
                format!("duplicate `{name}` argument: give it once"),
            ));
        } else if name == "path" && literal.value().is_empty() {
            errors.push(syn::Error::new(
                literal.span(),
                "`path` is empty: name the library's .lua file, e.g. `path = \"lua/quota_lib.lua\"`",
            ));
        } else {
            *slot = Some(literal);
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(attribute) {
        errors.push(error);
        return None;
    }
    let Some(path) = path else {
        errors.push(syn::Error::new(
            attribute_span,
            format!("missing `path`: name the library's Lua file; {LIBRARY_FORM}"),
        ));
        return None;
    };
    Some((path, target, allow.unwrap_or_default()))
}

/// The module's own items, and each `#[function(…)]` signature with the
/// attribute's arguments.
fn split_module(
    module: syn::ItemMod,
    errors: &mut Errors,
) -> (Option<ModuleShell>, Vec<(syn::ForeignItemFn, TokenStream)>) {
    let syn::ItemMod {
        attrs,
        vis,
        ident,
        content,
        unsafety,
        ..
    } = module;
    if let Some(unsafety) = unsafety {
        errors.push(syn::Error::new(
            unsafety.span(),
            "a library module cannot be `unsafe`",
        ));
    }
    let Some((_, items)) = content else {
        errors.push(syn::Error::new(
            ident.span(),
            format!("#[redis_library] needs the module's content here: `mod {ident} {{ #[function(keys = 1)] async fn …; }}`"),
        ));
        return (None, Vec::new());
    };
    let mut kept = Vec::new();
    let mut functions = Vec::new();
    for item in items {
        match item {
            syn::Item::Verbatim(tokens) => match syn::parse2::<syn::ForeignItemFn>(tokens.clone()) {
                Ok(mut function) => match take_function_attribute(&mut function.attrs) {
                    Some(arguments) => functions.push((function, arguments)),
                    None => errors.push(syn::Error::new(
                        function.sig.ident.span(),
                        format!(
                            "add `#[function(keys = N)]` to `{}`: each bodyless function of a #[redis_library] module declares one function the library registers",
                            function.sig.ident
                        ),
                    )),
                },
                Err(_) => kept.push(syn::Item::Verbatim(tokens)),
            },
            syn::Item::Fn(mut function) => {
                if take_function_attribute(&mut function.attrs).is_some() {
                    errors.push(syn::Error::new(
                        function.block.span(),
                        "remove the function body: #[redis_library] generates it; end the signature with `;`",
                    ));
                }
                kept.push(syn::Item::Fn(function));
            }
            other => kept.push(other),
        }
    }
    let shell = ModuleShell {
        attrs,
        vis,
        ident,
        items: kept,
    };
    (Some(shell), functions)
}

/// Removes `#[function(…)]` and returns its arguments.
fn take_function_attribute(attrs: &mut Vec<Attribute>) -> Option<TokenStream> {
    let position = attrs
        .iter()
        .position(|attr| attr.path().is_ident(FUNCTION_ATTRIBUTE))?;
    let attribute = attrs.remove(position);
    Some(match attribute.meta {
        syn::Meta::List(list) => list.tokens,
        _ => TokenStream::new(),
    })
}
