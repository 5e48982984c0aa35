//! `#[derive(ScriptError)]`: an enum of the error codes a script raises on
//! purpose (`redis.error_reply('CONFLICT expected 3 found 4')`), decoded
//! from the code and the message of the error reply.
//!
//! Message grammar, per variant kind:
//! * unit variant: the message is ignored;
//! * named fields: `name=value` or `name value` set field `name`; other
//!   words fill the fields not yet set, in declaration order; a field named
//!   `message` takes the rest of the text; `Option` fields may be absent;
//! * tuple fields: one word each, the last field taking the rest of the
//!   text.
//!
//! Every field is parsed with `FromStr` and printed with `Display`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, Data, DeriveInput, Fields, Ident, LitStr, Type};

use crate::errors::Errors;
use crate::reply::{is_option, screaming_snake_case};

/// The derive's entry point.
pub fn derive(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::default();
    let variants = parse(&input, &mut errors);
    match (errors.into_tokens(), variants) {
        (None, Some(variants)) => generate(&input.ident, &variants),
        (errors, _) => {
            let fallback = fallback(&input);
            quote! { #errors #fallback }
        }
    }
}

const CODE_FORM: &str = "`#[error_code(\"CONFLICT\")]`";

struct Variant<'a> {
    ident: &'a Ident,
    code: String,
    kind: Kind<'a>,
}

enum Kind<'a> {
    Unit,
    Named {
        fields: Vec<Field<'a>>,
        /// Index of the `message` field, which takes the rest of the text.
        rest: Option<usize>,
    },
    Tuple(Vec<Field<'a>>),
}

struct Field<'a> {
    /// `None` for a tuple field.
    ident: Option<&'a Ident>,
    ty: &'a Type,
    optional: bool,
}

fn parse<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Option<Vec<Variant<'a>>> {
    misplaced_codes(&input.attrs, "on the enum", errors);
    if !input.generics.params.is_empty() {
        errors.push(syn::Error::new(
            input.generics.span(),
            "`ScriptError` cannot be derived for a generic type: declare a concrete enum with one variant per error code",
        ));
    }
    let data = match &input.data {
        Data::Enum(data) => data,
        Data::Struct(data) => {
            errors.push(syn::Error::new(
                data.struct_token.span(),
                "`ScriptError` is derived for an enum, one variant per error code, e.g. `enum VersionError { Conflict { expected: u64, found: u64 } }`",
            ));
            return None;
        }
        Data::Union(data) => {
            errors.push(syn::Error::new(
                data.union_token.span(),
                "`ScriptError` is derived for an enum, one variant per error code, not for a union",
            ));
            return None;
        }
    };
    if data.variants.is_empty() {
        errors.push(syn::Error::new(
            input.ident.span(),
            format!(
                "`{}` has no variants: add one per error code the script raises",
                input.ident.unraw()
            ),
        ));
        return None;
    }
    let mut variants = Vec::new();
    let mut valid = true;
    for variant in &data.variants {
        let code = variant_code(variant, errors);
        let kind = variant_kind(&variant.fields, errors);
        match (code, kind) {
            (Some((code, span)), Some(kind)) => {
                if let Some(first) = variants
                    .iter()
                    .find(|earlier: &&Variant<'_>| earlier.code == code)
                {
                    errors.push(syn::Error::new(
                        span,
                        format!(
                            "variants `{}` and `{}` both have the error code \"{code}\", so `{}` could never be decoded; give one of them another `#[error_code(\"...\")]`",
                            first.ident.unraw(),
                            variant.ident.unraw(),
                            variant.ident.unraw(),
                        ),
                    ));
                    valid = false;
                }
                variants.push(Variant {
                    ident: &variant.ident,
                    code,
                    kind,
                });
            }
            _ => valid = false,
        }
    }
    valid.then_some(variants)
}

/// A variant's code and where to point at it: `#[error_code("...")]`, or
/// its name in SCREAMING_SNAKE_CASE.
fn variant_code(
    variant: &syn::Variant,
    errors: &mut Errors,
) -> Option<(String, proc_macro2::Span)> {
    let mut code: Option<LitStr> = None;
    let mut valid = true;
    for attribute in variant
        .attrs
        .iter()
        .filter(|attribute| attribute.path().is_ident("error_code"))
    {
        let literal = match &attribute.meta {
            syn::Meta::List(list) => list.parse_args::<LitStr>().map_err(|_| {
                syn::Error::new(
                    list.tokens.span(),
                    format!("the error code must be one string literal: {CODE_FORM}"),
                )
            }),
            _ => Err(syn::Error::new_spanned(
                attribute,
                format!("write the error code in parentheses: {CODE_FORM}"),
            )),
        };
        let literal = match literal {
            Ok(literal) => literal,
            Err(error) => {
                errors.push(error);
                valid = false;
                continue;
            }
        };
        let value = literal.value();
        if code.is_some() {
            errors.push(syn::Error::new_spanned(
                attribute,
                "duplicate `#[error_code]`: a variant has one error code",
            ));
            valid = false;
        } else if value.is_empty() || value.contains(char::is_whitespace) {
            errors.push(syn::Error::new(
                literal.span(),
                "an error code is one word without spaces: the first word of `redis.error_reply('CODE message')`, e.g. \"CONFLICT\"",
            ));
            valid = false;
        } else {
            code = Some(literal);
        }
    }
    if !valid {
        return None;
    }
    Some(match code {
        Some(literal) => (literal.value(), literal.span()),
        None => (screaming_snake_case(&variant.ident), variant.ident.span()),
    })
}

fn variant_kind<'a>(fields: &'a Fields, errors: &mut Errors) -> Option<Kind<'a>> {
    let parsed: Vec<Field<'a>> = fields
        .iter()
        .map(|field| {
            misplaced_codes(&field.attrs, "on a field", errors);
            Field {
                ident: field.ident.as_ref(),
                ty: &field.ty,
                optional: is_option(&field.ty),
            }
        })
        .collect();
    Some(match fields {
        Fields::Unit => Kind::Unit,
        Fields::Unnamed(_) => Kind::Tuple(parsed),
        Fields::Named(_) => {
            let rest = parsed
                .iter()
                .position(|field| field.ident.is_some_and(|ident| ident == "message"));
            Kind::Named {
                fields: parsed,
                rest,
            }
        }
    })
}

fn misplaced_codes(attributes: &[Attribute], place: &str, errors: &mut Errors) {
    for attribute in attributes
        .iter()
        .filter(|attribute| attribute.path().is_ident("error_code"))
    {
        errors.push(syn::Error::new_spanned(
            attribute,
            format!("`#[error_code]` goes on a variant, not {place}: {CODE_FORM}"),
        ));
    }
}

fn generate(ident: &Ident, variants: &[Variant<'_>]) -> TokenStream {
    let private = crate::private();
    let codes = variants.iter().map(|variant| &variant.code);
    let decode_arms = variants.iter().map(|variant| {
        let (code, variant_ident) = (&variant.code, variant.ident);
        let parse_field = |field: &Field<'_>, index: usize| {
            let function = if field.optional {
                quote!(error_optional)
            } else {
                quote!(error_field)
            };
            quote_spanned! {field.ty.span()=>
                #private::#function(&__fields, #index)?
            }
        };
        let body = match &variant.kind {
            Kind::Unit => quote!(Self::#variant_ident),
            Kind::Named { fields, rest } => {
                let names = fields
                    .iter()
                    .filter_map(|field| field.ident.map(|ident| ident.unraw().to_string()));
                let rest = match rest {
                    Some(index) => quote!(::core::option::Option::Some(#index)),
                    None => quote!(::core::option::Option::None),
                };
                let members = fields.iter().filter_map(|field| field.ident);
                let values = fields
                    .iter()
                    .enumerate()
                    .map(|(index, field)| parse_field(field, index));
                quote! {{
                    let __fields = #private::error_fields(__message, &[#(#names),*], #rest);
                    Self::#variant_ident { #(#members: #values),* }
                }}
            }
            Kind::Tuple(fields) => {
                let count = fields.len();
                let values = fields
                    .iter()
                    .enumerate()
                    .map(|(index, field)| parse_field(field, index));
                quote! {{
                    let __fields = #private::error_words(__message, #count);
                    Self::#variant_ident(#(#values),*)
                }}
            }
        };
        quote! {
            #code => ::core::option::Option::Some(#body),
        }
    });
    let code_arms = variants.iter().map(|variant| {
        let (code, variant_ident) = (&variant.code, variant.ident);
        quote!(Self::#variant_ident { .. } => #code,)
    });
    let display_arms = variants.iter().map(display_arm);
    quote! {
        #[automatically_derived]
        impl #private::ScriptError for #ident {
            const CODES: &'static [&'static str] = &[#(#codes),*];

            fn from_error_reply(
                __code: &str,
                __message: &str,
            ) -> ::core::option::Option<Self> {
                let __message = #private::error_message(__message);
                let _ = __message;
                match __code {
                    #(#decode_arms)*
                    _ => ::core::option::Option::None,
                }
            }

            fn code(&self) -> &'static str {
                match self {
                    #(#code_arms)*
                }
            }
        }

        /// The error code followed by the fields, as `CODE name=value … rest`.
        #[automatically_derived]
        impl ::core::fmt::Display for #ident {
            fn fmt(&self, __formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self {
                    #(#display_arms)*
                }
                ::core::result::Result::Ok(())
            }
        }

        #[automatically_derived]
        impl ::std::error::Error for #ident {}
    }
}

/// `Self::V { a, b } => { write "CODE"; write " a=…"; … }`.
fn display_arm(variant: &Variant<'_>) -> TokenStream {
    let (code, variant_ident) = (&variant.code, variant.ident);
    let write_code = quote!(__formatter.write_str(#code)?;);
    let write = |binding: &Ident, field: &Field<'_>, prefix: Option<String>| {
        let format = match prefix {
            Some(name) => format!(" {name}={{}}"),
            None => " {}".to_owned(),
        };
        let write = quote_spanned! {field.ty.span()=>
            ::core::write!(__formatter, #format, __value)?;
        };
        if field.optional {
            quote! {
                if let ::core::option::Option::Some(__value) = #binding { #write }
            }
        } else {
            quote! {{ let __value = #binding; #write }}
        }
    };
    match &variant.kind {
        Kind::Unit => quote! {
            Self::#variant_ident => { #write_code }
        },
        Kind::Named { fields, rest } => {
            let members: Vec<&Ident> = fields.iter().filter_map(|field| field.ident).collect();
            let bindings: Vec<Ident> = (0..fields.len())
                .map(|index| quote::format_ident!("__field{}", index))
                .collect();
            let writes = fields.iter().zip(&bindings).enumerate().map(
                |(index, (field, binding))| {
                    if Some(index) == *rest {
                        let write = write(binding, field, None);
                        // An empty message adds nothing.
                        quote! {
                            if !::std::string::ToString::to_string(&#binding).is_empty() { #write }
                        }
                    } else {
                        let name = field.ident.map(|ident| ident.unraw().to_string());
                        write(binding, field, name)
                    }
                },
            );
            // The `message` field is written last, after the named ones.
            let mut writes: Vec<TokenStream> = writes.collect();
            if let Some(index) = rest.filter(|&index| index < writes.len()) {
                let message = writes.remove(index);
                writes.push(message);
            }
            quote! {
                Self::#variant_ident { #(#members: #bindings),* } => {
                    #write_code
                    #(#writes)*
                }
            }
        }
        Kind::Tuple(fields) => {
            let bindings: Vec<Ident> = (0..fields.len())
                .map(|index| quote::format_ident!("__field{}", index))
                .collect();
            let writes = fields
                .iter()
                .zip(&bindings)
                .map(|(field, binding)| write(binding, field, None));
            quote! {
                Self::#variant_ident(#(#bindings),*) => {
                    #write_code
                    #(#writes)*
                }
            }
        }
    }
}

/// Impls that compile, emitted next to the errors so uses of the type do
/// not pile up follow-on errors.
fn fallback(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let name = ident.unraw().to_string();
    let private = crate::private();
    quote! {
        #[automatically_derived]
        impl #impl_generics #private::ScriptError for #ident #type_generics #where_clause {
            const CODES: &'static [&'static str] = &[];

            fn from_error_reply(_: &str, _: &str) -> ::core::option::Option<Self> {
                ::core::option::Option::None
            }

            fn code(&self) -> &'static str {
                ""
            }
        }

        #[automatically_derived]
        impl #impl_generics ::core::fmt::Display for #ident #type_generics #where_clause {
            fn fmt(&self, __formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __formatter.write_str(#name)
            }
        }

        #[automatically_derived]
        impl #impl_generics ::std::error::Error for #ident #type_generics #where_clause {}
    }
}
