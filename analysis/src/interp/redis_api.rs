//! The argument rules of the `redis` (Valkey: `server`) helpers, as the
//! servers check them when the script runs: a literal argument that can
//! never pass is an error at build time.
//!
//! Source: the helpers' C functions in `src/script_lua.c`
//! (`luaRedisSha1hexCommand`, `luaRedisReturnSingleFieldTable`,
//! `luaRedisErrorReplyCommand`, `luaLogCommand`, `luaRedisSetReplCommand`,
//! `luaSetResp`, `luaRedisAclCheckCmdPermissionsCommand`), identical in
//! these respects at Redis 7.0.15, 7.2.6 and 7.4.1 and Valkey 7.2.7 and
//! 8.0.1; `tests/integration/server_refusals.rs` runs every rule on the
//! live servers CI has.

use crate::domain::operand::Operand;
use crate::domain::value::Value;
use crate::interp::Analyzer;
use crate::model::commands;
use crate::source::code::Code;
use crate::source::span::Span;

/// The most `redis.set_repl` accepts: `REPL_AOF | REPL_REPLICA`.
const REPL_ALL: i64 = 3;
/// `LL_DEBUG` … `LL_WARNING`, the levels `redis.log` accepts.
const LOG_LEVELS: std::ops::RangeInclusive<i64> = 0..=3;

impl Analyzer<'_> {
    /// Checks a call of `table.member` (`table` is `redis` or `server`, as
    /// written) against the helper's rules.
    pub(crate) fn check_redis_api(
        &mut self,
        table: &str,
        member: &str,
        operands: &[Operand],
        span: Span,
    ) {
        let helper = format!("{table}.{member}");
        // A trailing call or `...` may give any number of values.
        let count = (!operands.iter().any(|operand| operand.many)).then_some(operands.len());
        let first = operands.first();
        let refusal = match member {
            "sha1hex" => exactly_one(count).map(|given| Refusal {
                message: format!(
                    "`{helper}` takes one argument, the text to hash; given {given}, it fails with \"wrong number of arguments\""
                ),
                hint: format!("pass one string: `{helper}(text)`"),
                at: span,
            }),
            "error_reply" | "status_reply" => {
                let not_a_string = first.filter(|operand| is_never_string(&operand.value));
                match (exactly_one(count), not_a_string) {
                    (Some(given), _) => Some(Refusal {
                        message: format!(
                            "`{helper}` takes one string; given {given}, it returns the error reply \"wrong number or type of arguments\" instead"
                        ),
                        hint: format!("pass one string: `{helper}('…')`"),
                        at: span,
                    }),
                    (None, Some(operand)) => Some(Refusal {
                        message: format!(
                            "`{helper}` takes a string, not {}: it returns the error reply \"wrong number or type of arguments\" instead",
                            kind_of(&operand.value)
                        ),
                        hint: "convert it first: `tostring(value)`".to_owned(),
                        at: operand.span,
                    }),
                    (None, None) => None,
                }
            }
            "log" => match (count, first) {
                (Some(given @ 0..=1), _) => Some(Refusal {
                    message: format!(
                        "`{helper}` takes a level and a message; given {}, it fails with \"{table}.log() requires two arguments or more\"",
                        arguments(given)
                    ),
                    hint: format!("`{helper}({table}.LOG_NOTICE, 'message')`"),
                    at: span,
                }),
                (_, Some(level)) => match &level.value {
                    Value::Number(number) if !is_integer_in(*number, &LOG_LEVELS) => Some(Refusal {
                        message: format!(
                            "{} is not a log level: `{helper}` fails with \"Invalid log level\"",
                            show_number(*number)
                        ),
                        hint: format!(
                            "use `{table}.LOG_DEBUG`, `{table}.LOG_VERBOSE`, `{table}.LOG_NOTICE` or `{table}.LOG_WARNING`"
                        ),
                        at: level.span,
                    }),
                    // `lua_isnumber` also takes numeric strings (`'3'`, `'0x3'`).
                    Value::Str(text) if !text.chars().any(|c| c.is_ascii_digit()) => Some(Refusal {
                        message: format!(
                            "the first argument of `{helper}` is the level, a number, not '{text}': it fails with \"First argument must be a number (log level)\""
                        ),
                        hint: format!("pass the level first: `{helper}({table}.LOG_NOTICE, '{text}')`"),
                        at: level.span,
                    }),
                    _ => None,
                },
                _ => None,
            },
            "set_repl" => match (exactly_one(count), first) {
                (Some(given), _) => Some(takes_one(
                    &helper,
                    "the replication flags",
                    &given,
                    format!("`{helper}({table}.REPL_ALL)`"),
                    span,
                )),
                (None, Some(flags)) => match flags.value {
                    Value::Number(number) if !is_integer_in(number, &(0..=REPL_ALL)) => Some(Refusal {
                        message: format!(
                            "{} is not a combination of replication flags: `{helper}` fails with \"Invalid replication flags\"",
                            show_number(number)
                        ),
                        hint: format!(
                            "use `{table}.REPL_NONE`, `{table}.REPL_AOF`, `{table}.REPL_REPLICA` or `{table}.REPL_ALL`"
                        ),
                        at: flags.span,
                    }),
                    _ => None,
                },
                (None, None) => None,
            },
            "setresp" => match (exactly_one(count), first) {
                (Some(given), _) => Some(takes_one(
                    &helper,
                    "the protocol version",
                    &given,
                    format!("`{helper}(3)`"),
                    span,
                )),
                (None, Some(version)) => match version.value {
                    Value::Number(number) if number != 2.0 && number != 3.0 => Some(Refusal {
                        message: format!(
                            "`{helper}({})` fails with \"RESP version must be 2 or 3\"",
                            show_number(number)
                        ),
                        hint: format!("`{helper}(2)` or `{helper}(3)`"),
                        at: version.span,
                    }),
                    _ => None,
                },
                (None, None) => None,
            },
            "acl_check_cmd" => match first.map(|operand| (&operand.value, operand.span)) {
                None if count == Some(0) => Some(Refusal {
                    message: format!(
                        "`{helper}` takes a command and its arguments; without them it fails"
                    ),
                    hint: format!("`{helper}('SET', KEYS[1], 'value')`"),
                    at: span,
                }),
                Some((Value::Str(name), at)) if commands::lookup(name).is_none() => {
                    Some(Refusal {
                        message: format!(
                            "`{name}` is not a command: `{helper}` fails with \"Invalid command passed to {table}.acl_check_cmd()\""
                        ),
                        hint: commands::suggest(name).map_or_else(
                            || "pass a command name, then its arguments".to_owned(),
                            |known| format!("did you mean `{known}`?"),
                        ),
                        at,
                    })
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(Refusal { message, hint, at }) = refusal {
            self.facts
                .diagnostics
                .push(at.error(Code::HelperArgument, message, hint));
        }
    }
}

struct Refusal {
    message: String,
    hint: String,
    at: Span,
}

/// A helper of one argument called with `given`.
fn takes_one(helper: &str, what: &str, given: &str, hint: String, at: Span) -> Refusal {
    Refusal {
        message: format!("`{helper}` takes one argument, {what}; given {given}, it fails"),
        hint,
        at,
    }
}

/// The number of arguments, as a message says it, when it is known and
/// not one.
fn exactly_one(count: Option<usize>) -> Option<String> {
    count.filter(|&given| given != 1).map(arguments)
}

fn arguments(count: usize) -> String {
    match count {
        0 => "no argument".to_owned(),
        1 => "one argument".to_owned(),
        n => format!("{n} arguments"),
    }
}

/// A value Lua's `type()` never reports as `string`: the helpers that
/// want a string test the type, they do not convert a number.
fn is_never_string(value: &Value) -> bool {
    matches!(
        value,
        Value::Number(_)
            | Value::ComputedNumber
            | Value::Bool(_)
            | Value::Nil
            | Value::Table(_)
            | Value::Function(_)
    )
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Number(_) | Value::ComputedNumber => "a number",
        Value::Bool(_) => "a boolean",
        Value::Nil => "nil",
        Value::Function(_) => "a function",
        _ => "a table",
    }
}

fn is_integer_in(number: f64, range: &std::ops::RangeInclusive<i64>) -> bool {
    // The servers convert with `lua_tonumber` into a C int: a fraction is
    // truncated toward zero.
    let truncated = number.trunc();
    truncated.is_finite() && truncated >= *range.start() as f64 && truncated <= *range.end() as f64
}

fn show_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}
