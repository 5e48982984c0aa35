//! Phase 1: the attribute arguments ([`options`]), the function signature
//! ([`signature`]) and a library module ([`library`]).

mod attr;
mod library;
mod options;
mod signature;
#[cfg(test)]
mod tests;

use proc_macro2::{Span, TokenStream};
use syn::LitStr;
use syn::spanned::Spanned as _;

use crate::errors::Errors;
pub use library::{LibraryDeclaration, LibraryParseFailure, ModuleShell};
use options::parse_options;
pub use options::{Options, ReadFrom};
use signature::parse_signature;
pub use signature::{FunctionSignature, Param};

/// Everything the macro needs from `#[redis_script(...)] async fn ...;`.
#[derive(Debug)]
pub struct Declaration {
    pub options: Options,
    pub signature: FunctionSignature,
}

/// Which attribute the arguments belong to.
#[derive(Debug, Clone, Copy)]
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

/// Parsing failed; the signature, when it could be read, still lets the
/// macro emit the declared function so call sites do not cascade errors.
#[derive(Debug)]
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

/// Every argument `#[redis_script]` takes.
const SCRIPT_ARGUMENTS: [&str; 10] = [
    "path",
    "keys",
    "returns",
    "errors",
    "target",
    "allow_unused",
    "dynamic_keys",
    "exactly_once",
    "read_from",
    "allow",
];

/// Every argument `#[function]` takes.
const FUNCTION_ARGUMENTS: [&str; 7] = [
    "keys",
    "name",
    "returns",
    "errors",
    "allow_unused",
    "dynamic_keys",
    "read_from",
];

const SCRIPT_FORM: &str = "expected `#[redis_script(path = \"lua/script.lua\", keys = N)]`, optionally with `returns = Type`, `errors = Type`, `target = \"redis-7.2\"`, `allow_unused`, `dynamic_keys`, `exactly_once`, `read_from = \"prefer_replica\"` and `allow(finding, …)`";

const FUNCTION_FORM: &str = "expected `#[function(keys = N)]`, optionally with `name = \"registered_name\"`, `returns = Type`, `errors = Type`, `allow_unused`, `dynamic_keys` and `read_from = \"prefer_replica\"`";

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

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// An argument the attribute does not take: reported with the known one it
/// is closest to (returned), or with the attribute's usage; its value is
/// skipped so that parsing goes on.
fn unknown_argument(
    meta: &syn::meta::ParseNestedMeta<'_>,
    known: &[&'static str],
    usage: &str,
    errors: &mut Errors,
) -> syn::Result<Option<&'static str>> {
    let text = path_text(&meta.path);
    let near = redis_script_analysis::suggest::closest(&text, known.iter().copied());
    let message = match near {
        Some(near) => format!("unknown argument `{text}`: did you mean `{near}`?"),
        None => format!("unknown argument `{text}`; {usage}"),
    };
    errors.push(syn::Error::new(meta.path.span(), message));
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    }
    Ok(near)
}
