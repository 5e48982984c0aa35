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
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;

use crate::derive::ast::{Container, Data, Field, Style, Variant};

/// Index of the field named `message`, which takes the rest of the text.
fn rest(variant: &Variant<'_>) -> Option<usize> {
    if variant.fields.style != Style::Named {
        return None;
    }
    variant
        .fields
        .fields
        .iter()
        .position(|field| field.ident.is_some_and(|ident| ident == "message"))
}

/// The impls of a valid container.
pub fn impls(container: &Container<'_>) -> TokenStream {
    let Data::Enum(variants) = &container.data else {
        // Rejected by validation; the fallback stands in.
        return fallback(container);
    };
    let ident = container.ident;
    let private = crate::private();
    let codes = variants.iter().map(|variant| &variant.label.value);
    let decode_arms = variants.iter().map(decode_arm);
    let code_arms = variants.iter().map(|variant| {
        let (code, variant_ident) = (&variant.label.value, variant.ident);
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

/// `"CODE" => Some(Self::V { a: parse(0)?, … }),`.
fn decode_arm(variant: &Variant<'_>) -> TokenStream {
    let private = crate::private();
    let (code, variant_ident) = (&variant.label.value, variant.ident);
    let fields = &variant.fields.fields;
    let values = fields.iter().enumerate().map(|(index, field)| {
        let function = if field.is_optional() {
            quote!(error_optional)
        } else {
            quote!(error_field)
        };
        quote_spanned! {field.ty.span()=>
            #private::#function(&__fields, #index)?
        }
    });
    let body = match variant.fields.style {
        Style::Unit => quote!(Self::#variant_ident),
        Style::Named => {
            let names = fields
                .iter()
                .filter_map(|field| field.ident.map(|ident| ident.unraw().to_string()));
            let rest = match rest(variant) {
                Some(index) => quote!(::core::option::Option::Some(#index)),
                None => quote!(::core::option::Option::None),
            };
            let members = fields.iter().map(|field| &field.member);
            quote! {{
                let __fields = #private::error_fields(__message, &[#(#names),*], #rest);
                Self::#variant_ident { #(#members: #values),* }
            }}
        }
        Style::Tuple => {
            let count = fields.len();
            quote! {{
                let __fields = #private::error_words(__message, #count);
                Self::#variant_ident(#(#values),*)
            }}
        }
    };
    quote! {
        #code => ::core::option::Option::Some(#body),
    }
}

/// `Self::V { a, b } => { write "CODE"; write " a=…"; … }`.
fn display_arm(variant: &Variant<'_>) -> TokenStream {
    let (code, variant_ident) = (&variant.label.value, variant.ident);
    let fields = &variant.fields.fields;
    let write_code = quote!(__formatter.write_str(#code)?;);
    let write = |binding: &Ident, field: &Field<'_>, prefix: Option<String>| {
        let format = match prefix {
            Some(name) => format!(" {name}={{}}"),
            None => " {}".to_owned(),
        };
        let write = quote_spanned! {field.ty.span()=>
            ::core::write!(__formatter, #format, __value)?;
        };
        if field.is_optional() {
            quote! {
                if let ::core::option::Option::Some(__value) = #binding { #write }
            }
        } else {
            quote! {{ let __value = #binding; #write }}
        }
    };
    let bindings: Vec<Ident> = (0..fields.len())
        .map(|index| format_ident!("__field{}", index))
        .collect();
    match variant.fields.style {
        Style::Unit => quote! {
            Self::#variant_ident => { #write_code }
        },
        Style::Named => {
            let rest = rest(variant);
            let members = fields.iter().map(|field| &field.member);
            let mut writes: Vec<TokenStream> = fields
                .iter()
                .zip(&bindings)
                .enumerate()
                .map(|(index, (field, binding))| {
                    if Some(index) == rest {
                        let write = write(binding, field, None);
                        // An empty message adds nothing.
                        quote! {
                            if !::std::string::ToString::to_string(&#binding).is_empty() { #write }
                        }
                    } else {
                        let name = field.ident.map(|ident| ident.unraw().to_string());
                        write(binding, field, name)
                    }
                })
                .collect();
            // The `message` field is written last, after the named ones.
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
        Style::Tuple => {
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
pub fn fallback(container: &Container<'_>) -> TokenStream {
    let ident = container.ident;
    let (impl_generics, type_generics, where_clause) = container.generics.split_for_impl();
    let name = container.name();
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
