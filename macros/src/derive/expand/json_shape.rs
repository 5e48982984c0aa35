//! `#[derive(JsonShape)]`: the type's `JsonShape::JSON`, a constant
//! built with the runtime's `const fn`s (its types are `#[non_exhaustive]`).
//!
//! A struct with named fields is an object listing the fields serde
//! writes or reads; a `transparent` struct and a newtype are their field's
//! JSON; an enum of unit variants written by name is a string; anything
//! else serde writes in a form not described here is `Any`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use crate::derive::ast::Style;
use crate::derive::json_model::{JsonContainer, JsonData, JsonField};

/// The impl of a model without errors.
pub fn impls(container: &JsonContainer<'_>) -> TokenStream {
    let json = json(container);
    implementation(container, &json, true)
}

/// The impl next to errors: `Any`, so that uses of the type compile.
pub fn fallback(container: &JsonContainer<'_>) -> TokenStream {
    let private = crate::private();
    implementation(container, &quote!(#private::JsonType::Any), false)
}

fn implementation(container: &JsonContainer<'_>, json: &TokenStream, bounds: bool) -> TokenStream {
    let private = crate::private();
    let ident = container.ident;
    let mut generics = container.generics.clone();
    if bounds {
        for parameter in generics.type_params_mut() {
            parameter.bounds.push(syn::parse_quote!(#private::JsonShape));
        }
    }
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let (_, type_generics, _) = container.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #private::JsonShape for #ident #type_generics #where_clause {
            const JSON: #private::JsonType = #json;
        }
    }
}

/// The expression of the type's JSON.
fn json(container: &JsonContainer<'_>) -> TokenStream {
    let private = crate::private();
    let any = quote!(#private::JsonType::Any);
    let attrs = &container.attrs;
    if attrs.converted {
        return any;
    }
    match &container.data {
        JsonData::Union(_) => any,
        JsonData::Enum { names_only: true } => quote!(#private::JsonType::String),
        JsonData::Enum { names_only: false } => any,
        JsonData::Struct(style, fields) => {
            if attrs.transparent {
                // Serde's one field that is not skipped.
                let field = fields
                    .iter()
                    .find(|field| !(field.attrs.skip_serializing && field.attrs.skip_deserializing));
                return field.map_or(any, JsonField::json);
            }
            match (style, fields.as_slice()) {
                (Style::Named, _) => object(container, fields),
                (Style::Tuple, [field]) => field.json(),
                // A tuple struct is an array of mixed elements; a unit
                // struct is `null`.
                (Style::Tuple | Style::Unit, _) => any,
            }
        }
    }
}

/// `JsonType::Object(&json_object(…))` of a struct with named fields.
fn object(container: &JsonContainer<'_>, fields: &[JsonField<'_>]) -> TokenStream {
    let private = crate::private();
    let attrs = &container.attrs;
    let name = container.name();
    let mut listed = Vec::new();
    if let Some(tag) = &attrs.tag {
        // Serde writes the tag first, with the struct's name; reading
        // takes no notice of it (it is a key like any other it ignores).
        listed.push(quote! {
            #private::json_field(
                #tag,
                &[],
                &#private::JsonType::String,
                #private::Written::Always,
                false,
            )
        });
    }
    let mut open = false;
    for field in fields {
        if field.attrs.flatten {
            open = true;
            continue;
        }
        listed.push(field.entry(attrs));
    }
    let deny = attrs.deny_unknown_fields;
    quote! {
        #private::JsonType::Object(&#private::json_object(
            #name,
            &[#(#listed),*],
            #open,
            #deny,
        ))
    }
}

impl JsonField<'_> {
    /// The field's value: its type's JSON, spanned on the type so that a
    /// type without `JsonShape` is reported there.
    fn json(&self) -> TokenStream {
        let private = crate::private();
        if self.unchecked() {
            return quote!(#private::JsonType::Any);
        }
        let ty = self.ty;
        quote_spanned! {ty.span()=> <#ty as #private::JsonShape>::JSON }
    }

    /// `json_field(name, accepts, &ty, written, required)`.
    fn entry(&self, container: &crate::derive::serde_attr::ContainerAttrs) -> TokenStream {
        let private = crate::private();
        let name = self.written_name(container);
        let accepts = self.read_names(container);
        let json = self.json();
        let written = if self.attrs.skip_serializing {
            quote!(Never)
        } else if self.attrs.skip_serializing_if {
            quote!(Sometimes)
        } else {
            quote!(Always)
        };
        let required = match self.may_be_missing(container) {
            Some(missing) => {
                let required = !missing;
                quote!(#required)
            }
            None => quote!(!::core::matches!(#json, #private::JsonType::Nullable(_))),
        };
        quote! {
            #private::json_field(
                #name,
                &[#(#accepts),*],
                &#json,
                #private::Written::#written,
                #required,
            )
        }
    }
}
