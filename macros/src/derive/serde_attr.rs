//! What `#[derive(JsonShape)]` reads of serde's attributes, and its own
//! `#[json_shape(any)]`.
//!
//! The derive describes the JSON serde's derives write and read, so it
//! reads `#[serde(...)]` as serde_derive does: the names (`rename`,
//! `rename_all`, `alias`), what may be missing (`default`, an `Option`),
//! what is skipped, flattened or converted. It reports nothing about
//! serde's attributes (serde's own derive reports its mistakes, once);
//! only `#[json_shape]`'s arguments, which are this crate's, are checked.

use quote::ToTokens as _;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use crate::errors::Errors;

/// A case convention of serde's `rename_all`, applied to a field name
/// (Rust writes them in snake case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

/// Each rule under the name serde gives it, in the order of serde's
/// documentation.
const RENAME_RULES: [(&str, RenameRule); 8] = [
    ("lowercase", RenameRule::Lower),
    ("UPPERCASE", RenameRule::Upper),
    ("PascalCase", RenameRule::Pascal),
    ("camelCase", RenameRule::Camel),
    ("snake_case", RenameRule::Snake),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
    ("kebab-case", RenameRule::Kebab),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
];

impl RenameRule {
    /// The rule serde names `name`; `None` for a name it does not know
    /// (serde reports that one).
    pub fn from_name(name: &str) -> Option<Self> {
        RENAME_RULES
            .iter()
            .find(|(written, _)| *written == name)
            .map(|&(_, rule)| rule)
    }

    /// The key serde uses for a field named `field` (snake case).
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Pascal => words_joined(field, true),
            Self::Camel => words_joined(field, false),
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// `job_id` → `JobId` (`upper_first`) or `jobId`: every `_` dropped, and
/// the character after one in ASCII upper case; the first character in
/// upper case, or (camel case) in lower case.
fn words_joined(field: &str, upper_first: bool) -> String {
    let mut out = String::with_capacity(field.len());
    let mut word_start = true;
    for character in field.chars() {
        if character == '_' {
            word_start = true;
        } else if word_start {
            if out.is_empty() && !upper_first {
                out.push(character.to_ascii_lowercase());
            } else {
                out.push(character.to_ascii_uppercase());
            }
            word_start = false;
        } else {
            out.push(character);
        }
    }
    out
}

/// A name or rule serde takes for both directions or for each:
/// `rename = "x"`, `rename(serialize = "x", deserialize = "y")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BothWays<T> {
    pub serialize: Option<T>,
    pub deserialize: Option<T>,
}

impl<T> Default for BothWays<T> {
    fn default() -> Self {
        Self {
            serialize: None,
            deserialize: None,
        }
    }
}

/// What serde's attributes on the type say about its JSON.
#[derive(Clone, Debug, Default)]
pub struct ContainerAttrs {
    pub rename_all: BothWays<RenameRule>,
    /// `default`: a missing field takes the struct's default.
    pub default: bool,
    pub deny_unknown_fields: bool,
    /// The JSON is the one field's.
    pub transparent: bool,
    /// `from`, `try_from`, `into` or `remote`: serde writes or reads
    /// another type's JSON.
    pub converted: bool,
    /// `tag = "…"`: a struct gets one more field, a unit-variant enum
    /// becomes an object.
    pub tag: Option<String>,
    pub untagged: bool,
}

/// What serde's attributes on a field (or a variant) say about its JSON,
/// and whether `#[json_shape(any)]` leaves it unchecked.
#[derive(Clone, Debug, Default)]
pub struct FieldAttrs {
    pub rename: BothWays<String>,
    pub aliases: Vec<String>,
    /// `default` or `default = "…"`.
    pub default: bool,
    pub skip_serializing: bool,
    pub skip_deserializing: bool,
    /// `skip_serializing_if = "…"`.
    pub skip_serializing_if: bool,
    pub flatten: bool,
    /// `serialize_with` or `with`.
    pub serialize_with: bool,
    /// `deserialize_with` or `with`.
    pub deserialize_with: bool,
    /// `untagged` on a variant.
    pub untagged: bool,
    /// `#[json_shape(any)]`.
    pub any: bool,
}

/// Where a `#[json_shape]` attribute sits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Container,
    Variant,
    Field,
}

/// The arguments `#[json_shape(...)]` takes, for messages.
const JSON_SHAPE_ARGUMENTS: &[&str] = &["any"];

impl ContainerAttrs {
    /// Reads serde's attributes on the type; `#[json_shape]` there is
    /// reported into `errors`.
    pub fn read(attributes: &[Attribute], errors: &mut Errors) -> Self {
        let mut attrs = Self::default();
        for_each_serde_key(attributes, |key, meta| match key {
            "rename_all" => {
                let names = both_ways(meta)?;
                let rule = |name: Option<String>| name.as_deref().and_then(RenameRule::from_name);
                if let Some(rule) = rule(names.serialize) {
                    attrs.rename_all.serialize = Some(rule);
                }
                if let Some(rule) = rule(names.deserialize) {
                    attrs.rename_all.deserialize = Some(rule);
                }
                Ok(())
            }
            "tag" => {
                attrs.tag = Some(string_value(meta)?);
                Ok(())
            }
            "default" => set(&mut attrs.default, meta),
            "deny_unknown_fields" => set(&mut attrs.deny_unknown_fields, meta),
            "transparent" => set(&mut attrs.transparent, meta),
            "from" | "try_from" | "into" | "remote" => set(&mut attrs.converted, meta),
            "untagged" => set(&mut attrs.untagged, meta),
            _ => skip_value(meta),
        });
        json_shape_attributes(attributes, Place::Container, errors);
        attrs
    }
}

impl FieldAttrs {
    /// Reads serde's attributes and `#[json_shape]` on a field or, with
    /// `place` [`Place::Variant`], a variant (where `#[json_shape]` is
    /// reported into `errors`).
    pub fn read(attributes: &[Attribute], place: Place, errors: &mut Errors) -> Self {
        let mut attrs = Self::default();
        for_each_serde_key(attributes, |key, meta| match key {
            "rename" => {
                let names = both_ways(meta)?;
                if names.serialize.is_some() {
                    attrs.rename.serialize = names.serialize;
                }
                if names.deserialize.is_some() {
                    attrs.rename.deserialize = names.deserialize;
                }
                Ok(())
            }
            "alias" => {
                attrs.aliases.push(string_value(meta)?);
                Ok(())
            }
            "skip" => {
                attrs.skip_serializing = true;
                set(&mut attrs.skip_deserializing, meta)
            }
            "with" => {
                attrs.serialize_with = true;
                set(&mut attrs.deserialize_with, meta)
            }
            "default" => set(&mut attrs.default, meta),
            "skip_serializing" => set(&mut attrs.skip_serializing, meta),
            "skip_deserializing" => set(&mut attrs.skip_deserializing, meta),
            "skip_serializing_if" => set(&mut attrs.skip_serializing_if, meta),
            "flatten" => set(&mut attrs.flatten, meta),
            "serialize_with" => set(&mut attrs.serialize_with, meta),
            "deserialize_with" => set(&mut attrs.deserialize_with, meta),
            "untagged" => set(&mut attrs.untagged, meta),
            _ => skip_value(meta),
        });
        attrs.any = json_shape_attributes(attributes, place, errors);
        attrs
    }
}

/// Calls `read` with each key of the `#[serde(...)]` attributes among
/// `attributes` (`rename` in `rename = "x"`). A malformed attribute is
/// serde's to report: reading it stops there, keeping what came before.
fn for_each_serde_key(
    attributes: &[Attribute],
    mut read: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attribute in attributes {
        if attribute.path().is_ident("serde") {
            let _ = attribute.parse_nested_meta(|meta| match meta.path.get_ident() {
                Some(key) => read(&key.to_string(), &meta),
                None => skip_value(&meta),
            });
        }
    }
}

/// A key whose presence says it all (`flatten`, `default`, or
/// `skip_serializing_if = "…"`, whose value does not matter here).
fn set(flag: &mut bool, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    *flag = true;
    skip_value(meta)
}

/// Reads the `#[json_shape(...)]` attributes among `attributes`: whether
/// one says `any`. Anything else, and any on the type or a variant, is
/// reported into `errors`.
fn json_shape_attributes(attributes: &[Attribute], place: Place, errors: &mut Errors) -> bool {
    let mut any = false;
    for attribute in attributes
        .iter()
        .filter(|attribute| attribute.path().is_ident("json_shape"))
    {
        let misplaced = match place {
            Place::Field => None,
            Place::Variant => Some("a variant"),
            Place::Container => Some("the type"),
        };
        if let Some(misplaced) = misplaced {
            errors.push(syn::Error::new_spanned(
                attribute,
                format!(
                    "`#[json_shape]` goes on a field, not on {misplaced}: `#[json_shape(any)]` leaves that field's JSON unchecked"
                ),
            ));
            continue;
        }
        if !matches!(attribute.meta, syn::Meta::List(_)) {
            errors.push(syn::Error::new_spanned(
                attribute,
                "write the argument in parentheses: `#[json_shape(any)]`",
            ));
            continue;
        }
        let result = attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("any") {
                if any {
                    errors.push(meta.error("duplicate `any`: say it once"));
                }
                any = true;
                if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
                    errors.push(meta.error("`any` takes no value: `#[json_shape(any)]`"));
                    skip_value(&meta)?;
                }
                return Ok(());
            }
            errors.push(meta.error(unknown_argument(&meta.path)));
            skip_value(&meta)
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    any
}

/// "unknown `#[json_shape]` argument `anny`: did you mean `any`?"
fn unknown_argument(path: &syn::Path) -> String {
    let name = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| path.to_token_stream().to_string().replace(' ', ""));
    let unknown = format!("unknown `#[json_shape]` argument `{name}`");
    let valid = JSON_SHAPE_ARGUMENTS
        .iter()
        .map(|argument| format!("`{argument}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match redis_script_analysis::suggest::closest(&name, JSON_SHAPE_ARGUMENTS.iter().copied()) {
        Some(near) => format!(
            "{unknown}: did you mean `{near}`? (`#[json_shape(any)]` leaves the field's JSON unchecked)"
        ),
        None => format!(
            "{unknown}: the only one is {valid}, as in `#[json_shape(any)]`, which leaves the field's JSON unchecked"
        ),
    }
}

/// `key = "x"` → both ways `x`; `key(serialize = "x", deserialize = "y")`
/// → each its own.
fn both_ways(meta: &ParseNestedMeta<'_>) -> syn::Result<BothWays<String>> {
    if meta.input.peek(syn::Token![=]) {
        let value = string_value(meta)?;
        return Ok(BothWays {
            serialize: Some(value.clone()),
            deserialize: Some(value),
        });
    }
    let mut names = BothWays::default();
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            names.serialize = Some(string_value(&inner)?);
        } else if inner.path.is_ident("deserialize") {
            names.deserialize = Some(string_value(&inner)?);
        } else {
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok(names)
}

/// The string of `key = "…"`.
fn string_value(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    let literal: LitStr = meta.value()?.parse()?;
    Ok(literal.value())
}

/// Passes over the value of a key this reader does not need: `= expr` or
/// `(…)`, or nothing.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(attributes: &[Attribute]) -> (FieldAttrs, Vec<String>) {
        let mut errors = Errors::default();
        let attrs = FieldAttrs::read(attributes, Place::Field, &mut errors);
        (attrs, messages(errors))
    }

    fn messages(errors: Errors) -> Vec<String> {
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|error| error.to_string()).collect(),
        }
    }

    /// Each rule on field names of one word, several words, digits, a
    /// leading underscore and a single letter, as serde_derive renames
    /// them (its own case tests, extended).
    #[test]
    fn every_case_convention() {
        let table: &[(&str, [&str; 8])] = &[
            // lowercase, UPPERCASE, PascalCase, camelCase, snake_case,
            // SCREAMING_SNAKE_CASE, kebab-case, SCREAMING-KEBAB-CASE
            (
                "outcome",
                [
                    "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                    "OUTCOME",
                ],
            ),
            (
                "very_tasty",
                [
                    "very_tasty",
                    "VERY_TASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("a", ["a", "A", "A", "a", "a", "A", "a", "A"]),
            (
                "z42",
                ["z42", "Z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"],
            ),
            (
                "retry_after_2x",
                [
                    "retry_after_2x",
                    "RETRY_AFTER_2X",
                    "RetryAfter2x",
                    "retryAfter2x",
                    "retry_after_2x",
                    "RETRY_AFTER_2X",
                    "retry-after-2x",
                    "RETRY-AFTER-2X",
                ],
            ),
            (
                "_private",
                [
                    "_private", "_PRIVATE", "Private", "private", "_private", "_PRIVATE",
                    "-private", "-PRIVATE",
                ],
            ),
        ];
        let rules = RENAME_RULES.map(|(_, rule)| rule);
        for (name, expected) in table {
            for (rule, expected) in rules.iter().zip(expected) {
                assert_eq!(rule.apply_to_field(name), *expected, "{rule:?} of {name}");
            }
        }
        for (name, rule) in RENAME_RULES {
            assert_eq!(RenameRule::from_name(name), Some(rule));
        }
        assert_eq!(RenameRule::from_name("Camel"), None);
    }

    #[test]
    fn container_attributes() {
        let attributes: Vec<Attribute> = vec![
            syn::parse_quote!(#[serde(rename_all(serialize = "camelCase", deserialize = "kebab-case"))]),
            syn::parse_quote!(#[serde(default, deny_unknown_fields, bound(serialize = "T: X"))]),
            syn::parse_quote!(#[serde(tag = "type", crate = "serde")]),
            syn::parse_quote!(#[derive(Debug)]),
        ];
        let mut errors = Errors::default();
        let attrs = ContainerAttrs::read(&attributes, &mut errors);
        assert!(messages(errors).is_empty());
        assert_eq!(attrs.rename_all.serialize, Some(RenameRule::Camel));
        assert_eq!(attrs.rename_all.deserialize, Some(RenameRule::Kebab));
        assert!(attrs.default && attrs.deny_unknown_fields);
        assert_eq!(attrs.tag.as_deref(), Some("type"));
        assert!(!attrs.transparent && !attrs.converted && !attrs.untagged);

        let attributes: Vec<Attribute> =
            vec![syn::parse_quote!(#[serde(rename_all = "SCREAMING-KEBAB-CASE", into = "String")])];
        let mut errors = Errors::default();
        let attrs = ContainerAttrs::read(&attributes, &mut errors);
        let both = Some(RenameRule::ScreamingKebab);
        assert_eq!(
            (attrs.rename_all.serialize, attrs.rename_all.deserialize),
            (both, both)
        );
        assert!(attrs.converted);
    }

    #[test]
    fn field_attributes() {
        let (attrs, errors) = field(&[
            syn::parse_quote!(#[serde(rename(deserialize = "in"), alias = "a", alias = "b")]),
            syn::parse_quote!(#[serde(default = "path::to", skip_serializing_if = "Option::is_none")]),
            syn::parse_quote!(#[json_shape(any)]),
        ]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(attrs.rename.serialize, None);
        assert_eq!(attrs.rename.deserialize.as_deref(), Some("in"));
        assert_eq!(attrs.aliases, ["a", "b"]);
        assert!(attrs.default && attrs.skip_serializing_if && attrs.any);
        assert!(!attrs.skip_serializing && !attrs.skip_deserializing);

        let (attrs, _) = field(&[syn::parse_quote!(#[serde(skip, with = "m", flatten)])]);
        assert!(attrs.skip_serializing && attrs.skip_deserializing && attrs.flatten);
        assert!(attrs.serialize_with && attrs.deserialize_with);
        let (attrs, _) =
            field(&[syn::parse_quote!(#[serde(rename = "x", deserialize_with = "f")])]);
        assert_eq!(attrs.rename.serialize.as_deref(), Some("x"));
        assert_eq!(attrs.rename.deserialize.as_deref(), Some("x"));
        assert!(attrs.deserialize_with && !attrs.serialize_with);
    }

    #[test]
    fn json_shape_mistakes() {
        let (attrs, errors) = field(&[
            syn::parse_quote!(#[json_shape(anny, any, unchecked = true)]),
            syn::parse_quote!(#[json_shape]),
            syn::parse_quote!(#[json_shape(any)]),
        ]);
        assert!(attrs.any);
        assert_eq!(
            errors,
            [
                "unknown `#[json_shape]` argument `anny`: did you mean `any`? (`#[json_shape(any)]` leaves the field's JSON unchecked)",
                "unknown `#[json_shape]` argument `unchecked`: the only one is `any`, as in `#[json_shape(any)]`, which leaves the field's JSON unchecked",
                "write the argument in parentheses: `#[json_shape(any)]`",
                "duplicate `any`: say it once",
            ]
        );
        let mut errors = Errors::default();
        ContainerAttrs::read(&[syn::parse_quote!(#[json_shape(any)])], &mut errors);
        assert_eq!(messages(errors).len(), 1);
    }

    /// Serde's own mistakes are serde's to report: nothing here, and what
    /// reads before them is kept.
    #[test]
    fn malformed_serde_attributes_are_left_to_serde() {
        let (attrs, errors) = field(&[
            syn::parse_quote!(#[serde(alias = "kept", rename = 5)]),
            syn::parse_quote!(#[serde = "x"]),
            syn::parse_quote!(#[serde(some::path = "x", default)]),
        ]);
        assert!(errors.is_empty());
        assert_eq!(attrs.aliases, ["kept"]);
        assert!(attrs.default);
    }
}
