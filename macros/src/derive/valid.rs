//! The derives' checks. Each walks the model in source order and reports
//! both what the helper attributes' reader found and its own findings, so
//! that one build lists every mistake, each once.

use redis_script_codes::{is_error_code, reserved};
use syn::spanned::Spanned as _;

use super::ast::{Container, Data, Fields, Style, Variant};
use super::attr::{ERROR_CODE, Helper, REPLY};
use super::json_model::{JsonContainer, JsonData};
use crate::errors::Errors;

/// `#[derive(ScriptReply)]`.
pub fn script_reply(container: &Container<'_>, errors: &mut Errors) {
    for lifetime in container.generics.lifetimes() {
        errors.push(syn::Error::new(
            lifetime.lifetime.span(),
            "a decoded reply owns its data, so `ScriptReply` cannot be derived for a type with lifetime parameters; use owned fields (`String`, `Vec<u8>`)",
        ));
    }
    report(&container.attributes, errors);
    let name = container.name();
    match &container.data {
        Data::Struct(_, fields) => {
            trailing_options(fields, errors);
            if fields.style == Style::Unit {
                errors.push(syn::Error::new(
                    container.ident.span(),
                    format!(
                        "`{name}` has no fields, so there is nothing to decode; derive `ScriptReply` on a struct with fields (one per array element) or on an enum, or declare the script's reply as `()`"
                    ),
                ));
            }
        }
        Data::Enum(variants) if variants.is_empty() => errors.push(syn::Error::new(
            container.ident.span(),
            format!(
                "`{name}` has no variants, so no reply can decode into it; add one variant per tag the script returns"
            ),
        )),
        Data::Enum(variants) => {
            let mut labelled = Vec::new();
            for variant in variants {
                report(&variant.attributes, errors);
                let empty = variant.label.written && variant.label.value.is_empty();
                if empty {
                    errors.push(syn::Error::new(
                        variant.label.span,
                        "the tag is empty: give the string the script puts first in the array, e.g. `tag = \"DENIED\"`",
                    ));
                }
                let fields_valid = trailing_options(&variant.fields, errors);
                if variant.attributes.is_ok() && !empty && fields_valid {
                    labelled.push(variant);
                }
            }
            unique_labels(&labelled, &REPLY, errors);
        }
        Data::Union(union_token) => errors.push(syn::Error::new(
            *union_token,
            "`ScriptReply` cannot be derived for a union: a reply decodes into a struct (positional array elements) or an enum (tagged arrays)",
        )),
    }
}

/// `#[derive(ScriptError)]`.
pub fn script_error(container: &Container<'_>, errors: &mut Errors) {
    report(&container.attributes, errors);
    if !container.generics.params.is_empty() {
        errors.push(syn::Error::new(
            container.generics.span(),
            "`ScriptError` cannot be derived for a generic type: declare a concrete enum with one variant per error code",
        ));
    }
    let variants = match &container.data {
        Data::Enum(variants) => variants,
        Data::Struct(struct_token, _) => {
            errors.push(syn::Error::new(
                *struct_token,
                "`ScriptError` is derived for an enum, one variant per error code, e.g. `enum VersionError { Conflict { expected: u64, found: u64 } }`",
            ));
            return;
        }
        Data::Union(union_token) => {
            errors.push(syn::Error::new(
                *union_token,
                "`ScriptError` is derived for an enum, one variant per error code, not for a union",
            ));
            return;
        }
    };
    if variants.is_empty() {
        errors.push(syn::Error::new(
            container.ident.span(),
            format!(
                "`{}` has no variants: add one per error code the script raises",
                container.name()
            ),
        ));
        return;
    }
    let mut labelled = Vec::new();
    for variant in variants {
        report(&variant.attributes, errors);
        let code_valid = variant.attributes.is_ok() && check_code(variant, errors);
        for field in &variant.fields.fields {
            report(&field.attributes, errors);
        }
        if code_valid {
            labelled.push(variant);
        }
    }
    unique_labels(&labelled, &ERROR_CODE, errors);
}

/// What the attribute reader found wrong with an item's attributes.
fn report(attributes: &Result<(), syn::Error>, errors: &mut Errors) {
    if let Err(error) = attributes {
        errors.push(error.clone());
    }
}

/// The rule of [`is_error_code`], for messages.
const CODE_RULE: &str = "an error code is one upper-case word without spaces (A-Z, 0-9, `_` and `-`, starting with a letter)";

/// Reports the variant's code unless the runtime can match it: it must be
/// an error code ([`is_error_code`], the words the analysis checks scripts
/// against), and not one clients act on by themselves (the analysis
/// rejects scripts that reply with those, so such a variant could never be
/// decoded). `true` when it is fine.
fn check_code(variant: &Variant<'_>, errors: &mut Errors) -> bool {
    let label = &variant.label;
    let code = &label.value;
    let message = if !is_error_code(code) {
        if label.written {
            format!(
                "{CODE_RULE}: the first word of `redis.error_reply('CODE message')`, e.g. \"CONFLICT\""
            )
        } else {
            format!(
                "the variant's name gives the error code \"{code}\", but {CODE_RULE}; give the variant its code with `#[error_code(\"...\")]`"
            )
        }
    } else if let Some(reserved) = reserved(code) {
        let origin = if label.written {
            ""
        } else {
            " (from the variant's name)"
        };
        format!(
            "the error code {code}{origin} belongs to the server: {}, so no script may reply with it and this variant could never be decoded; give the variant a code of its own with `#[error_code(\"...\")]`",
            reserved.reason
        )
    } else {
        return true;
    };
    errors.push(syn::Error::new(label.span, message));
    false
}

/// Reports each field of a struct or variant that the attribute reader
/// found wrong, and each required field after an `Option`; `true` when
/// there were none of the latter.
fn trailing_options(fields: &Fields<'_>, errors: &mut Errors) -> bool {
    let mut first_optional: Option<String> = None;
    let mut valid = true;
    for (index, field) in fields.fields.iter().enumerate() {
        report(&field.attributes, errors);
        let label = field.label();
        let shown = match field.ident {
            Some(_) => format!("`{label}`"),
            None => format!("field {index} (`{label}`)"),
        };
        if field.is_optional() {
            first_optional.get_or_insert(shown);
        } else if let Some(optional) = &first_optional {
            errors.push(syn::Error::new(
                field.ty.span(),
                format!(
                    "{shown} is required but follows the optional {optional}: a Lua array ends at its first nil, so only trailing fields can be absent; make {shown} an `Option` too, or move it before {optional}"
                ),
            ));
            valid = false;
        }
    }
    valid
}

/// Rejects two variants with one tag or code: the second could never be
/// decoded. Only variants without other errors take part, so that a
/// mistake is not reported again as a clash.
fn unique_labels(variants: &[&Variant<'_>], helper: &Helper, errors: &mut Errors) {
    for (index, variant) in variants.iter().enumerate() {
        let Some(first) = variants
            .iter()
            .take(index)
            .find(|earlier| earlier.label.value == variant.label.value)
        else {
            continue;
        };
        let (first, later) = (first.name(), variant.name());
        errors.push(syn::Error::new(
            variant.label.span,
            format!(
                "variants `{first}` and `{later}` both have {} \"{}\", so `{later}` could never be decoded; give one of them another {}",
                helper.what,
                variant.label.value,
                helper.placeholder(),
            ),
        ));
    }
}

/// `#[derive(JsonShape)]`: its own attribute's mistakes and a union.
/// Serde's attributes are serde's to check.
pub fn json_shape(container: &JsonContainer<'_>, errors: &mut Errors) {
    report(&container.attribute_errors, errors);
    if let JsonData::Union(union_token) = container.data {
        errors.push(syn::Error::new(
            union_token,
            format!(
                "`JsonShape` cannot be derived for a union: serde writes no JSON for one (it derives `Serialize` for structs and enums only); describe a struct or an enum, or implement `JsonShape` for `{}` by hand",
                container.name()
            ),
        ));
    }
}
