//! `#[redis_library(…)] mod name { #[function(…)] async fn …; }`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, Ident, LitStr, Type, Visibility};

use super::attr::Attr;
use super::options::parse_allow;
use super::{Declaration, Form, FunctionSignature, path_text, unknown_argument};
use crate::errors::Errors;

/// Everything the macro needs from `#[redis_library(path = …)] mod name { … }`.
#[derive(Debug)]
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
#[derive(Debug)]
pub struct ModuleShell {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    /// Items other than the declared functions (`use`, types, …).
    pub items: Vec<syn::Item>,
}

/// Parsing the library failed; what could be read still lets the macro
/// emit the module so call sites do not cascade errors.
#[derive(Debug)]
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
    let mut path: Attr<LitStr> = Attr::argument("path");
    let mut target: Attr<LitStr> = Attr::argument("target");
    let mut allow: Attr<Vec<String>> = Attr::argument("allow");
    let attribute_span = attribute.span();
    let parser = syn::meta::parser(|meta| {
        let name = path_text(&meta.path);
        let at = meta.path.span();
        match name.as_str() {
            "path" => {
                let literal: LitStr = meta.value()?.parse()?;
                if !path.is_set() && literal.value().is_empty() {
                    errors.push(syn::Error::new(
                        literal.span(),
                        "`path` is empty: name the library's .lua file, e.g. `path = \"lua/quota_lib.lua\"`",
                    ));
                } else {
                    path.set(at, literal, errors);
                }
            }
            "target" => {
                let literal: LitStr = meta.value()?.parse()?;
                target.set(at, literal, errors);
            }
            "allow" => {
                let names = parse_allow(&meta, errors)?;
                allow.set(at, names, errors);
            }
            "keys" | "returns" | "errors" | "allow_unused" | "dynamic_keys" | "name" => {
                errors.push(syn::Error::new(
                    at,
                    format!("`{name}` belongs to each function: write it in `#[function({name} …)]` on the function's signature inside the module"),
                ));
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            _ => {
                unknown_argument(&meta, &["path", "target", "allow"], LIBRARY_FORM, errors)?;
            }
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(attribute) {
        errors.push(error);
        return None;
    }
    let Some(path) = path.get() else {
        errors.push(syn::Error::new(
            attribute_span,
            format!("missing `path`: name the library's Lua file; {LIBRARY_FORM}"),
        ));
        return None;
    };
    Some((path, target.get(), allow.get().unwrap_or_default()))
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
