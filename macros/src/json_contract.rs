//! What the script reads from its `Json<T>` arguments, checked against
//! `T` at compile time.
//!
//! The attribute sees `T`'s name only. For each path the script reads
//! from a decoded argument, and each use of a part, it emits a `const`
//! assertion that the compiler evaluates against the shape
//! `#[derive(JsonShape)]` publishes (`JsonShape::JSON`). A `T` without
//! that derive is not checked: the assertions find no shape and hold.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{GenericArgument, PathArguments, Type};

use redis_script_analysis::{self as lua, Diagnostic, JsonRead, JsonStep, JsonUse, LiteralKind};
use redis_script_declaration::FunctionSignature;

/// Where words known only to rustc go in a message: why `T` does not
/// allow the read.
const FILLED_IN: char = '\u{1}';

/// One assertion about one read of a `Json<T>` argument, or about the
/// table a reply declared `Json<T>` encodes.
pub struct JsonCheck {
    /// `T`.
    json_type: Type,
    kind: CheckKind,
    /// The rendered diagnostic, with [`FILLED_IN`] where the reason goes.
    message: String,
}

enum CheckKind {
    /// The path (a field name per step, `None` for an element) finds
    /// something.
    Path(Vec<Option<String>>),
    /// This use of the part at the path works.
    Use(Vec<Option<String>>, JsonUse),
    /// serde reads the encoded field `name`, of this kind.
    Field {
        name: String,
        kind: lua::EncodedKind,
    },
    /// The encoded table, with only these fields, has every field `T`
    /// requires.
    Missing(Vec<String>),
}

/// The checks for `reads`, for the `Json<T>` parameters of `signature`.
pub fn checks(
    reads: &[JsonRead],
    signature: &FunctionSignature,
    path: &str,
    source: &str,
) -> Vec<JsonCheck> {
    let mut checks = Vec::new();
    let mut paths_checked: Vec<(usize, &lua::JsonPath)> = Vec::new();
    for read in reads {
        let Some((param, json_type)) = json_parameter(signature, read.argument) else {
            continue;
        };
        let declared = type_text(&json_type);
        let shown = match read.used {
            JsonUse::TextAsNumber => format!("ARGV[{}]", read.argument),
            _ => format!("{param}{}", read.path),
        };
        let parameter = format!(
            "the argument `{param}: {}` (ARGV[{}])",
            declared, read.argument
        );
        let render = |message: String, help: &str| {
            Diagnostic::error(
                lua::Code::JsonArgument,
                read.line,
                read.column,
                read.width,
                message,
            )
            .with_help(help.to_owned())
            .render(path, source)
        };
        let steps: Vec<Option<String>> = read
            .path
            .0
            .iter()
            .map(|step| match step {
                JsonStep::Field(name) => Some(name.clone()),
                JsonStep::Element => None,
            })
            .collect();
        // The text itself: no path to find.
        let text_use = read.used == JsonUse::TextAsNumber;
        if !text_use && !paths_checked.contains(&(read.argument, &read.path)) {
            paths_checked.push((read.argument, &read.path));
            checks.push(JsonCheck {
                json_type: json_type.clone(),
                kind: CheckKind::Path(steps.clone()),
                message: render(
                    format!("the script reads `{shown}` from {parameter}, but {FILLED_IN}"),
                    "read what serde writes for the type (its field names after `rename` and `rename_all`), or change the type",
                ),
            });
        }
        let Some((verb, help)) = described(read.used) else {
            continue;
        };
        checks.push(JsonCheck {
            json_type,
            kind: CheckKind::Use(steps, read.used),
            message: render(
                match read.used {
                    JsonUse::TextAsNumber => format!(
                        "`{shown}`, the JSON text of the argument `{param}: {declared}`, {verb}, but {FILLED_IN}"
                    ),
                    _ => format!("`{shown}`, read from {parameter}, {verb}, but {FILLED_IN}"),
                },
                &help.replace("{part}", &shown),
            ),
        });
    }
    checks
}

/// How a message says `used` of a part, and its help (where `{part}`
/// stands for the part); `None` for a plain read, which the path check covers.
fn described(used: JsonUse) -> Option<(&'static str, &'static str)> {
    const NULL_HELP: &str = "compare with `cjson.null` (`{part} ~= cjson.null`), or add `#[serde(skip_serializing_if = \"Option::is_none\")]` to the field: serde then leaves `None` out, and the script reads nil";
    const OPERATION_HELP: &str =
        "use the part as the JSON type serde writes for it, or change its type in the Rust struct";
    const COMPARISON_HELP: &str = "compare with a literal of the part's JSON type (cjson decodes numbers as numbers and booleans as booleans), or convert it first (`tostring({part})`)";
    Some(match used {
        JsonUse::Read => return None,
        JsonUse::Indexed => ("is indexed", OPERATION_HELP),
        JsonUse::Arithmetic => ("is used in arithmetic", OPERATION_HELP),
        JsonUse::Concatenated => ("is concatenated", OPERATION_HELP),
        JsonUse::Ordered => ("is compared with `<` or `>`", OPERATION_HELP),
        JsonUse::Tested => ("is tested for truth", NULL_HELP),
        JsonUse::ComparedWith(LiteralKind::Nil) => ("is compared with nil", NULL_HELP),
        JsonUse::ComparedWith(LiteralKind::Boolean) => {
            ("is compared with a boolean", COMPARISON_HELP)
        }
        JsonUse::ComparedWith(LiteralKind::Number) => {
            ("is compared with a number", COMPARISON_HELP)
        }
        JsonUse::ComparedWith(LiteralKind::String) => {
            ("is compared with a string", COMPARISON_HELP)
        }
        JsonUse::ComparedWith(LiteralKind::JsonNull) => return None,
        JsonUse::TextAsNumber => (
            "is used as a number before it is decoded",
            "decode it first: `cjson.decode({part})`",
        ),
    })
}

/// The name of the parameter sent as `ARGV[argument]` and the `T` of its
/// `Json<T>` type, when it is one and no spread comes before it.
fn json_parameter(signature: &FunctionSignature, argument: usize) -> Option<(String, Type)> {
    let params = signature.arg_params();
    let index = argument.checked_sub(1)?;
    if params.iter().take(index).any(|param| param.variadic) {
        return None;
    }
    let param = params.get(index)?;
    Some((param.ident.to_string(), json_inner(&param.ty)?))
}

/// `T` of `Json<T>`, `&Json<T>`, `redis_script::Json<T>`.
fn json_inner(ty: &Type) -> Option<Type> {
    match ty {
        Type::Reference(reference) => json_inner(&reference.elem),
        Type::Paren(inner) => json_inner(&inner.elem),
        Type::Group(inner) => json_inner(&inner.elem),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            if last.ident != "Json" {
                return None;
            }
            let PathArguments::AngleBracketed(arguments) = &last.arguments else {
                return None;
            };
            match arguments.args.first()? {
                GenericArgument::Type(inner) if arguments.args.len() == 1 => Some(inner.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn type_text(ty: &Type) -> String {
    format!("Json<{}>", quote!(#ty).to_string().replace(' ', ""))
}

/// The checks of the tables the script encodes into a reply declared
/// `Json<T>` or `Option<Json<T>>`.
pub fn reply_checks(
    returns: &[lua::ReturnSite],
    reply: &Type,
    path: &str,
    source: &str,
) -> Vec<JsonCheck> {
    let Some(json_type) = option_inner(reply).and_then(json_inner) else {
        return Vec::new();
    };
    let declared = type_text(&json_type);
    let render = |line, column, width, message: String, help: &str| {
        Diagnostic::error(lua::Code::ReplyType, line, column, width, message)
            .with_help(help.to_owned())
            .render(path, source)
    };
    let mut checks = Vec::new();
    for site in returns {
        let Some(encoded) = &site.encoded else {
            continue;
        };
        for field in &encoded.fields {
            if field.kind == lua::EncodedKind::Unknown {
                continue;
            }
            checks.push(JsonCheck {
                json_type: json_type.clone(),
                kind: CheckKind::Field {
                    name: field.name.clone(),
                    kind: field.kind,
                },
                message: render(
                    field.line,
                    field.column,
                    field.width,
                    format!(
                        "the script encodes the field \"{}\" into the reply `{declared}`, but {FILLED_IN}",
                        field.name
                    ),
                    "write the value serde reads for the field (`tonumber(…)` for a number, `tostring(…)` for a string), or change the field's type",
                ),
            });
        }
        if encoded.complete {
            checks.push(JsonCheck {
                json_type: json_type.clone(),
                kind: CheckKind::Missing(
                    encoded.fields.iter().map(|field| field.name.clone()).collect(),
                ),
                message: render(
                    site.line,
                    site.column,
                    site.width,
                    format!("the script encodes a table into the reply `{declared}`, but {FILLED_IN}"),
                    "set each required field in the table the script encodes, or make it optional (`Option<…>`, `#[serde(default)]`)",
                ),
            });
        }
    }
    checks
}

/// `T` of `Option<T>`, or the type itself.
fn option_inner(ty: &Type) -> Option<&Type> {
    if let Type::Path(path) = ty
        && path.qself.is_none()
        && let Some(last) = path.path.segments.last()
        && last.ident == "Option"
        && let PathArguments::AngleBracketed(arguments) = &last.arguments
        && let Some(GenericArgument::Type(inner)) = arguments.args.first()
    {
        return Some(inner);
    }
    Some(ty)
}

/// The `const` items asserting `checks`.
pub fn assertions(checks: &[JsonCheck], span: Span) -> TokenStream {
    let private = crate::private();
    let asserts = checks.iter().map(|check| {
        let json_type = &check.json_type;
        let (before, after) = check
            .message
            .split_once(FILLED_IN)
            .unwrap_or((check.message.as_str(), ""));
        let steps = |path: &[Option<String>]| {
            let steps = path.iter().map(|step| match step {
                Some(name) => quote!(::core::option::Option::Some(#name)),
                None => quote!(::core::option::Option::None),
            });
            quote!(&[#(#steps),*])
        };
        let problem = match &check.kind {
            CheckKind::Path(path) => {
                let path = steps(path);
                quote! { #private::json_path_problem(shape, #path, #before, #after) }
            }
            CheckKind::Use(path, used) => {
                let path = steps(path);
                let used = syn::Ident::new(use_name(*used), span);
                quote! { #private::json_use_problem(shape, #path, #private::JsonUse::#used, #before, #after) }
            }
            CheckKind::Field { name, kind } => {
                let kind = syn::Ident::new(&format!("{kind:?}"), span);
                quote! { #private::json_field_problem(shape, #name, #private::EncodedKind::#kind, #before, #after) }
            }
            CheckKind::Missing(present) => {
                quote! { #private::json_missing_fields(shape, &[#(#present),*], #before, #after) }
            }
        };
        quote_spanned! {span=>
            const _: () = {
                use #private::NoJsonShape as _;
                // Nested rather than chained: the caller's crate may be of
                // an edition without `let` chains.
                if let ::core::option::Option::Some(shape) = #private::JsonProbe::<#json_type>::SHAPE {
                    if let ::core::option::Option::Some(problem) = #problem {
                        ::core::panic!("{}", problem.as_str());
                    }
                }
            };
        }
    });
    quote! { #(#asserts)* }
}

/// The runtime's name for `used`.
fn use_name(used: JsonUse) -> &'static str {
    match used {
        JsonUse::Read | JsonUse::Indexed => "Indexed",
        JsonUse::Arithmetic => "Arithmetic",
        JsonUse::Concatenated => "Concatenated",
        JsonUse::Ordered => "Ordered",
        JsonUse::Tested => "Tested",
        JsonUse::TextAsNumber => "TextAsNumber",
        JsonUse::ComparedWith(LiteralKind::Nil | LiteralKind::JsonNull) => "ComparedWithNil",
        JsonUse::ComparedWith(LiteralKind::Boolean) => "ComparedWithBoolean",
        JsonUse::ComparedWith(LiteralKind::Number) => "ComparedWithNumber",
        JsonUse::ComparedWith(LiteralKind::String) => "ComparedWithString",
    }
}
