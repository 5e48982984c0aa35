//! `#[derive(ScriptReply)]`: `redis::FromRedisValue` and the reply's shape.
//!
//! Structs (named or tuple) decode positionally from an array reply;
//! enums decode from a tagged array (`{'DENIED', count, retry_ms}`) or, for
//! variants without required fields, from a bare string or status reply.
//! Trailing `Option` fields may be absent because Lua arrays stop at the
//! first `nil`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use crate::derive::ast::{Container, Data, Field, Fields, Style};

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

/// The fields of a struct or variant as decoded in order from array
/// elements, after the tag for a variant.
struct Elements<'f, 'a> {
    fields: &'f Fields<'a>,
    /// `Name {a, b}`, `Name(u64, String)` or `Name`, for messages.
    expected: String,
    /// Array positions (from 1) before the first field's.
    offset: usize,
}

impl<'f, 'a> Elements<'f, 'a> {
    fn new(name: &str, fields: &'f Fields<'a>, offset: usize) -> Self {
        let labels: Vec<String> = fields.fields.iter().map(Field::label).collect();
        let expected = match fields.style {
            Style::Named => format!("{name} {{{}}}", labels.join(", ")),
            Style::Tuple => format!("{name}({})", labels.join(", ")),
            Style::Unit => name.to_owned(),
        };
        Self {
            fields,
            expected,
            offset,
        }
    }

    /// Indices of the fields `keep` selects (a Rust integer, a field that
    /// is not an `Option`, a scalar).
    fn indices<'s>(&'s self, keep: fn(&Field<'_>) -> bool) -> impl Iterator<Item = usize> + 's {
        self.fields
            .fields
            .iter()
            .enumerate()
            .filter(move |(_, field)| keep(field))
            .map(|(index, _)| index)
    }

    /// `(tag, index)` of the fields `keep` selects, for a `ReplyShape`
    /// element list.
    fn listed(&self, tag: &str, keep: fn(&Field<'_>) -> bool) -> Vec<TokenStream> {
        self.indices(keep)
            .map(|index| quote!((#tag, #index)))
            .collect()
    }

    /// `path { a: …, b: … }`, `path(…, …)` or `path`, each field decoded
    /// from `__items`: a slice by reference, or an iterator by value.
    fn construct(&self, path: TokenStream, by_value: bool) -> TokenStream {
        let expected = &self.expected;
        let values = self.fields.fields.iter().enumerate().map(|(index, field)| {
            let (position, label) = (index + self.offset + 1, field.label());
            let decoder = field.decoder();
            if by_value {
                quote!(#decoder.next(&mut __items, #position, #expected, #label)?)
            } else {
                quote!(#decoder.element(__items, #index, #position, #expected, #label)?)
            }
        });
        match self.fields.style {
            Style::Unit => path,
            Style::Tuple => quote!(#path(#(#values),*)),
            Style::Named => {
                let members = self.fields.fields.iter().map(|field| &field.member);
                quote!(#path { #(#members: #values),* })
            }
        }
    }

    /// `(expected, min, max)` for the runtime's array checks.
    fn bounds(&self) -> (&str, usize, usize) {
        (
            &self.expected,
            self.fields.required(),
            self.fields.fields.len(),
        )
    }
}

/// The impls of a valid container.
pub fn impls(container: &Container<'_>) -> TokenStream {
    let ident = container.ident;
    let name = container.name();
    let generics = container.generics;
    let (impl_generics, type_generics, _) = generics.split_for_impl();
    let mut decode_where = generics
        .where_clause
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(where));
    let private = crate::private();
    for param in generics.type_params() {
        let param = &param.ident;
        decode_where
            .predicates
            .push(syn::parse_quote!(#param: #private::redis::FromRedisValue));
    }
    let (by_ref, by_value, shape, lists) = match &container.data {
        Data::Struct(_, fields) => {
            let elements = Elements::new(&name, fields, 0);
            let (expected, min, max) = elements.bounds();
            let by_ref = elements.construct(quote!(Self), false);
            let by_value = elements.construct(quote!(Self), true);
            let lists = ElementLists::of(&[("", &elements)]);
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
                lists,
            )
        }
        Data::Enum(variants) => {
            let elements: Vec<Elements<'_, '_>> = variants
                .iter()
                .map(|variant| {
                    Elements::new(&format!("{name}::{}", variant.name()), &variant.fields, 1)
                })
                .collect();
            let tags = variants.iter().map(|variant| &variant.label.value);
            let tags = quote!(&[#(#tags),*]);
            let arms = |by_value: bool| {
                variants.iter().zip(&elements).enumerate().map(
                    move |(index, (variant, elements))| {
                        let (expected, min, max) = elements.bounds();
                        let variant_ident = variant.ident;
                        let construct = elements.construct(quote!(Self::#variant_ident), by_value);
                        let items = if by_value {
                            quote! {
                                #[allow(unused_variables, unused_mut)]
                                let mut __items = __tag.fields(#expected, #min, #max)?;
                            }
                        } else {
                            quote! {
                                #[allow(unused_variables)]
                                let __items = __tag.fields(#expected, #min, #max)?;
                            }
                        };
                        quote! {
                            #index => {
                                #items
                                ::core::result::Result::Ok(#construct)
                            }
                        }
                    },
                )
            };
            let (arms_by_ref, arms_by_value) = (arms(false), arms(true));
            let shapes = variants.iter().zip(&elements).map(|(variant, elements)| {
                let variant_name = variant.name();
                let tag = &variant.label.value;
                let (_, min, max) = elements.bounds();
                let unit = max == 0;
                quote! {
                    #private::variant(#variant_name, #tag, #min, #max, #unit)
                }
            });
            let tagged: Vec<(&str, &Elements<'_, '_>)> = variants
                .iter()
                .zip(&elements)
                .map(|(variant, elements)| (variant.label.value.as_str(), elements))
                .collect();
            let lists = ElementLists::of(&tagged);
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
                lists,
            )
        }
        // Rejected by validation; the fallback stands in.
        Data::Union(_) => return fallback(container),
    };
    let ElementLists {
        integers,
        required,
        scalars,
    } = lists;
    // A named struct's fields, for the `HMGET` a message suggests.
    let field_names: Vec<String> = match &container.data {
        Data::Struct(_, fields) if matches!(fields.style, Style::Named) => fields
            .fields
            .iter()
            .filter_map(|field| field.ident)
            .map(|ident| ident.to_string().trim_start_matches("r#").to_owned())
            .collect(),
        _ => Vec::new(),
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
        impl #impl_generics #private::ReplyShape for #ident #type_generics #decode_where {
            const SHAPE: #private::Shape = #shape;
            const INTEGER_ELEMENTS: &'static [(&'static str, usize)] = &[#(#integers),*];
            const REQUIRED_ELEMENTS: &'static [(&'static str, usize)] = &[#(#required),*];
            const SCALAR_ELEMENTS: &'static [(&'static str, usize)] = &[#(#scalars),*];
            const FIELD_NAMES: &'static [&'static str] = &[#(#field_names),*];
        }
    }
}

/// The `(tag, index)` lists of a reply type's `ReplyShape` impl.
struct ElementLists {
    /// Fields of a Rust integer type.
    integers: Vec<TokenStream>,
    /// Fields that are not an `Option`: a nil there fails to decode.
    required: Vec<TokenStream>,
    /// Fields of a scalar type (a number, a string, a boolean): a table
    /// there fails to decode.
    scalars: Vec<TokenStream>,
}

impl ElementLists {
    fn of(tagged: &[(&str, &Elements<'_, '_>)]) -> Self {
        let list = |keep: fn(&Field<'_>) -> bool| {
            tagged
                .iter()
                .flat_map(|(tag, elements)| elements.listed(tag, keep))
                .collect()
        };
        Self {
            integers: list(|field| field.is_integer()),
            required: list(|field| !field.is_optional()),
            scalars: list(|field| field.is_scalar()),
        }
    }
}

/// Impls that compile and fail at run time, emitted next to the errors.
pub fn fallback(container: &Container<'_>) -> TokenStream {
    let ident = container.ident;
    let (impl_generics, type_generics, where_clause) = container.generics.split_for_impl();
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
