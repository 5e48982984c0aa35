//! The derives' model of their input: the type, its variants and fields,
//! and what the helper attributes on each said.
//!
//! Building the model reports nothing: a helper attribute that does not
//! read is kept as its errors, and [`valid`](super::valid) reports them in
//! source order together with its own checks.

use proc_macro2::Span;
use quote::ToTokens as _;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{DeriveInput, Generics, Ident, Member, Type};

use super::attr::{self, Helper, Place};

/// The type a derive is applied to.
pub struct Container<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    /// The derive's helper attributes on the type, where none belongs.
    pub attributes: Result<(), syn::Error>,
    pub data: Data<'a>,
}

/// What the type is made of.
pub enum Data<'a> {
    /// A struct, and its `struct` keyword.
    Struct(Span, Fields<'a>),
    Enum(Vec<Variant<'a>>),
    /// A union: its `union` keyword.
    Union(Span),
}

/// An enum variant.
pub struct Variant<'a> {
    pub ident: &'a Ident,
    /// The string that selects this variant.
    pub label: Label,
    /// Errors of its helper attribute, when it does not read.
    pub attributes: Result<(), syn::Error>,
    pub fields: Fields<'a>,
}

/// A variant's tag (`ScriptReply`) or error code (`ScriptError`).
pub struct Label {
    pub value: String,
    /// The literal when written, else the variant's name.
    pub span: Span,
    /// Written in the helper attribute, not derived from the variant's
    /// name in SCREAMING_SNAKE_CASE.
    pub written: bool,
}

/// How fields are written: `{ a: u64 }`, `(u64)`, or not at all.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Named,
    Tuple,
    Unit,
}

/// The fields of a struct or a variant.
pub struct Fields<'a> {
    pub style: Style,
    pub fields: Vec<Field<'a>>,
}

/// A field of a struct or a variant.
pub struct Field<'a> {
    /// How generated code names it: `count` or `0`.
    pub member: Member,
    /// `None` for a tuple field.
    pub ident: Option<&'a Ident>,
    pub ty: &'a Type,
    /// The derive's helper attributes on the field, where none belongs.
    pub attributes: Result<(), syn::Error>,
}

impl<'a> Container<'a> {
    /// The model of `input`, with `helper` as the derive's attribute.
    pub fn from_ast(input: &'a DeriveInput, helper: &Helper) -> Self {
        let data = match &input.data {
            syn::Data::Struct(data) => Data::Struct(
                data.struct_token.span(),
                Fields::from_ast(&data.fields, helper),
            ),
            syn::Data::Enum(data) => Data::Enum(
                data.variants
                    .iter()
                    .map(|variant| Variant::from_ast(variant, helper))
                    .collect(),
            ),
            syn::Data::Union(data) => Data::Union(data.union_token.span()),
        };
        Self {
            ident: &input.ident,
            generics: &input.generics,
            attributes: attr::read(helper, &input.attrs, Place::Container).errors,
            data,
        }
    }

    /// The type's name as written, without `r#`.
    pub fn name(&self) -> String {
        self.ident.unraw().to_string()
    }
}

impl<'a> Variant<'a> {
    fn from_ast(variant: &'a syn::Variant, helper: &Helper) -> Self {
        let read = attr::read(helper, &variant.attrs, Place::Variant);
        let label = match &read.value {
            Some(literal) => Label {
                value: literal.value(),
                span: literal.span(),
                written: true,
            },
            None => Label {
                value: screaming_snake_case(&variant.ident),
                span: variant.ident.span(),
                written: false,
            },
        };
        Self {
            ident: &variant.ident,
            label,
            attributes: read.errors,
            fields: Fields::from_ast(&variant.fields, helper),
        }
    }

    /// The variant's name as written, without `r#`.
    pub fn name(&self) -> String {
        self.ident.unraw().to_string()
    }
}

impl<'a> Fields<'a> {
    fn from_ast(fields: &'a syn::Fields, helper: &Helper) -> Self {
        let style = match fields {
            syn::Fields::Named(_) => Style::Named,
            syn::Fields::Unnamed(_) => Style::Tuple,
            syn::Fields::Unit => Style::Unit,
        };
        let fields = fields
            .iter()
            .enumerate()
            .map(|(index, field)| Field {
                member: match &field.ident {
                    Some(ident) => Member::Named(ident.clone()),
                    None => Member::Unnamed(syn::Index {
                        index: u32::try_from(index).unwrap_or(u32::MAX),
                        span: field.span(),
                    }),
                },
                ident: field.ident.as_ref(),
                ty: &field.ty,
                attributes: attr::read(helper, &field.attrs, Place::Field).errors,
            })
            .collect();
        Self { style, fields }
    }

    /// How many leading fields are required: the fields before the first
    /// `Option`.
    pub fn required(&self) -> usize {
        self.fields
            .iter()
            .take_while(|field| !field.is_optional())
            .count()
    }
}

impl Field<'_> {
    /// The field's name, or its type for a tuple field, for messages.
    pub fn label(&self) -> String {
        match self.ident {
            Some(ident) => ident.unraw().to_string(),
            None => type_text(self.ty),
        }
    }

    /// Whether the field is spelled `Option<…>`, so it may be absent.
    pub fn is_optional(&self) -> bool {
        is_option(self.ty)
    }

    /// Whether the field is a Rust integer (or an `Option` of one), read
    /// from how its type is spelled.
    pub fn is_integer(&self) -> bool {
        is_integer(self.ty)
    }

    /// Whether the field is a number, a `String` or a `bool` (or an
    /// `Option` of one), read from how its type is spelled.
    pub fn is_scalar(&self) -> bool {
        is_scalar(self.ty)
    }
}

/// `TooMany` → `TOO_MANY`, `HTTPError` → `HTTP_ERROR`, `V2` → `V2`.
fn screaming_snake_case(ident: &Ident) -> String {
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
pub(super) fn is_option(ty: &Type) -> bool {
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
    is_named(ty, INTEGERS)
}

/// A number, `String` or `bool`, or `Option` of one.
fn is_scalar(ty: &Type) -> bool {
    const SCALARS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "f32", "f64", "bool", "String",
    ];
    is_named(ty, SCALARS)
}

/// Whether `ty` is spelled as one of the single-segment type `names`, or an
/// `Option` of one.
fn is_named(ty: &Type, names: &[&str]) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let Some(segment) = path.path.segments.last() else {
                return false;
            };
            if segment.ident == "Option" {
                if let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments {
                    return arguments.args.iter().any(|argument| {
                        matches!(argument, syn::GenericArgument::Type(inner) if is_named(inner, names))
                    });
                }
                return false;
            }
            path.path.segments.len() == 1 && names.iter().any(|name| segment.ident == name)
        }
        Type::Group(group) => is_named(&group.elem, names),
        Type::Paren(paren) => is_named(&paren.elem, names),
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

#[cfg(test)]
mod tests {
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
    fn integer_detection() {
        let ty: Type = syn::parse_quote!(u64);
        assert!(is_integer(&ty));
        let ty: Type = syn::parse_quote!(Option<i32>);
        assert!(is_integer(&ty));
        let ty: Type = syn::parse_quote!(f64);
        assert!(!is_integer(&ty));
        let ty: Type = syn::parse_quote!(my::u64);
        assert!(!is_integer(&ty));
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
    fn the_model_keeps_labels_and_attribute_errors() {
        let input: DeriveInput = syn::parse_quote! {
            enum Decision {
                Allowed { count: u64, note: Option<String> },
                #[reply(tag = "NO")]
                Denied(u64),
                #[reply(tga = "X")]
                Busy,
            }
        };
        let container = Container::from_ast(&input, &attr::REPLY);
        let Data::Enum(variants) = &container.data else {
            panic!("an enum");
        };
        let labels: Vec<(&str, bool, bool)> = variants
            .iter()
            .map(|variant| {
                let label = &variant.label;
                (
                    label.value.as_str(),
                    label.written,
                    variant.attributes.is_ok(),
                )
            })
            .collect();
        assert_eq!(
            labels,
            [
                ("ALLOWED", false, true),
                ("NO", true, true),
                ("BUSY", false, false)
            ]
        );
        let allowed = &variants[0].fields;
        assert!(allowed.style == Style::Named);
        assert_eq!(allowed.required(), 1);
        assert_eq!(allowed.fields[1].label(), "note");
        assert_eq!(variants[1].fields.fields[0].label(), "u64");
    }
}
