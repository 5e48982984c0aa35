//! The reply and error contract between the script and the Rust types,
//! checked at compile time.
//!
//! The attribute cannot see the definition of the `returns` or `errors`
//! type, so it cannot compare tags itself. Instead it emits one `const`
//! assertion per `return` site of the script, evaluated by the compiler
//! against the constants `#[derive(ScriptReply)]` and
//! `#[derive(ScriptError)]` emit (`ReplyShape::SHAPE`, `ScriptError::CODES`).
//! A failed assertion is a compile error whose message is a rendered
//! diagnostic pointing at the `return` line in the `.lua` file.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Type;

use redis_script_analysis::text::plural;
use redis_script_analysis::{self as lua, Diagnostic, ReturnShape, ReturnSite};

/// One assertion about one `return` site.
pub struct ContractCheck {
    kind: CheckKind,
    /// The rendered diagnostic shown when the assertion fails.
    message: String,
    /// Second message, for checks made of two assertions.
    second_message: Option<String>,
}

enum CheckKind {
    /// `{'TAG', e1, …, en}`: the tag exists, then it takes `elements`.
    Tag { tag: String, elements: usize },
    /// `{'TAG', …, f()}`: only the tag can be checked.
    TagExists { tag: String },
    /// `return 'TEXT'` or `redis.status_reply('TEXT')`.
    Bare { text: String },
    /// `redis.error_reply('CODE …')`: the error type declares `CODE`.
    ErrorCode { code: String },
    /// Element `index` (after the tag; `tag` is empty for an untagged
    /// array) must not land in a field of the reply type's `list`: a float
    /// literal or a non-numeric string in an integer field, a value that
    /// may be nil in a field that is not an `Option`, a table in a scalar
    /// field.
    Element {
        tag: String,
        index: usize,
        list: &'static str,
    },
    /// `{e1, …, en}`: the reply type takes an array of `elements`. The
    /// message is completed by the reply type's constants (its field
    /// count) where `message` holds [`FILLED_IN`].
    Array { elements: usize },
    /// Some `return` gives a table: the reply type is not a single value.
    Table,
    /// `return 1`: the reply type is not a struct, tuple or tagged enum.
    SingleValue,
    /// `return nil`, `return false`, a missing key's reply, no `return`:
    /// the reply type decodes nil.
    Nil,
    /// A command's reply of field names and values in turn (`HGETALL`):
    /// the reply type is no positional struct, tuple or tagged enum. The
    /// help is completed (the `HMGET` that returns the struct's fields in
    /// order, from `key`) where it holds [`FILLED_IN`].
    FieldValues { key: Option<String> },
    /// A status reply: `+OK` (`ok`), which redis-rs reads apart, and
    /// texts that are not numbers (`text`): the reply type decodes them.
    Status { ok: bool, text: bool },
}

/// Where words known only to rustc go in a message: the reply type's field
/// count ([`CheckKind::Array`]), a near-miss suggestion for an unknown tag
/// or error code.
const FILLED_IN: char = '\u{1}';

/// The parts of a message around [`FILLED_IN`], as plain arguments of a
/// `CheckMessage` builder (not format strings: no brace escaping).
fn split_filled_in(message: &str) -> (&str, &str) {
    message.split_once(FILLED_IN).unwrap_or((message, ""))
}

/// The assertion that the reply type has a variant tagged `tag`, with a
/// near-miss suggestion among its tags.
fn unknown_tag(check: &ContractCheck, tag: &str, shape: &TokenStream, span: Span) -> TokenStream {
    let private = crate::private();
    let (before, after) = split_filled_in(&check.message);
    // A type that takes no table at all is reported once, by the table
    // check, rather than once more per tag.
    quote_spanned! {span=>
        if #private::accepts_table(#shape) && !#private::has_tag(#shape, #tag) {
            ::core::panic!("{}", #private::unknown_tag_message(#shape, #tag, #before, #after).as_str());
        }
    }
}

/// The checks for the return sites of a script or a library function,
/// which messages call `subject` ("the script", "the function `name`").
/// Reply-shape checks are made only when it returns tagged tables (the
/// reply type is then expected to be a `#[derive(ScriptReply)]` type);
/// error-code checks only when an `errors` type is declared.
pub fn checks(
    returns: &[ReturnSite],
    reply: &Type,
    errors: Option<&Type>,
    subject: &str,
    path: &str,
    source: &str,
) -> Vec<ContractCheck> {
    let reply_name = type_name(reply);
    let tagged = returns
        .iter()
        .any(|site| matches!(site.shape, ReturnShape::Tagged { .. }));
    let render = |site: &ReturnSite, message: String, hint: String| {
        Diagnostic::error(
            lua::Code::ReplyType,
            site.line,
            site.column,
            site.width,
            message,
        )
        .with_help(hint)
        .render(path, source)
    };
    let mut checks = Vec::new();
    if let Some(site) = returns.iter().find(|site| {
        matches!(
            site.shape,
            ReturnShape::Tagged { .. } | ReturnShape::Array { .. }
        )
    }) {
        checks.push(ContractCheck {
            kind: CheckKind::Table,
            message: render(
                site,
                format!("{subject} returns a table, but `{reply_name}` is decoded from a single value"),
                "declare a type that decodes the table (a tuple, a `Vec`, or a `#[derive(ScriptReply)]` struct or enum), or return a single value".to_owned(),
            ),
            second_message: None,
        });
    }
    for site in returns {
        checks.extend(element_checks(site, &reply_name, subject, &render));
        if let Some((message, hint)) = nil_reply(&site.shape, &reply_name, subject) {
            checks.push(ContractCheck {
                kind: CheckKind::Nil,
                message: render(site, message, hint),
                second_message: None,
            });
        }
        checks.extend(form_check(site, reply, &reply_name, subject, &render));
        match &site.shape {
            ReturnShape::Array {
                elements,
                open_ended: false,
            } => {
                let count = elements.len();
                checks.push(ContractCheck {
                    kind: CheckKind::Array { elements: count },
                    message: render(
                        site,
                        format!(
                            "{subject} returns {}, but {FILLED_IN}",
                            plural(count, "element")
                        ),
                        format!("return one element per field of `{reply_name}`, in order (trailing `Option` fields may be left out), or change the type"),
                    ),
                    second_message: None,
                });
            }
            ReturnShape::Value(
                lua::ValueKind::Integer | lua::ValueKind::Float | lua::ValueKind::Boolean(true),
            ) => {
                checks.push(ContractCheck {
                    kind: CheckKind::SingleValue,
                    message: render(
                        site,
                        format!("{subject} returns a single value, but `{reply_name}` is decoded from a table"),
                        format!("return a table that `{reply_name}` decodes, or declare a single-value type such as `i64`"),
                    ),
                    second_message: None,
                });
            }
            ReturnShape::Tagged {
                tag,
                elements,
                open_ended,
            } if tagged => {
                let unknown = render(
                    site,
                    format!(
                        "{subject} returns the tag \"{tag}\", which the reply type `{reply_name}` does not handle"
                    ),
                    format!(
                        "{FILLED_IN}add a variant for it to `{reply_name}` (`#[reply(tag = \"{tag}\")]`), or change the script"
                    ),
                );
                if *open_ended {
                    checks.push(ContractCheck {
                        kind: CheckKind::TagExists { tag: tag.clone() },
                        message: unknown,
                        second_message: None,
                    });
                } else {
                    let count = elements.len();
                    let wrong_count = render(
                        site,
                        format!(
                            "{subject} returns \"{tag}\" with {} after the tag, but the variant of `{reply_name}` tagged \"{tag}\" does not take {count}",
                            plural(count, "element")
                        ),
                        "give the table one element per field of the variant (trailing `Option` fields may be left out), or change the variant".to_owned(),
                    );
                    checks.push(ContractCheck {
                        kind: CheckKind::Tag {
                            tag: tag.clone(),
                            elements: count,
                        },
                        message: unknown,
                        second_message: Some(wrong_count),
                    });
                }
            }
            ReturnShape::Status(Some(text))
            | ReturnShape::Value(lua::ValueKind::String(Some(text)))
                if tagged =>
            {
                checks.push(ContractCheck {
                    kind: CheckKind::Bare { text: text.clone() },
                    message: render(
                        site,
                        format!("{subject} returns the bare string \"{text}\", which the reply type `{reply_name}` does not accept"),
                        format!("add a unit variant for it to `{reply_name}` (`#[reply(tag = \"{text}\")]`), or return a table"),
                    ),
                    second_message: None,
                });
            }
            ReturnShape::Error(Some(code)) => {
                if let Some(errors) = errors {
                    let error_name = type_name(errors);
                    checks.push(ContractCheck {
                        kind: CheckKind::ErrorCode { code: code.clone() },
                        message: render(
                            site,
                            format!("the script replies with the error code {code}, which the error type `{error_name}` does not declare"),
                            match site.lone_error_word.as_deref().filter(|_| code == "ERR") {
                                Some(word) => format!(
                                    "{FILLED_IN}`redis.error_reply('{word}')` is sent as `ERR {word}`: Redis reads the first word as the code only when a message follows it; to reply with {word}, write `redis.error_reply('{word} <message>')` or `{{err = '{word}'}}` and give `{error_name}` a variant with `#[error_code(\"{word}\")]`"
                                ),
                                None => format!("{FILLED_IN}add a variant for it to `{error_name}` (`#[error_code(\"{code}\")]`), or change the script"),
                            },
                        ),
                        second_message: None,
                    });
                }
            }
            _ => {}
        }
    }
    checks
}

/// A warning (stable Rust's only way for a macro to warn is a deprecated
/// item) when the reply type has a variant whose tag the script never
/// replies with. Only when every reply of the script is known: one opaque
/// `return x` could produce any tag.
pub fn unreturned_variant_warning(
    returns: &[ReturnSite],
    reply: &Type,
    path: &str,
    site: &WarningSite,
) -> TokenStream {
    let mut tags: Vec<&str> = Vec::new();
    for site in returns {
        match &site.shape {
            ReturnShape::Tagged { tag, .. } => tags.push(tag),
            ReturnShape::Status(Some(text))
            | ReturnShape::Value(lua::ValueKind::String(Some(text))) => tags.push(text),
            ReturnShape::Error(_) | ReturnShape::Nil | ReturnShape::FallsOffEnd => {}
            _ => return TokenStream::new(),
        }
    }
    let tagged = returns
        .iter()
        .any(|site| matches!(site.shape, ReturnShape::Tagged { .. }));
    if !tagged {
        return TokenStream::new();
    }
    tags.sort_unstable();
    tags.dedup();
    let note = format!(
        "{path}: the script replies only with the tags {}, so a variant of `{}` with another tag is never produced; remove that variant, or return it from the script",
        tags.join(", "),
        type_name(reply),
    );
    let private = crate::private();
    let condition = quote! {
        #private::unreturned_variant(&<#reply as #private::ReplyShape>::SHAPE, &[#(#tags),*])
    };
    site.conditional_warning(lua::Code::UnreturnedVariant, &note, condition)
}

/// A warning when the `errors` type declares a code no error reply of the
/// script carries. Only when every code the script can reply with is known.
pub fn unraised_code_warning(
    error_codes: &lua::ErrorCodes,
    errors: &Type,
    path: &str,
    site: &WarningSite,
) -> TokenStream {
    if error_codes.unknown || error_codes.forwards_command_errors {
        return TokenStream::new();
    }
    let raised: Vec<&str> = error_codes.codes.iter().map(String::as_str).collect();
    let replies = if raised.is_empty() {
        "replies with no error code".to_owned()
    } else {
        format!("replies only with the error codes {}", raised.join(", "))
    };
    let note = format!(
        "{path}: the script {replies}, so a variant of `{}` with another code is never produced; remove that variant, or reply with it from the script",
        type_name(errors),
    );
    let private = crate::private();
    let condition = quote! {
        #private::unraised_code(<#errors as #private::ScriptError>::CODES, &[#(#raised),*])
    };
    site.conditional_warning(lua::Code::UnraisedErrorCode, &note, condition)
}

/// Where a declaration's warnings point, and the declaration's own
/// `#[allow(...)]` attributes: every warning is a `deprecated` lint on a
/// generated item, so `#[allow(deprecated)]` on the declaration silences
/// them.
pub struct WarningSite {
    pub span: Span,
    pub allows: TokenStream,
}

impl WarningSite {
    pub fn new(span: Span, attrs: &[syn::Attribute]) -> Self {
        let allows = attrs.iter().filter(|attr| attr.path().is_ident("allow"));
        Self {
            span,
            allows: quote! { #(#allows)* },
        }
    }

    /// A deprecation warning carrying `note` (stable Rust's only way for a
    /// macro to warn).
    pub fn warning(&self, note: &str) -> TokenStream {
        let allows = &self.allows;
        quote_spanned! {self.span=>
            #allows
            const _: () = {
                #[deprecated(note = #note)]
                #[allow(non_upper_case_globals)]
                const redis_script_note: () = ();
                redis_script_note
            };
        }
    }

    /// One warning per note.
    pub fn warnings(&self, notes: &[String]) -> TokenStream {
        notes.iter().map(|note| self.warning(note)).collect()
    }

    /// A deprecation warning carrying `note` when the `const` expression
    /// `condition` is true; the code's name shows in the warning's first
    /// words.
    fn conditional_warning(
        &self,
        code: lua::Code,
        note: &str,
        condition: TokenStream,
    ) -> TokenStream {
        let span = self.span;
        let allows = &self.allows;
        let name = syn::Ident::new(code.name(), span);
        let note = format!("[{code}] {note}");
        quote_spanned! {span=>
            #allows
            const _: () = {
                struct RedisScriptWarning<const WARN: bool>;
                #[allow(dead_code)]
                impl RedisScriptWarning<true> {
                    #[deprecated(note = #note)]
                    const fn #name() {}
                }
                #[allow(dead_code)]
                impl RedisScriptWarning<false> {
                    const fn #name() {}
                }
                RedisScriptWarning::<{ #condition }>::#name()
            };
        }
    }
}

/// The check of what a site replies against what redis-rs decodes, by the
/// form of the reply: a command's map sent flat, a status.
fn form_check(
    site: &ReturnSite,
    reply: &Type,
    reply_name: &str,
    subject: &str,
    render: &impl Fn(&ReturnSite, String, String) -> String,
) -> Option<ContractCheck> {
    let (origin, texts): (TextOrigin<'_>, Vec<&str>) = match (&site.form, &site.shape) {
        (Some(lua::ReplyForm::FieldValues { command, key }), _) => {
            // A hash's fields and values are strings; other maps hold
            // numbers and arrays too (`XINFO STREAM`).
            let map = if command == "HGETALL" {
                "`HashMap<String, String>` (or `Vec<(String, String)>`)"
            } else {
                "`HashMap<String, redis::Value>`"
            };
            let fix = match key.as_deref().filter(|_| command == "HGETALL") {
                Some(_) => FILLED_IN.to_string(),
                None => String::new(),
            };
            return Some(ContractCheck {
                kind: CheckKind::FieldValues { key: key.clone() },
                message: render(
                    site,
                    format!(
                        "{subject} returns the reply of `{command}`, field names and values in turn (`name, value, name, value, …`), but `{reply_name}` is decoded by position: a call fails to decode unless the count happens to match, and then names land where values belong"
                    ),
                    format!("declare the reply {map}{fix}"),
                ),
                second_message: None,
            });
        }
        (Some(lua::ReplyForm::Status { command, texts }), _) => (
            TextOrigin::Command(command.as_str()),
            texts.iter().map(String::as_str).collect(),
        ),
        (None, ReturnShape::Status(Some(text))) => (TextOrigin::Status, vec![text.as_str()]),
        // A string returned whole is read the same way as a status.
        (None, ReturnShape::Value(lua::ValueKind::String(Some(text)))) => {
            (TextOrigin::String, vec![text.as_str()])
        }
        _ => return None,
    };
    // Only the numbers and `bool` refuse a status; a check on any other
    // type would require it to be a `ReplyShape` (a type decoded by hand
    // need not be) for nothing.
    if !number_or_bool(reply) {
        return None;
    }
    // redis-rs decodes a status into a number by parsing its text: only
    // texts that are no number fail (`inf` and `nan` are floats).
    let failing: Vec<&str> = texts
        .into_iter()
        .filter(|text| text.parse::<f64>().is_err() && text.parse::<i128>().is_err())
        .collect();
    if failing.is_empty() {
        return None;
    }
    let ok = failing.contains(&"OK");
    let text = failing.iter().any(|text| *text != "OK");
    let shown = failing
        .iter()
        .map(|text| format!("`{text}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    let message = match origin {
        TextOrigin::String => format!(
            "{subject} returns the string {shown} here, but `{reply_name}` cannot be decoded from it: it is not a number, so each call that ends here fails to decode"
        ),
        TextOrigin::Command(command) => format!(
            "{subject} returns the reply of `{command}` here, the status {shown}, but `{reply_name}` cannot be decoded from it: each call that ends here with it fails to decode"
        ),
        TextOrigin::Status => format!(
            "{subject} returns the status reply {shown} here, but `{reply_name}` cannot be decoded from it: each call that ends here fails to decode"
        ),
    };
    let string = if reply_name.starts_with("Option<") {
        "Option<String>"
    } else {
        "String"
    };
    Some(ContractCheck {
        kind: CheckKind::Status { ok, text },
        message: render(
            site,
            message,
            match origin {
                TextOrigin::String => format!("declare the reply `{string}`, or return a number"),
                _ => format!(
                    "declare the reply `{string}` (a status arrives as its text), or `()` to ignore it, or return a number"
                ),
            },
        ),
        second_message: None,
    })
}

/// Where a returned text comes from, for the message.
#[derive(Clone, Copy)]
enum TextOrigin<'a> {
    /// A command's status reply, returned as it came.
    Command(&'a str),
    /// `redis.status_reply('…')` or `{ok = '…'}`.
    Status,
    /// A string literal, sent as a bulk string.
    String,
}

/// Whether `ty` is, as written, a Rust number or `bool`, or an `Option`,
/// `Box` or `Arc` of one.
fn number_or_bool(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    match (&last.arguments, name.as_str()) {
        (syn::PathArguments::None, _) => matches!(
            name.as_str(),
            "i8" | "i16"
                | "i32"
                | "i64"
                | "i128"
                | "isize"
                | "u8"
                | "u16"
                | "u32"
                | "u64"
                | "u128"
                | "usize"
                | "f32"
                | "f64"
                | "bool"
        ),
        (syn::PathArguments::AngleBracketed(arguments), "Option" | "Box" | "Arc") => {
            match arguments.args.first() {
                Some(syn::GenericArgument::Type(inner)) if arguments.args.len() == 1 => {
                    number_or_bool(inner)
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// What a reply of `shape` says and suggests when it is nil, or may be,
/// and the reply type `reply_name` does not decode nil.
fn nil_reply(shape: &ReturnShape, reply_name: &str, subject: &str) -> Option<(String, String)> {
    let option = format!("declare the reply `Option<{reply_name}>`");
    Some(match shape {
        ReturnShape::Nil | ReturnShape::Value(lua::ValueKind::Nil) => (
            format!(
                "{subject} returns nil here, but `{reply_name}` cannot be decoded from nil: every call that gets here fails to decode"
            ),
            format!("{option}, or return a value of the type"),
        ),
        ReturnShape::FallsOffEnd => (
            format!(
                "{subject} can end here without a `return`, which replies nil, but `{reply_name}` cannot be decoded from nil"
            ),
            format!("{option}, or end every path with a `return`"),
        ),
        ReturnShape::Value(lua::ValueKind::Boolean(false)) => (
            format!(
                "{subject} returns `false` here, which Redis sends as nil, but `{reply_name}` cannot be decoded from nil"
            ),
            format!("{option}, or return a value of the type"),
        ),
        ReturnShape::Value(lua::ValueKind::MaybeNil) => (
            format!(
                "{subject} returns a value that may be nil or false here (a missing key's reply, for one), which arrives as nil, but `{reply_name}` cannot be decoded from nil: those calls fail to decode"
            ),
            match lua_default(reply_name) {
                Some(default) => {
                    format!(
                        "{option}, or give the Lua a default of the type: `return … or {default}`"
                    )
                }
                None => format!(
                    "{option}, or give the Lua a default of the type (`return … or 0` for a number)"
                ),
            },
        ),
        _ => return None,
    })
}

/// A Lua value that decodes into the Rust type `name`, for a default.
fn lua_default(name: &str) -> Option<&'static str> {
    match name {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" | "f32" | "f64" => Some("0"),
        "String" => Some("''"),
        _ => None,
    }
}

/// The element checks of a returned table: what each element is, as far
/// as the analysis knows, against the field it decodes into.
///
/// Redis converts a Lua number reply to an integer by truncating it, so a
/// float literal returned into an integer field silently loses its
/// fraction; a string that is not a number fails to decode into one; a
/// Lua `false` (a missing key's reply) arrives as nil, which only an
/// `Option` field takes; a table decodes into no scalar.
fn element_checks(
    site: &ReturnSite,
    reply_name: &str,
    subject: &str,
    render: &impl Fn(&ReturnSite, String, String) -> String,
) -> Vec<ContractCheck> {
    let (tag, elements) = match &site.shape {
        ReturnShape::Tagged { tag, elements, .. } => (tag.as_str(), elements),
        ReturnShape::Array { elements, .. } => ("", elements),
        _ => return Vec::new(),
    };
    elements
        .iter()
        .enumerate()
        .filter_map(|(index, kind)| {
            let position = if tag.is_empty() {
                format!("element {}", index + 1)
            } else {
                format!("element {} after the tag \"{tag}\"", index + 1)
            };
            let (list, message, hint) = match kind {
                lua::ValueKind::Float => (
                    "INTEGER_ELEMENTS",
                    format!("{subject} returns a float literal as {position}, which `{reply_name}` decodes into an integer field: Redis truncates Lua numbers to integers in replies"),
                    "return it as a string (`tostring(x)`) into a `String` or `f64` field, or return an integer".to_owned(),
                ),
                lua::ValueKind::String(Some(text)) if text.trim().parse::<i64>().is_err() => (
                    "INTEGER_ELEMENTS",
                    format!("{subject} returns the string '{text}' as {position}, which `{reply_name}` decodes into an integer field: it is not a number, so decoding fails on every call"),
                    "return a number there, or declare the field a `String`".to_owned(),
                ),
                lua::ValueKind::MaybeNil => (
                    "REQUIRED_ELEMENTS",
                    format!("{subject} returns {position} as a value that may be nil or false (a missing key's reply, for one), which arrives as nil, but `{reply_name}` decodes it into a field that is not an `Option`"),
                    "declare the field as `Option<…>`, or give the element a default of the field's type in the script: `v or 0` for a number, `v or ''` for a string".to_owned(),
                ),
                lua::ValueKind::Table => (
                    "SCALAR_ELEMENTS",
                    format!("{subject} returns a table as {position}, but `{reply_name}` decodes it into a scalar field (a number, a string or a boolean)"),
                    "declare a type that decodes the table there (a `Vec`, a tuple, a `#[derive(ScriptReply)]` type), or return a scalar".to_owned(),
                ),
                _ => return None,
            };
            Some(ContractCheck {
                kind: CheckKind::Element {
                    tag: tag.to_owned(),
                    index,
                    list,
                },
                message: render(site, message, hint),
                second_message: None,
            })
        })
        .collect()
}

/// `const` assertions for `checks`, spanned on the attribute's `path` so
/// the compiler points there as well as into the `.lua` file.
pub fn assertions(
    checks: &[ContractCheck],
    reply: &Type,
    errors: Option<&Type>,
    span: Span,
) -> TokenStream {
    let private = crate::private();
    let shape = quote! { &<#reply as #private::ReplyShape>::SHAPE };
    let asserts = checks.iter().map(|check| {
        let message = escape_braces(&check.message);
        match &check.kind {
            CheckKind::Tag { tag, elements } => {
                let unknown = unknown_tag(check, tag, &shape, span);
                let second = escape_braces(check.second_message.as_deref().unwrap_or_default());
                quote_spanned! {span=>
                    #unknown
                    ::core::assert!(
                        !#private::accepts_table(#shape) || #private::accepts_tag(#shape, #tag, #elements),
                        #second
                    );
                }
            }
            CheckKind::TagExists { tag } => unknown_tag(check, tag, &shape, span),
            CheckKind::Bare { text } => quote_spanned! {span=>
                ::core::assert!(#private::accepts_bare(#shape, #text), #message);
            },
            CheckKind::Element { tag, index, list } => {
                let list = syn::Ident::new(list, span);
                quote_spanned! {span=>
                    ::core::assert!(
                        !#private::has_element(<#reply as #private::ReplyShape>::#list, #tag, #index),
                        #message
                    );
                }
            }
            CheckKind::Array { elements } => {
                let (before, after) = split_filled_in(&check.message);
                quote_spanned! {span=>
                    if !#private::accepts_array(#shape, #elements) {
                        ::core::panic!("{}", #private::array_mismatch(#shape, #before, #after).as_str());
                    }
                }
            }
            CheckKind::Table => quote_spanned! {span=>
                ::core::assert!(#private::accepts_table(#shape), #message);
            },
            CheckKind::SingleValue => quote_spanned! {span=>
                ::core::assert!(#private::accepts_single_value(#shape), #message);
            },
            CheckKind::Nil => quote_spanned! {span=>
                ::core::assert!(<#reply as #private::ReplyShape>::ACCEPTS_NIL, #message);
            },
            // Through the probe: a hand-written `FromRedisValue` type may
            // read a map by name, and is not made to describe itself.
            CheckKind::FieldValues { .. } if !check.message.contains(FILLED_IN) => {
                quote_spanned! {span=>
                    use #private::NoReplyShape as _;
                    if let ::core::option::Option::Some(shape) = #private::ShapeProbe::<#reply>::SHAPE {
                        ::core::assert!(#private::accepts_field_values(shape), #message);
                    }
                }
            }
            CheckKind::FieldValues { key } => {
                let (before, after) = split_filled_in(&check.message);
                let key = key.as_deref().unwrap_or_default();
                quote_spanned! {span=>
                    use #private::NoReplyShape as _;
                    if let ::core::option::Option::Some(shape) = #private::ShapeProbe::<#reply>::SHAPE {
                        if !#private::accepts_field_values(shape) {
                            ::core::panic!("{}", #private::hmget_fix(
                                shape, #private::ShapeProbe::<#reply>::FIELD_NAMES, #key, #before, #after,
                            ).as_str());
                        }
                    }
                }
            }
            CheckKind::Status { ok, text } => quote_spanned! {span=>
                ::core::assert!(
                    (!#ok || <#reply as #private::ReplyShape>::ACCEPTS_OK)
                        && (!#text || <#reply as #private::ReplyShape>::ACCEPTS_STATUS),
                    #message
                );
            },
            CheckKind::ErrorCode { code } => match errors {
                Some(errors) => {
                    let (before, after) = split_filled_in(&check.message);
                    quote_spanned! {span=>
                        if !#private::contains_code(<#errors as #private::ScriptError>::CODES, #code) {
                            ::core::panic!("{}", #private::unknown_code_message(
                                <#errors as #private::ScriptError>::CODES, #code, #before, #after,
                            ).as_str());
                        }
                    }
                }
                None => TokenStream::new(),
            },
        }
    });
    // One constant per check: rustc evaluates each on its own, so every
    // mismatch of the script and the types is reported in one build.
    quote_spanned! {span=>
        #(const _: () = { #asserts };)*
    }
}

/// Whether [`assertions`] for `checks` require the reply type to be a
/// `ReplyShape` (every check but an error code's and a map reply's does).
pub fn need_reply_shape(checks: &[ContractCheck]) -> bool {
    checks.iter().any(|check| {
        !matches!(
            check.kind,
            CheckKind::ErrorCode { .. } | CheckKind::FieldValues { .. }
        )
    })
}

/// `assert!` messages are format strings; the rendered Lua has braces.
fn escape_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

fn type_name(ty: &Type) -> String {
    quote!(#ty).to_string().replace(' ', "")
}
