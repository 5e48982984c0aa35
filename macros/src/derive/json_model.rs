//! `#[derive(JsonShape)]`'s model of its input: the type and, for a
//! struct, each field with the keys serde writes and reads it under,
//! resolved from serde's attributes ([`serde_attr`](super::serde_attr)).
//!
//! Building the model reports nothing: `#[json_shape]` mistakes are kept
//! in it, and [`valid`](super::valid) reports them with its own checks.

use proc_macro2::Span;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{DeriveInput, Generics, Ident, Type};

use super::ast::{Style, is_option};
use super::serde_attr::{ContainerAttrs, FieldAttrs, Place};
use crate::errors::Errors;

/// The type `#[derive(JsonShape)]` is applied to.
pub struct JsonContainer<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    pub attrs: ContainerAttrs,
    pub data: JsonData<'a>,
    /// The `#[json_shape]` mistakes found while reading, in source order.
    pub attribute_errors: Result<(), syn::Error>,
}

/// What the type is made of, as far as its JSON goes.
pub enum JsonData<'a> {
    Struct(Style, Vec<JsonField<'a>>),
    /// An enum: whether serde writes each variant as its name alone (every
    /// variant a unit, none written another way).
    Enum {
        names_only: bool,
    },
    /// A union: its `union` keyword.
    Union(Span),
}

/// A struct field and what serde's attributes say of it.
pub struct JsonField<'a> {
    /// `None` for a tuple field.
    pub ident: Option<&'a Ident>,
    pub ty: &'a Type,
    pub attrs: FieldAttrs,
}

impl<'a> JsonContainer<'a> {
    pub fn from_ast(input: &'a DeriveInput) -> Self {
        let mut errors = Errors::default();
        let attrs = ContainerAttrs::read(&input.attrs, &mut errors);
        let data = match &input.data {
            syn::Data::Struct(data) => {
                let style = match data.fields {
                    syn::Fields::Named(_) => Style::Named,
                    syn::Fields::Unnamed(_) => Style::Tuple,
                    syn::Fields::Unit => Style::Unit,
                };
                let fields = data
                    .fields
                    .iter()
                    .map(|field| JsonField {
                        ident: field.ident.as_ref(),
                        ty: &field.ty,
                        attrs: FieldAttrs::read(&field.attrs, Place::Field, &mut errors),
                    })
                    .collect();
                JsonData::Struct(style, fields)
            }
            syn::Data::Enum(data) => {
                let mut names_only = !data.variants.is_empty();
                for variant in &data.variants {
                    let variant_attrs =
                        FieldAttrs::read(&variant.attrs, Place::Variant, &mut errors);
                    // Fields of variants may carry `#[json_shape]` too:
                    // read them so that their mistakes are reported.
                    for field in &variant.fields {
                        FieldAttrs::read(&field.attrs, Place::Field, &mut errors);
                    }
                    names_only &= matches!(variant.fields, syn::Fields::Unit)
                        && !variant_attrs.untagged
                        && !variant_attrs.serialize_with
                        && !variant_attrs.deserialize_with;
                }
                JsonData::Enum {
                    names_only: names_only && attrs.tag.is_none() && !attrs.untagged,
                }
            }
            syn::Data::Union(data) => JsonData::Union(data.union_token.span()),
        };
        Self {
            ident: &input.ident,
            generics: &input.generics,
            attrs,
            data,
            attribute_errors: errors.finish(),
        }
    }

    /// The type's name as written, without `r#`.
    pub fn name(&self) -> String {
        self.ident.unraw().to_string()
    }
}

impl JsonField<'_> {
    /// The field's name as written, without `r#` (serde's starting point).
    fn rust_name(&self) -> String {
        self.ident
            .map(|ident| ident.unraw().to_string())
            .unwrap_or_default()
    }

    /// The key serde writes it under.
    pub fn written_name(&self, container: &ContainerAttrs) -> String {
        match (&self.attrs.rename.serialize, container.rename_all.serialize) {
            (Some(name), _) => name.clone(),
            (None, Some(rule)) => rule.apply_to_field(&self.rust_name()),
            (None, None) => self.rust_name(),
        }
    }

    /// The keys serde reads it from: its deserialize name, then its
    /// aliases; none when it is never read.
    pub fn read_names(&self, container: &ContainerAttrs) -> Vec<String> {
        if self.attrs.skip_deserializing {
            return Vec::new();
        }
        let name = match (
            &self.attrs.rename.deserialize,
            container.rename_all.deserialize,
        ) {
            (Some(name), _) => name.clone(),
            (None, Some(rule)) => rule.apply_to_field(&self.rust_name()),
            (None, None) => self.rust_name(),
        };
        let mut names = vec![name];
        for alias in &self.attrs.aliases {
            if !names.contains(alias) {
                names.push(alias.clone());
            }
        }
        names
    }

    /// Whether its JSON is not the type's own: `#[json_shape(any)]`, or
    /// serde writes or reads it through a function of the user's.
    pub fn unchecked(&self) -> bool {
        self.attrs.any || self.attrs.serialize_with || self.attrs.deserialize_with
    }

    /// Whether reading may find it missing without failing, by its
    /// attributes and spelling alone: `default` (on it or the struct),
    /// `skip_deserializing`, or an `Option` read by serde itself (serde
    /// reads a missing `Option` as `None`, unless a `deserialize_with`
    /// function reads it). `None` when its type decides: serde reads a
    /// missing value of a type whose JSON is nullable (an alias of
    /// `Option`, a `Box<Option<T>>`) as `null`.
    pub fn may_be_missing(&self, container: &ContainerAttrs) -> Option<bool> {
        if container.default || self.attrs.default || self.attrs.skip_deserializing {
            return Some(true);
        }
        if self.attrs.deserialize_with {
            return Some(false);
        }
        if is_option(self.ty) {
            return Some(true);
        }
        // `#[json_shape(any)]`: the type has no `JsonShape` to ask.
        if self.attrs.any {
            return Some(false);
        }
        None
    }
}
