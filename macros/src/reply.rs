//! `#[derive(ScriptReply)]`: decoding a script's reply into a struct or an
//! enum, and the reply's shape as a constant for compile-time checks.
//!
//! Structs (named or tuple) decode positionally from an array reply;
//! enums decode from a tagged array (`{'DENIED', count, retry_ms}`) or, for
//! variants without required fields, from a bare string or status reply.
//! Trailing `Option` fields may be absent because Lua arrays stop at the
//! first `nil`.
//!
//! Phases as in the attribute: [`Input::parse`] reads and checks the item,
//! accumulating every error; [`Input::generate`] emits the impls. On error
//! the derive still emits impls that fail at run time, so uses of the type
//! do not pile up follow-on errors.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, Data, DeriveInput, Fields, Generics, Ident, LitStr, Member, Type};

use crate::errors::Errors;

/// The derive's entry point.
pub fn derive(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::default();
    let parsed = Input::parse(&input, &mut errors);
    match (errors.into_tokens(), parsed) {
        (None, Some(parsed)) => parsed.generate(),
        (errors, _) => {
            let fallback = fallback(&input);
            quote! { #errors #fallback }
        }
    }
}

/// `TooMany` → `TOO_MANY`, `HTTPError` → `HTTP_ERROR`, `V2` → `V2`.
pub fn screaming_snake_case(ident: &Ident) -> String {
    let name = ident.unraw().to_string();
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (index, &current) in chars.iter().enumerate() {
        if current.is_uppercase() && index > 0 {
            let previous = chars.get(index - 1).copied().unwrap_or('_');
            let next = chars.get(index + 1).copied();
            let boundary = previous.is_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_uppercase() && next.is_some_and(char::is_lowercase));
            if boundary && previous != '_' {
                out.push('_');
            }
        }
        out.extend(current.to_uppercase());
    }
    out
}

/// Whether `ty` is spelled `Option<…>` (also `std::option::Option<…>`).
/// Type aliases of `Option` are not recognised.
pub fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().is_some_and(|segment| {
                segment.ident == "Option"
                    && matches!(segment.arguments, syn::PathArguments::AngleBracketed(_))
            })
        }
        Type::Group(group) => is_option(&group.elem),
        Type::Paren(paren) => is_option(&paren.elem),
        _ => false,
    }
}

/// `i64`, `u32`, `usize`…, or `Option` of one.
fn is_integer(ty: &Type) -> bool {
    const INTEGERS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let Some(segment) = path.path.segments.last() else {
                return false;
            };
            if segment.ident == "Option" {
                if let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments {
                    return arguments.args.iter().any(|argument| {
                        matches!(argument, syn::GenericArgument::Type(inner) if is_integer(inner))
                    });
                }
                return false;
            }
            path.path.segments.len() == 1 && INTEGERS.iter().any(|name| segment.ident == name)
        }
        Type::Group(group) => is_integer(&group.elem),
        Type::Paren(paren) => is_integer(&paren.elem),
        _ => false,
    }
}

/// A type as a user wrote it, for messages: `Option<Vec<u8>>`.
fn type_text(ty: &Type) -> String {
    const TIGHT: &[char] = &['<', '>', ':', '(', ')', '[', ']', '&', ',', ';'];
    let raw = ty.to_token_stream().to_string();
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::with_capacity(raw.len());
    for (index, &current) in chars.iter().enumerate() {
        if current == ' ' {
            let previous = out.chars().last();
            let next = chars.get(index + 1).copied();
            let tight = previous.is_some_and(|c| c == ' ' || TIGHT.contains(&c))
                || next.is_some_and(|c| TIGHT.contains(&c));
            if tight {
                continue;
            }
        }
        out.push(current);
        if current == ',' || current == ';' {
            out.push(' ');
        }
    }
    out
}

/// The parsed derive input.
struct Input<'a> {
    ident: &'a Ident,
    generics: &'a Generics,
    body: Body<'a>,
}

enum Body<'a> {
    Struct(Positional<'a>),
    Enum(Vec<Variant<'a>>),
}

/// The fields of a struct or variant, decoded in order from array elements.
struct Positional<'a> {
    /// `Name {a, b}`, `Name(u64, String)` or `Name`, for messages.
    expected: String,
    fields: Vec<Field<'a>>,
    style: Style,
    /// Elements required (fields before the first `Option`).
    min: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Named,
    Tuple,
    Unit,
}

struct Field<'a> {
    member: Member,
    /// The field name, or its type for a tuple field, for messages.
    label: String,
    ty: &'a Type,
}

impl Field<'_> {
    /// Decodes this field, or reports in the library's words, on the
    /// field's type, that the type cannot be decoded (see the runtime's
    /// `checked` module).
    fn decoder(&self) -> TokenStream {
        let private = crate::private();
        let ty = self.ty;
        quote_spanned! {ty.span()=>
            #private::Probe::<#ty>::new().checked()
        }
    }
}

struct Variant<'a> {
    ident: &'a Ident,
    tag: String,
    /// The tag literal, or the variant name when the tag is derived from it.
    tag_span: proc_macro2::Span,
    fields: Positional<'a>,
}

const REPLY_FORM: &str = "`#[reply(tag = \"TAG\")]`";

impl<'a> Input<'a> {
    fn parse(input: &'a DeriveInput, errors: &mut Errors) -> Option<Self> {
        check_generics(&input.generics, errors);
        no_reply_attributes(
            &input.attrs,
            "on the type: the only option is `tag`, on enum variants",
            errors,
        );
        let name = input.ident.unraw().to_string();
        let body = match &input.data {
            Data::Struct(data) => {
                let fields = positional(&name, &data.fields, errors)?;
                if fields.style == Style::Unit {
                    errors.push(syn::Error::new(
                        input.ident.span(),
                        format!(
                            "`{name}` has no fields, so there is nothing to decode; derive `ScriptReply` on a struct with fields (one per array element) or on an enum, or declare the script's reply as `()`"
                        ),
                    ));
                    return None;
                }
                Body::Struct(fields)
            }
            Data::Enum(data) => {
                if data.variants.is_empty() {
                    errors.push(syn::Error::new(
                        input.ident.span(),
                        format!("`{name}` has no variants, so no reply can decode into it; add one variant per tag the script returns"),
                    ));
                    return None;
                }
                let variants: Vec<Variant<'_>> = data
                    .variants
                    .iter()
                    .filter_map(|variant| {
                        let tag = variant_tag(variant, errors);
                        let label = format!("{name}::{}", variant.ident.unraw());
                        let fields = positional(&label, &variant.fields, errors)?;
                        let (tag, tag_span) = tag?;
                        Some(Variant {
                            ident: &variant.ident,
                            tag,
                            tag_span,
                            fields,
                        })
                    })
                    .collect();
                check_duplicate_tags(&variants, errors);
                Body::Enum(variants)
            }
            Data::Union(data) => {
                errors.push(syn::Error::new(
                    data.union_token.span(),
                    "`ScriptReply` cannot be derived for a union: a reply decodes into a struct (positional array elements) or an enum (tagged arrays)",
                ));
                return None;
            }
        };
        Some(Self {
            ident: &input.ident,
            generics: &input.generics,
            body,
        })
    }

    fn generate(&self) -> TokenStream {
        let ident = self.ident;
        let name = ident.unraw().to_string();
        let (impl_generics, type_generics, where_clause) = self.generics.split_for_impl();
        let mut decode_where = self
            .generics
            .where_clause
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(where));
        let private = crate::private();
        for param in self.generics.type_params() {
            let param = &param.ident;
            decode_where
                .predicates
                .push(syn::parse_quote!(#param: #private::redis::FromRedisValue));
        }
        let integer_elements: Vec<TokenStream> = match &self.body {
            Body::Struct(fields) => fields
                .integer_indices()
                .map(|index| quote!(("", #index)))
                .collect(),
            Body::Enum(variants) => variants
                .iter()
                .flat_map(|variant| {
                    let tag = &variant.tag;
                    variant
                        .fields
                        .integer_indices()
                        .map(move |index| quote!((#tag, #index)))
                })
                .collect(),
        };
        let (by_ref, by_value, shape) = match &self.body {
            Body::Struct(fields) => {
                let (expected, min, max) = (&fields.expected, fields.min, fields.fields.len());
                let by_ref = fields.construct(quote!(Self), |field, index| {
                    let (position, label) = (index + 1, &field.label);
                    let decoder = field.decoder();
                    quote! {
                        #decoder.element(__items, #index, #position, #expected, #label)?
                    }
                });
                let by_value = fields.construct(quote!(Self), |field, index| {
                    let (position, label) = (index + 1, &field.label);
                    let decoder = field.decoder();
                    quote! {
                        #decoder.next(&mut __items, #position, #expected, #label)?
                    }
                });
                (
                    quote! {
                        let __items = #private::reply_array(__value, #expected, #min, #max)?;
                        ::core::result::Result::Ok(#by_ref)
                    },
                    quote! {
                        let mut __items = #private::reply_array_owned(__value, #expected, #min, #max)?;
                        ::core::result::Result::Ok(#by_value)
                    },
                    quote! {
                        #private::array_shape(#name, #min, #max)
                    },
                )
            }
            Body::Enum(variants) => {
                let tags = variants.iter().map(|variant| &variant.tag);
                let tags = quote!(&[#(#tags),*]);
                let arms_by_ref = variants.iter().enumerate().map(|(index, variant)| {
                    let fields = &variant.fields;
                    let (expected, min, max) = (&fields.expected, fields.min, fields.fields.len());
                    let variant_ident = variant.ident;
                    let construct =
                        fields.construct(quote!(Self::#variant_ident), |field, index| {
                            let (position, label) = (index + 2, &field.label);
                            let decoder = field.decoder();
                            quote! {
                                #decoder.element(__items, #index, #position, #expected, #label)?
                            }
                        });
                    quote! {
                        #index => {
                            #[allow(unused_variables)]
                            let __items = __tag.fields(#expected, #min, #max)?;
                            ::core::result::Result::Ok(#construct)
                        }
                    }
                });
                let arms_by_value = variants.iter().enumerate().map(|(index, variant)| {
                    let fields = &variant.fields;
                    let (expected, min, max) = (&fields.expected, fields.min, fields.fields.len());
                    let variant_ident = variant.ident;
                    let construct =
                        fields.construct(quote!(Self::#variant_ident), |field, index| {
                            let (position, label) = (index + 2, &field.label);
                            let decoder = field.decoder();
                            quote! {
                                #decoder.next(&mut __items, #position, #expected, #label)?
                            }
                        });
                    quote! {
                        #index => {
                            #[allow(unused_variables, unused_mut)]
                            let mut __items = __tag.fields(#expected, #min, #max)?;
                            ::core::result::Result::Ok(#construct)
                        }
                    }
                });
                let shapes = variants.iter().map(|variant| {
                    let fields = &variant.fields;
                    let variant_name = variant.ident.unraw().to_string();
                    let (tag, min, max) = (&variant.tag, fields.min, fields.fields.len());
                    let unit = fields.fields.is_empty();
                    quote! {
                        #private::variant(#variant_name, #tag, #min, #max, #unit)
                    }
                });
                let unknown = quote! {
                    _ => ::core::result::Result::Err(
                        #private::redis::ParsingError::from("unknown variant index"),
                    ),
                };
                (
                    quote! {
                        let __tag = #private::reply_tag(__value, #name, #tags)?;
                        match __tag.variant {
                            #(#arms_by_ref)*
                            #unknown
                        }
                    },
                    quote! {
                        let __tag = #private::reply_tag_owned(__value, #name, #tags)?;
                        match __tag.variant {
                            #(#arms_by_value)*
                            #unknown
                        }
                    },
                    quote! {
                        #private::tagged_shape(#name, &[#(#shapes),*])
                    },
                )
            }
        };
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::redis::FromRedisValue for #ident #type_generics #decode_where {
                fn from_redis_value_ref(
                    __value: &#private::redis::Value,
                ) -> ::core::result::Result<Self, #private::redis::ParsingError> {
                    use #private::{Decodable as _, Undecodable as _};
                    #by_ref
                }

                fn from_redis_value(
                    __value: #private::redis::Value,
                ) -> ::core::result::Result<Self, #private::redis::ParsingError> {
                    use #private::{Decodable as _, Undecodable as _};
                    #by_value
                }
            }

            #[automatically_derived]
            impl #impl_generics #private::ReplyShape for #ident #type_generics #where_clause {
                const SHAPE: #private::Shape = #shape;
                const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = &[#(#integer_elements),*];
            }
        }
    }
}

impl Positional<'_> {
    /// Indices of the fields whose type is a Rust integer (or an `Option`
    /// of one), read from how the type is spelled.
    fn integer_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.fields
            .iter()
            .enumerate()
            .filter(|(_, field)| is_integer(field.ty))
            .map(|(index, _)| index)
    }

    /// `path { a: expr, b: expr }`, `path(expr, expr)` or `path`, with one
    /// expression per field from `element(field, index)`.
    fn construct(
        &self,
        path: TokenStream,
        element: impl Fn(&Field<'_>, usize) -> TokenStream,
    ) -> TokenStream {
        let values = self
            .fields
            .iter()
            .enumerate()
            .map(|(index, field)| element(field, index));
        match self.style {
            Style::Unit => path,
            Style::Tuple => quote!(#path(#(#values),*)),
            Style::Named => {
                let members = self.fields.iter().map(|field| &field.member);
                quote!(#path { #(#members: #values),* })
            }
        }
    }
}

/// The fields of a struct or variant, checking that only trailing ones are
/// `Option`s and that they carry no `#[reply]` attribute.
fn positional<'a>(label: &str, fields: &'a Fields, errors: &mut Errors) -> Option<Positional<'a>> {
    let style = match fields {
        Fields::Named(_) => Style::Named,
        Fields::Unnamed(_) => Style::Tuple,
        Fields::Unit => Style::Unit,
    };
    let mut parsed = Vec::new();
    let mut first_optional: Option<String> = None;
    let mut min = 0;
    let mut valid = true;
    for (index, field) in fields.iter().enumerate() {
        no_reply_attributes(
            &field.attrs,
            "on a field: fields decode with their own type's `FromRedisValue`",
            errors,
        );
        let label = match &field.ident {
            Some(ident) => ident.unraw().to_string(),
            None => type_text(&field.ty),
        };
        let shown = match &field.ident {
            Some(_) => format!("`{label}`"),
            None => format!("field {index} (`{label}`)"),
        };
        if is_option(&field.ty) {
            first_optional.get_or_insert(shown);
        } else if let Some(optional) = &first_optional {
            errors.push(syn::Error::new(
                field.ty.span(),
                format!(
                    "{shown} is required but follows the optional {optional}: a Lua array ends at its first nil, so only trailing fields can be absent; make {shown} an `Option` too, or move it before {optional}"
                ),
            ));
            valid = false;
        } else {
            min += 1;
        }
        let member = match &field.ident {
            Some(ident) => Member::Named(ident.clone()),
            None => Member::Unnamed(syn::Index {
                index: u32::try_from(index).unwrap_or(u32::MAX),
                span: field.span(),
            }),
        };
        parsed.push(Field {
            member,
            label,
            ty: &field.ty,
        });
    }
    let expected = match style {
        Style::Named => {
            let names: Vec<&str> = parsed.iter().map(|field| field.label.as_str()).collect();
            format!("{label} {{{}}}", names.join(", "))
        }
        Style::Tuple => {
            let types: Vec<String> = parsed.iter().map(|field| type_text(field.ty)).collect();
            format!("{label}({})", types.join(", "))
        }
        Style::Unit => label.to_owned(),
    };
    valid.then_some(Positional {
        expected,
        fields: parsed,
        style,
        min,
    })
}

/// A variant's tag: `#[reply(tag = "...")]`, or its name in
/// SCREAMING_SNAKE_CASE.
fn variant_tag(variant: &syn::Variant, errors: &mut Errors) -> Option<(String, proc_macro2::Span)> {
    let mut tag: Option<LitStr> = None;
    let mut valid = true;
    for attribute in variant
        .attrs
        .iter()
        .filter(|attribute| attribute.path().is_ident("reply"))
    {
        let result = attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("tag") {
                let value = meta.value().map_err(|_| {
                    meta.error(format!("`tag` needs a value: {REPLY_FORM}"))
                })?;
                let literal: LitStr = value.parse().map_err(|error| {
                    syn::Error::new(error.span(), format!("the tag must be a string literal: {REPLY_FORM}"))
                })?;
                if tag.is_some() {
                    return Err(meta.error("duplicate `tag`: give a variant one tag"));
                }
                if literal.value().is_empty() {
                    return Err(syn::Error::new(
                        literal.span(),
                        "the tag is empty: give the string the script puts first in the array, e.g. `tag = \"DENIED\"`",
                    ));
                }
                tag = Some(literal);
                Ok(())
            } else {
                let name = meta
                    .path
                    .get_ident()
                    .map(Ident::to_string)
                    .unwrap_or_else(|| meta.path.to_token_stream().to_string());
                let hint = if close_to(&name, "tag") {
                    " (did you mean `tag`?)"
                } else {
                    ""
                };
                Err(meta.error(format!(
                    "unknown `#[reply]` argument `{name}`{hint}: the only one is `tag`, as in {REPLY_FORM}"
                )))
            }
        });
        if let Err(error) = result {
            errors.push(error);
            valid = false;
        }
    }
    let tag = match tag {
        Some(literal) => (literal.value(), literal.span()),
        None => (screaming_snake_case(&variant.ident), variant.ident.span()),
    };
    valid.then_some(tag)
}

/// Whether `word` is a likely typo of `target`: the same in another case,
/// or one insertion, deletion, substitution or transposition away.
pub fn close_to(word: &str, target: &str) -> bool {
    let word: Vec<char> = word.to_lowercase().chars().collect();
    let target: Vec<char> = target.to_lowercase().chars().collect();
    if word.len().abs_diff(target.len()) > 1 {
        return false;
    }
    let same_until = word.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let (word, target) = (&word[same_until..], &target[same_until..]);
    match (word, target) {
        ([], []) => true,
        ([_, w @ ..], [_, t @ ..]) if w == t => true,
        ([a, b, w @ ..], [c, d, t @ ..]) if a == d && b == c && w == t => true,
        ([_, w @ ..], t) if w == t => true,
        (w, [_, t @ ..]) if w == t => true,
        _ => false,
    }
}

/// Reports every `#[reply]` attribute in a place that takes none.
fn no_reply_attributes(attributes: &[Attribute], place: &str, errors: &mut Errors) {
    for attribute in attributes
        .iter()
        .filter(|attribute| attribute.path().is_ident("reply"))
    {
        errors.push(syn::Error::new_spanned(
            attribute,
            format!("`#[reply]` has no options {place}"),
        ));
    }
}

fn check_generics(generics: &Generics, errors: &mut Errors) {
    for lifetime in generics.lifetimes() {
        errors.push(syn::Error::new(
            lifetime.lifetime.span(),
            "a decoded reply owns its data, so `ScriptReply` cannot be derived for a type with lifetime parameters; use owned fields (`String`, `Vec<u8>`)",
        ));
    }
}

/// Rejects two variants with one tag: the second could never be decoded.
fn check_duplicate_tags(variants: &[Variant<'_>], errors: &mut Errors) {
    for (index, variant) in variants.iter().enumerate() {
        let Some(first) = variants
            .iter()
            .take(index)
            .find(|earlier| earlier.tag == variant.tag)
        else {
            continue;
        };
        errors.push(syn::Error::new(
            variant.tag_span,
            format!(
                "variants `{}` and `{}` both have the tag \"{}\", so `{}` could never be decoded; give one of them another `#[reply(tag = \"...\")]`",
                first.ident.unraw(),
                variant.ident.unraw(),
                variant.tag,
                variant.ident.unraw(),
            ),
        ));
    }
}

/// Impls that compile and fail at run time, emitted next to the errors.
fn fallback(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let private = crate::private();
    let message = format!("#[derive(ScriptReply)] on `{ident}` failed to compile");
    quote! {
        #[automatically_derived]
        impl #impl_generics #private::redis::FromRedisValue for #ident #type_generics #where_clause {
            fn from_redis_value(
                _: #private::redis::Value,
            ) -> ::core::result::Result<Self, #private::redis::ParsingError> {
                ::core::result::Result::Err(#private::redis::ParsingError::from(#message))
            }
        }

        #[automatically_derived]
        impl #impl_generics #private::ReplyShape for #ident #type_generics #where_clause {
            const SHAPE: #private::Shape = #private::Shape::Any;
        }
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::Span;

    use super::*;

    fn ident(name: &str) -> Ident {
        Ident::new(name, Span::call_site())
    }

    #[test]
    fn screaming_snake_case_of_variant_names() {
        for (name, expected) in [
            ("Allowed", "ALLOWED"),
            ("TooMany", "TOO_MANY"),
            ("HTTPError", "HTTP_ERROR"),
            ("NotFound2", "NOT_FOUND2"),
            ("V2Denied", "V2_DENIED"),
            ("A", "A"),
            ("ABC", "ABC"),
            ("Snake_Case", "SNAKE_CASE"),
        ] {
            assert_eq!(screaming_snake_case(&ident(name)), expected, "{name}");
        }
    }

    #[test]
    fn option_detection() {
        let ty: Type = syn::parse_quote!(Option<u64>);
        assert!(is_option(&ty));
        let ty: Type = syn::parse_quote!(std::option::Option<Vec<u8>>);
        assert!(is_option(&ty));
        let ty: Type = syn::parse_quote!(Vec<Option<u8>>);
        assert!(!is_option(&ty));
        let ty: Type = syn::parse_quote!(Option);
        assert!(!is_option(&ty));
    }

    #[test]
    fn types_print_compactly() {
        let ty: Type = syn::parse_quote!(Option<Vec<(u8, String)>>);
        assert_eq!(type_text(&ty), "Option<Vec<(u8, String)>>");
        let ty: Type = syn::parse_quote!(std::collections::HashMap<String, [u8; 4]>);
        assert_eq!(type_text(&ty), "std::collections::HashMap<String, [u8; 4]>");
        let ty: Type = syn::parse_quote!(Box<dyn Send>);
        assert_eq!(type_text(&ty), "Box<dyn Send>");
    }

    #[test]
    fn typos() {
        assert!(close_to("tga", "tag"));
        assert!(close_to("tags", "tag"));
        assert!(close_to("TAG", "tag"));
        assert!(!close_to("rename", "tag"));
    }
}
