//! The one reader of the derives' helper attributes, `#[reply(tag = "…")]`
//! and `#[error_code("…")]`: misplaced attributes, malformed ones,
//! duplicates and unknown keys are all found here, in the same words for
//! both derives.

use proc_macro2::TokenStream;
use quote::ToTokens as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr, Meta};

use crate::errors::Errors;

/// A derive's helper attribute: it goes on enum variants and gives the
/// string that selects the variant.
pub struct Helper {
    /// `reply`, `error_code`.
    pub name: &'static str,
    /// The key of that string, `tag` in `#[reply(tag = "…")]`; `None` when
    /// the string is written alone: `#[error_code("…")]`.
    pub key: Option<&'static str>,
    /// The string, in messages: "the tag".
    pub what: &'static str,
    /// Why a variant takes one: "give a variant one tag".
    pub once: &'static str,
    /// How to write the attribute, for messages.
    pub form: &'static str,
    /// What to say of one on the type.
    pub on_container: &'static str,
    /// What to say of one on a field.
    pub on_field: &'static str,
}

/// `#[reply(tag = "…")]`, of `ScriptReply`.
pub const REPLY: Helper = Helper {
    name: "reply",
    key: Some("tag"),
    what: "the tag",
    once: "give a variant one tag",
    form: "`#[reply(tag = \"TAG\")]`",
    on_container: "`#[reply]` has no options on the type: the only option is `tag`, on enum variants",
    on_field: "`#[reply]` has no options on a field: fields decode with their own type's `FromRedisValue`",
};

/// `#[error_code("…")]`, of `ScriptError`.
pub const ERROR_CODE: Helper = Helper {
    name: "error_code",
    key: None,
    what: "the error code",
    once: "a variant has one error code",
    form: "`#[error_code(\"CONFLICT\")]`",
    on_container: "`#[error_code]` goes on a variant, not on the enum: `#[error_code(\"CONFLICT\")]`",
    on_field: "`#[error_code]` goes on a variant, not on a field: `#[error_code(\"CONFLICT\")]`",
};

/// Where an attribute sits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Container,
    Variant,
    Field,
}

/// What the helper attributes of one item said.
pub struct Read {
    /// The string given, if any (the first, when given twice).
    pub value: Option<LitStr>,
    /// Everything wrong with them.
    pub errors: Result<(), syn::Error>,
}

impl Helper {
    /// The attribute with a placeholder, for "give one of them another
    /// `#[reply(tag = "...")]`".
    pub fn placeholder(&self) -> String {
        match self.key {
            Some(key) => format!("`#[{}({key} = \"...\")]`", self.name),
            None => format!("`#[{}(\"...\")]`", self.name),
        }
    }
}

/// Reads `helper`'s attributes among `attributes`, on an item at `place`.
pub fn read(helper: &Helper, attributes: &[Attribute], place: Place) -> Read {
    let mut given = Vec::new();
    let mut errors = Errors::default();
    let misplaced = match place {
        Place::Container => Some(helper.on_container),
        Place::Field => Some(helper.on_field),
        Place::Variant => None,
    };
    for attribute in attributes
        .iter()
        .filter(|attribute| attribute.path().is_ident(helper.name))
    {
        if let Some(message) = misplaced {
            errors.push(syn::Error::new_spanned(attribute, message));
            continue;
        }
        let Meta::List(list) = &attribute.meta else {
            let contents = match helper.key {
                Some(_) => "the arguments",
                None => helper.what,
            };
            errors.push(syn::Error::new_spanned(
                attribute,
                format!("write {contents} in parentheses: {}", helper.form),
            ));
            continue;
        };
        match helper.key {
            Some(key) => keyed(helper, key, attribute, &mut given, &mut errors),
            None => positional(helper, attribute, list, &mut given, &mut errors),
        }
    }
    let mut given = given.into_iter();
    let value = given.next().map(|(literal, _)| literal);
    let shown = match helper.key {
        Some(key) => key.to_owned(),
        None => format!("#[{}]", helper.name),
    };
    for (_, written) in given {
        errors.push(syn::Error::new_spanned(
            written,
            format!("duplicate `{shown}`: {}", helper.once),
        ));
    }
    Read {
        value,
        errors: errors.finish(),
    }
}

/// A string given, and where it is written: the whole attribute for
/// `#[error_code("…")]`, `tag = "…"` for a key.
type Given = (LitStr, TokenStream);

/// `#[error_code("…")]`.
fn positional(
    helper: &Helper,
    attribute: &Attribute,
    list: &syn::MetaList,
    given: &mut Vec<Given>,
    errors: &mut Errors,
) {
    match list.parse_args::<LitStr>() {
        Ok(literal) => given.push((literal, attribute.to_token_stream())),
        Err(_) => errors.push(syn::Error::new(
            list.tokens.span(),
            format!(
                "{} must be one string literal: {}",
                helper.what, helper.form
            ),
        )),
    }
}

/// `#[reply(tag = "…")]`. Unknown keys are reported and skipped, so that
/// each mistake in the attribute is reported once.
fn keyed(
    helper: &Helper,
    key: &str,
    attribute: &Attribute,
    given: &mut Vec<Given>,
    errors: &mut Errors,
) {
    let result = attribute.parse_nested_meta(|meta| {
        if !meta.path.is_ident(key) {
            errors.push(meta.error(unknown_key(helper, key, &meta.path)));
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _: proc_macro2::Group = meta.input.parse()?;
            }
            return Ok(());
        }
        let value = meta
            .value()
            .map_err(|_| meta.error(format!("`{key}` needs a value: {}", helper.form)))?;
        let literal: LitStr = value.parse().map_err(|error| {
            syn::Error::new(
                error.span(),
                format!("{} must be a string literal: {}", helper.what, helper.form),
            )
        })?;
        let path = &meta.path;
        given.push((literal.clone(), quote::quote!(#path = #literal)));
        Ok(())
    });
    if let Err(error) = result {
        errors.push(error);
    }
}

/// "unknown `#[reply]` argument `tga`: did you mean `tag`?", with the
/// project's one typo policy.
fn unknown_key(helper: &Helper, key: &str, path: &syn::Path) -> String {
    let name = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| path.to_token_stream().to_string());
    let unknown = format!("unknown `#[{}]` argument `{name}`", helper.name);
    match redis_script_analysis::suggest::closest(&name, [key]) {
        Some(near) => format!("{unknown}: did you mean `{near}`?"),
        None => format!("{unknown}: the only one is `{key}`, as in {}", helper.form),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(helper: &Helper, attributes: &[Attribute], place: Place) -> Vec<String> {
        match read(helper, attributes, place).errors {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|error| error.to_string()).collect(),
        }
    }

    #[test]
    fn reads_the_tag_and_the_code() {
        let attributes: Vec<Attribute> = vec![syn::parse_quote!(#[reply(tag = "NO")])];
        let read_tag = read(&REPLY, &attributes, Place::Variant);
        assert_eq!(
            read_tag.value.map(|literal| literal.value()).as_deref(),
            Some("NO")
        );
        assert!(read_tag.errors.is_ok());
        let attributes: Vec<Attribute> = vec![syn::parse_quote!(#[error_code("GONE")])];
        let read_code = read(&ERROR_CODE, &attributes, Place::Variant);
        assert_eq!(
            read_code.value.map(|literal| literal.value()).as_deref(),
            Some("GONE")
        );
        assert!(read_code.errors.is_ok());
    }

    #[test]
    fn each_mistake_is_reported_once() {
        let attributes: Vec<Attribute> = vec![
            syn::parse_quote!(#[reply(tga = "A", rename(x), tag = "B")]),
            syn::parse_quote!(#[reply(tag = "C")]),
            syn::parse_quote!(#[serde(tag = "ignored")]),
        ];
        assert_eq!(
            messages(&REPLY, &attributes, Place::Variant),
            [
                "unknown `#[reply]` argument `tga`: did you mean `tag`?",
                "unknown `#[reply]` argument `rename`: the only one is `tag`, as in `#[reply(tag = \"TAG\")]`",
                "duplicate `tag`: give a variant one tag",
            ]
        );
    }

    #[test]
    fn malformed_attributes() {
        let attributes: Vec<Attribute> = vec![
            syn::parse_quote!(#[error_code = "EXPIRED"]),
            syn::parse_quote!(#[error_code(GONE)]),
            syn::parse_quote!(#[error_code("A")]),
            syn::parse_quote!(#[error_code("B")]),
        ];
        assert_eq!(
            messages(&ERROR_CODE, &attributes, Place::Variant),
            [
                "write the error code in parentheses: `#[error_code(\"CONFLICT\")]`",
                "the error code must be one string literal: `#[error_code(\"CONFLICT\")]`",
                "duplicate `#[error_code]`: a variant has one error code",
            ]
        );
        let attributes: Vec<Attribute> = vec![
            syn::parse_quote!(#[reply]),
            syn::parse_quote!(#[reply(tag)]),
        ];
        assert_eq!(
            messages(&REPLY, &attributes, Place::Variant),
            [
                "write the arguments in parentheses: `#[reply(tag = \"TAG\")]`",
                "`tag` needs a value: `#[reply(tag = \"TAG\")]`",
            ]
        );
    }

    #[test]
    fn misplaced_attributes() {
        let attributes: Vec<Attribute> = vec![syn::parse_quote!(#[error_code("A")])];
        assert_eq!(
            messages(&ERROR_CODE, &attributes, Place::Field),
            ["`#[error_code]` goes on a variant, not on a field: `#[error_code(\"CONFLICT\")]`"]
        );
        let read_field = read(&ERROR_CODE, &attributes, Place::Field);
        assert!(read_field.value.is_none());
    }

    #[test]
    fn placeholders() {
        assert_eq!(REPLY.placeholder(), "`#[reply(tag = \"...\")]`");
        assert_eq!(ERROR_CODE.placeholder(), "`#[error_code(\"...\")]`");
    }
}
