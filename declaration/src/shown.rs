//! Rust types and signatures as a reader writes them (`&[&str]`,
//! `Option<Vec<u8>>`, `async fn f(key: &str) -> i64`), for messages and
//! hovers. Tokens printed as they come read `& [& str]`; this prints each
//! kind of type by its own rule, the way rustfmt lays it out.

use quote::ToTokens;

/// `ty` as a reader writes it.
///
/// ```
/// let ty: syn::Type = syn::parse_quote!(Option<&'a [ Vec < u8 > ]>);
/// assert_eq!(redis_script_declaration::shown::type_text(&ty), "Option<&'a [Vec<u8>]>");
/// ```
pub fn type_text(ty: &syn::Type) -> String {
    let mut text = String::new();
    write_type(&mut text, ty);
    text
}

fn write_type(text: &mut String, ty: &syn::Type) {
    match ty {
        syn::Type::Path(path) => {
            if let Some(qself) = &path.qself {
                text.push('<');
                write_type(text, &qself.ty);
                text.push('>');
            }
            write_path(text, &path.path);
        }
        syn::Type::Reference(reference) => {
            text.push('&');
            if let Some(lifetime) = &reference.lifetime {
                text.push_str(&format!("'{} ", lifetime.ident));
            }
            if reference.mutability.is_some() {
                text.push_str("mut ");
            }
            write_type(text, &reference.elem);
        }
        syn::Type::Slice(slice) => {
            text.push('[');
            write_type(text, &slice.elem);
            text.push(']');
        }
        syn::Type::Array(array) => {
            text.push('[');
            write_type(text, &array.elem);
            text.push_str("; ");
            text.push_str(&tokens_text(&array.len));
            text.push(']');
        }
        syn::Type::Tuple(tuple) => {
            text.push('(');
            write_list(text, tuple.elems.iter());
            if tuple.elems.len() == 1 {
                text.push(',');
            }
            text.push(')');
        }
        syn::Type::Ptr(pointer) => {
            text.push_str(if pointer.mutability.is_some() {
                "*mut "
            } else {
                "*const "
            });
            write_type(text, &pointer.elem);
        }
        syn::Type::Paren(paren) => {
            text.push('(');
            write_type(text, &paren.elem);
            text.push(')');
        }
        syn::Type::Group(group) => write_type(text, &group.elem),
        syn::Type::ImplTrait(bounds) => {
            text.push_str("impl ");
            write_bounds(text, bounds.bounds.iter());
        }
        syn::Type::TraitObject(bounds) => {
            text.push_str("dyn ");
            write_bounds(text, bounds.bounds.iter());
        }
        syn::Type::Never(_) => text.push('!'),
        syn::Type::Infer(_) => text.push('_'),
        other => text.push_str(&tokens_text(other)),
    }
}

fn write_list<'t>(text: &mut String, types: impl Iterator<Item = &'t syn::Type>) {
    for (index, ty) in types.enumerate() {
        if index > 0 {
            text.push_str(", ");
        }
        write_type(text, ty);
    }
}

fn write_path(text: &mut String, path: &syn::Path) {
    if path.leading_colon.is_some() {
        text.push_str("::");
    }
    for (index, segment) in path.segments.iter().enumerate() {
        if index > 0 {
            text.push_str("::");
        }
        text.push_str(&segment.ident.to_string());
        match &segment.arguments {
            syn::PathArguments::None => {}
            syn::PathArguments::AngleBracketed(arguments) => {
                text.push('<');
                for (index, argument) in arguments.args.iter().enumerate() {
                    if index > 0 {
                        text.push_str(", ");
                    }
                    write_generic_argument(text, argument);
                }
                text.push('>');
            }
            syn::PathArguments::Parenthesized(arguments) => {
                text.push('(');
                write_list(text, arguments.inputs.iter());
                text.push(')');
                if let syn::ReturnType::Type(_, output) = &arguments.output {
                    text.push_str(" -> ");
                    write_type(text, output);
                }
            }
        }
    }
}

fn write_generic_argument(text: &mut String, argument: &syn::GenericArgument) {
    match argument {
        syn::GenericArgument::Lifetime(lifetime) => {
            text.push_str(&format!("'{}", lifetime.ident));
        }
        syn::GenericArgument::Type(ty) => write_type(text, ty),
        syn::GenericArgument::AssocType(assoc) => {
            text.push_str(&assoc.ident.to_string());
            text.push_str(" = ");
            write_type(text, &assoc.ty);
        }
        other => text.push_str(&tokens_text(other)),
    }
}

fn write_bounds<'b>(text: &mut String, bounds: impl Iterator<Item = &'b syn::TypeParamBound>) {
    for (index, bound) in bounds.enumerate() {
        if index > 0 {
            text.push_str(" + ");
        }
        match bound {
            syn::TypeParamBound::Trait(bound) => write_path(text, &bound.path),
            syn::TypeParamBound::Lifetime(lifetime) => {
                text.push_str(&format!("'{}", lifetime.ident));
            }
            other => text.push_str(&tokens_text(other)),
        }
    }
}

/// What has no rule of its own (an array's length, a macro type): its
/// tokens, spaced as they print.
fn tokens_text(tokens: &impl ToTokens) -> String {
    tokens.to_token_stream().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(ty: syn::Type) -> String {
        type_text(&ty)
    }

    #[test]
    fn types_read_as_written() {
        assert_eq!(shown(syn::parse_quote!(&str)), "&str");
        assert_eq!(shown(syn::parse_quote!(&[&str])), "&[&str]");
        assert_eq!(shown(syn::parse_quote!(&'a mut Vec<u8>)), "&'a mut Vec<u8>");
        assert_eq!(
            shown(syn::parse_quote!(std::collections::HashMap<String, Option<i64>>)),
            "std::collections::HashMap<String, Option<i64>>"
        );
        assert_eq!(shown(syn::parse_quote!([u8; 16])), "[u8; 16]");
        assert_eq!(shown(syn::parse_quote!((i64, String))), "(i64, String)");
        assert_eq!(shown(syn::parse_quote!((i64,))), "(i64,)");
        assert_eq!(shown(syn::parse_quote!(())), "()");
        assert_eq!(
            shown(syn::parse_quote!(redis_script::Json<Order>)),
            "redis_script::Json<Order>"
        );
        assert_eq!(
            shown(syn::parse_quote!(impl Iterator<Item = &'a str> + Send)),
            "impl Iterator<Item = &'a str> + Send"
        );
        assert_eq!(
            shown(syn::parse_quote!(Box<dyn Fn(u8) -> bool>)),
            "Box<dyn Fn(u8) -> bool>"
        );
    }
}
