//! `#[derive(JsonShape)]`: the type's `JsonShape::JSON`, a constant
//! built with the runtime's `const fn`s (its types are `#[non_exhaustive]`).
//!
//! A struct with named fields is an object listing the fields serde
//! writes or reads; a `transparent` struct and a newtype are their field's
//! JSON; an enum of unit variants written by name is a string; anything
//! else serde writes in a form not described here is `Any`.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens as _, quote, quote_spanned};
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
            parameter
                .bounds
                .push(syn::parse_quote!(#private::JsonShape));
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
                let field = fields.iter().find(|field| {
                    !(field.attrs.skip_serializing && field.attrs.skip_deserializing)
                });
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
        listed.push(field.entry(attrs, container.ident));
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
        self.json_within(None)
    }

    /// [`Self::json`] of a field of the struct `container`: a field whose
    /// type names the struct itself (`next: Option<Box<Node>>`) is not
    /// checked, since a constant cannot hold itself.
    fn json_within(&self, container: Option<&syn::Ident>) -> TokenStream {
        let private = crate::private();
        let recursive = container.is_some_and(|ident| mentions(self.ty.to_token_stream(), ident));
        if self.unchecked() || recursive {
            return quote!(#private::JsonType::Any);
        }
        let ty = self.ty;
        quote_spanned! {ty.span()=> <#ty as #private::JsonShape>::JSON }
    }

    /// `json_field(name, accepts, &ty, written, required)`.
    fn entry(
        &self,
        container: &crate::derive::serde_attr::ContainerAttrs,
        ident: &syn::Ident,
    ) -> TokenStream {
        let private = crate::private();
        let name = self.written_name(container);
        let accepts = self.read_names(container);
        let json = self.json_within(Some(ident));
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
            // A method call, not a `match`: the constant's parts must be
            // promotable to `'static`.
            None => quote!(!#private::JsonType::is_nullable(&#json)),
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

/// Whether `tokens` (a field's type) name `ident` or `Self`.
fn mentions(tokens: TokenStream, ident: &syn::Ident) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(name) => name == *ident || name == "Self",
        TokenTree::Group(group) => mentions(group.stream(), ident),
        TokenTree::Punct(_) | TokenTree::Literal(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursive_fields_are_found_by_name() {
        let node: syn::Ident = syn::parse_quote!(Node);
        let mentions_node = |ty: TokenStream| mentions(ty, &node);
        assert!(mentions_node(quote!(Option<Box<Node>>)));
        assert!(mentions_node(quote!(Vec<crate::tree::Node<T>>)));
        assert!(mentions_node(quote!(HashMap<String, (Self, u8)>)));
        assert!(!mentions_node(quote!(Option<Box<Nodes>>)));
    }
}
