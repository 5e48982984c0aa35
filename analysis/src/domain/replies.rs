//! What `redis.call` returns to the script: the command's reply (from the
//! server model, [`shapes`](crate::model::commands::shapes)) converted the way the
//! server converts replies into Lua values.
//!
//! By default a script speaks RESP2: an integer becomes a number, a bulk
//! string a string, a null bulk or null array **false**, an array a table,
//! a simple string a table `{ok = …}`. The RESP3 types arrive in their RESP2
//! form: a double or big number as a string, a boolean as 1 or 0, a map as
//! a flat array, a set as an array. After `redis.setresp(3)` the script
//! gets the RESP3 forms instead: null becomes **nil**, a boolean a boolean,
//! a double `{double = n}`, a map `{map = {…}}`, a set `{set = {…}}`, a big
//! number `{big_number = '…'}`.

use crate::domain::analysis::ReplyForm;
use crate::domain::types::{Kinds, TableType, Type};
use crate::model::argument_grammar::options_given;
use crate::model::commands::shapes::{self, Reply, ShapeForm};
use crate::model::target::ReleaseSet;

/// Which protocol the script's calls speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Resp {
    /// The default.
    #[default]
    Two,
    /// After `redis.setresp(3)`.
    Three,
    /// The script switches, or not, at run time: either form.
    Either,
}

impl Resp {
    /// The protocol of a script's replies: RESP2 unless it calls
    /// `redis.setresp` with anything but the literal 2, anywhere (the
    /// call may run before any reply, or after some).
    pub(crate) fn of_source(source: &str) -> Self {
        let switches = source.match_indices("setresp").any(|(at, word)| {
            let rest = source.get(at + word.len()..).unwrap_or_default();
            let argument: String = rest
                .chars()
                .filter(|c| !c.is_whitespace())
                .take(3)
                .collect();
            argument != "(2)"
        });
        if switches { Self::Either } else { Self::Two }
    }
}

/// Where a reply comes from, for the messages about its nulls: the
/// command as written, and the text of its first key argument.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caller<'a> {
    /// `GET`, `HGET`.
    pub command: &'a str,
    /// `KEYS[2]`, when the call names its key.
    pub key: Option<&'a str>,
}

/// The type of what `redis.call` of the command `name` (lowercase,
/// `parent|sub` for a subcommand) returns on the `releases`, or unknown
/// where the model has no shape for it there.
pub(crate) fn reply_type(name: &str, releases: ReleaseSet, resp: Resp, caller: Caller<'_>) -> Type {
    let Some(shape) = shapes::shape(name) else {
        return Type::unknown();
    };
    let mut forms = shape.forms_for(releases).peekable();
    if forms.peek().is_none() {
        return Type::unknown();
    }
    let mut joined: Option<Type> = None;
    for form in forms {
        let converted = match resp {
            Resp::Two => lua_type(form.reply, Resp::Two, caller),
            Resp::Three => lua_type(form.reply, Resp::Three, caller),
            Resp::Either => lua_type(form.reply, Resp::Two, caller).join(&lua_type(
                form.reply,
                Resp::Three,
                caller,
            )),
        };
        joined = Some(match joined {
            Some(joined) => joined.join(&converted),
            None => converted,
        });
    }
    joined.unwrap_or_else(Type::unknown)
}

/// `reply` as the script sees it under `resp` (never [`Resp::Either`]).
pub(crate) fn lua_type(reply: &Reply, resp: Resp, caller: Caller<'_>) -> Type {
    let three = resp == Resp::Three;
    match reply {
        Reply::Integer(values) => Type {
            integers: values.map(std::rc::Rc::from),
            ..Type::of(Kinds::INTEGER)
        },
        Reply::BulkString | Reply::Verbatim if !three => Type::of(Kinds::STRING),
        Reply::BulkString => Type::of(Kinds::STRING),
        Reply::Double | Reply::BigNumber if !three => Type::of(Kinds::NUMERIC_STRING),
        Reply::Boolean if !three => Type {
            integers: Some(std::rc::Rc::from(vec![0, 1])),
            ..Type::of(Kinds::INTEGER)
        },
        Reply::Boolean => Type::of(Kinds::BOOLEAN),
        // `{ok = …}`, `{double = …}`, `{big_number = …}`,
        // `{verbatim_string = …}`: tables with one field.
        Reply::Status(_) | Reply::Double | Reply::BigNumber | Reply::Verbatim => {
            Type::of(Kinds::TABLE)
        }
        Reply::Null(description) => {
            let (kind, word) = if three {
                (Kinds::NIL, "nil")
            } else {
                (Kinds::FALSE, "false")
            };
            Type::of(kind).absent(
                format!("`{}`", caller.command),
                format!("is {word} {}", condition(description, caller)),
            )
        }
        Reply::Array(element) | Reply::Set(element) => {
            let table = Type::table(TableType {
                elements: Some(lua_type(element, resp, caller)),
                positions: Vec::new(),
                may_be_empty: true,
                even_length: false,
                keys: None,
                pairs: None,
                fields: None,
            });
            if three && matches!(reply, Reply::Set(_)) {
                // `{set = {…}}`: the elements are a level down.
                return Type::of(Kinds::TABLE);
            }
            table
        }
        Reply::FlatPairs([first, second]) => {
            let first = lua_type(first, resp, caller);
            let second = lua_type(second, resp, caller);
            let elements = if three {
                Type::table(TableType {
                    elements: None,
                    positions: vec![first, second],
                    may_be_empty: false,
                    even_length: false,
                    keys: None,
                    pairs: None,
                    fields: None,
                })
            } else {
                first.join(&second)
            };
            Type::table(TableType {
                elements: Some(elements),
                positions: Vec::new(),
                may_be_empty: true,
                even_length: !three,
                keys: None,
                pairs: None,
                fields: None,
            })
        }
        Reply::Tuple(items) => Type::table(TableType {
            elements: None,
            positions: items
                .iter()
                .map(|item| lua_type(item, resp, caller))
                .collect(),
            may_be_empty: items.is_empty(),
            even_length: false,
            keys: None,
            pairs: None,
            fields: None,
        }),
        Reply::Map { key, value } => {
            if three {
                return Type::of(Kinds::TABLE);
            }
            // A flat array: key, value, key, value.
            Type::table(TableType {
                elements: Some(lua_type(key, resp, caller).join(&lua_type(value, resp, caller))),
                positions: Vec::new(),
                may_be_empty: true,
                even_length: true,
                keys: None,
                pairs: None,
                fields: None,
            })
        }
        Reply::OneOf(alternatives) => alternatives
            .iter()
            .map(|alternative| lua_type(alternative, resp, caller))
            .reduce(|joined, next| joined.join(&next))
            .unwrap_or_else(Type::unknown),
        Reply::Unknown => Type::unknown(),
    }
}

/// When a null comes, from the specification's description: "when
/// `KEYS[2]` does not exist" where it says the key does not exist.
fn condition(description: &str, caller: Caller<'_>) -> String {
    let text = description.trim().trim_end_matches('.');
    let lower = text.to_ascii_lowercase();
    let missing_key = lower.contains("key does not exist") || lower.contains("key doesn't exist");
    match (missing_key, caller.key) {
        (true, Some(key)) if lower == "key does not exist" || lower == "key doesn't exist" => {
            format!("when `{key}` does not exist")
        }
        (true, Some(key)) => {
            format!("when `{key}` does not exist, or as the server documents it: \"{text}\"")
        }
        _ if text.is_empty() => "in some cases".to_owned(),
        _ => format!("as the server documents it: \"{text}\""),
    }
}

/// The Lua types (`"number"`, `"string"`, `"boolean"`, `"nil"`, `"table"`)
/// a script may see from `redis.call` of `command` (lowercase,
/// `parent|sub`) on `release` (`redis-7.0`), by default or after
/// `redis.setresp(3)`; `None` where the model has no reply type for it.
/// What the live tests of the conversion rules compare with a server.
#[doc(hidden)]
pub fn reply_lua_types(command: &str, release: &str, resp3: bool) -> Option<Vec<&'static str>> {
    let index = crate::model::target::RELEASES
        .iter()
        .position(|known| known.name == release)?;
    let resp = if resp3 { Resp::Three } else { Resp::Two };
    let caller = Caller { command, key: None };
    let ty = reply_type(command, ReleaseSet::only(index), resp, caller);
    (!ty.is_unknown()).then(|| ty.kinds.lua_types())
}

/// Commands whose reply is a status or nil unless the call passes a word
/// that brings another reply: `SET … GET` replies the old value (a bulk
/// string) instead of `OK`.
const REPLY_SWITCHES: &[(&str, &str)] = &[("set", "GET")];

/// The form of what `redis.call` of `name` (lowercase, `parent|sub`)
/// replies with `words` (the literal texts of the operands after the
/// command's name, `None` for a value known at run time; `spread_from`
/// the first `unpack(…)` or trailing call among them), when it is the
/// same on every release of `releases` and decides which Rust types decode
/// it: a status (or nil), or a map sent flat (RESP2 only: after
/// `redis.setresp(3)` it is `{map = …}`). `None` when any form or any
/// alternative of one may be something else, or depends on arguments the
/// call does not spell out.
pub(crate) fn reply_form(
    name: &str,
    releases: ReleaseSet,
    resp: Resp,
    caller: Caller<'_>,
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> Option<ReplyForm> {
    let forms = shapes::shape(name)?.forms_covering(releases)?;
    let mut statuses: Vec<String> = Vec::new();
    let mut maps = false;
    for form in forms {
        let switch = REPLY_SWITCHES
            .iter()
            .find(|(command, _)| *command == name)
            .map(|(_, token)| *token);
        // Without the switching word, its alternatives are not sent.
        let switched_off =
            switch.is_some_and(|token| token_surely_absent(form, token, words, spread_from));
        let mut alternatives = Vec::new();
        leaves(form.reply, &mut alternatives);
        for alternative in alternatives {
            match alternative {
                Reply::Null(_) => {}
                Reply::BulkString if switched_off => {}
                Reply::Status(Some(text)) => {
                    if !statuses.iter().any(|known| known == text) {
                        statuses.push((*text).to_owned());
                    }
                }
                Reply::Map { .. } if resp == Resp::Two => maps = true,
                _ => return None,
            }
        }
    }
    match (statuses.is_empty(), maps) {
        (false, false) => Some(ReplyForm::Status {
            command: caller.command.to_owned(),
            texts: statuses,
        }),
        (true, true) => Some(ReplyForm::FieldValues {
            command: caller.command.to_owned(),
            key: caller.key.map(str::to_owned),
        }),
        _ => None,
    }
}

/// The alternatives of `reply`, `OneOf`s flattened.
fn leaves(reply: &'static Reply, found: &mut Vec<&'static Reply>) {
    match reply {
        Reply::OneOf(alternatives) => {
            for alternative in *alternatives {
                leaves(alternative, found);
            }
        }
        other => found.push(other),
    }
}

/// Whether the call surely does not pass the word `token` on `form`:
/// every operand after the required values is a literal option word of
/// the grammar or the value after one, and none is that word.
fn token_surely_absent(
    form: &ShapeForm,
    token: &str,
    words: &[Option<&str>],
    spread_from: Option<usize>,
) -> bool {
    options_given(form.arguments, words, spread_from)
        .is_some_and(|given| !given.iter().any(|word| word.eq_ignore_ascii_case(token)))
}
