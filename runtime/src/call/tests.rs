//! Unit tests of a call: its command, keys, routing and prefix checks.

use std::io;

use redis::RedisWrite as _;

use crate::error::KeySlot;

use crate::test_support::{ALLOW, LIBRARY, MOVE_ITEM, ONCE, PEEK, keys, server_error};

use super::attempts::*;
use super::keys::*;
use super::*;

static SCRIPT: Script = MOVE_ITEM;

fn arguments(command: &Cmd) -> Vec<Vec<u8>> {
    command
        .args_iter()
        .map(|argument| match argument {
            redis::Arg::Simple(bytes) => bytes.to_vec(),
            _ => b"<cursor>".to_vec(),
        })
        .collect()
}

#[test]
fn evalsha_command_layout() {
    let mut call = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a", "{q}:b"]));
    push_argument(&mut call, &"x");
    push_argument(&mut call, &7u32);
    let expected: Vec<Vec<u8>> = ["EVALSHA", SCRIPT.sha1(), "2", "{q}:a", "{q}:b", "x", "7"]
        .iter()
        .map(|part| part.as_bytes().to_vec())
        .collect();
    assert_eq!(arguments(&call.command()), expected);
    let eval = arguments(&call.eval_command());
    assert_eq!(eval[0], b"EVAL");
    assert_eq!(eval[1], b"return 1");
    assert_eq!(eval[2..], expected[2..]);
    assert!(call.check_slots().is_ok());
}

#[test]
fn slice_keys_spread_into_many_keys() {
    let mut list = Keys::new();
    list.push(&["{t}:1", "{t}:2", "{t}:3"].as_slice());
    assert_eq!(list.iter().count(), 3);
    let call = start_call::<(), Error>(&SCRIPT, list);
    assert_eq!(arguments(&call.command())[2], b"3");
}

#[test]
fn cross_slot_keys_are_refused_before_sending() {
    let call = start_call::<(), Error>(&SCRIPT, keys(&["a", "b"]));
    match call.check_slots() {
        Err(Error::CrossSlot {
            operation: script,
            keys,
        }) => {
            assert_eq!(script, "move_item");
            assert_eq!(
                keys,
                vec![
                    KeySlot {
                        key: "a".into(),
                        slot: key_slot(b"a")
                    },
                    KeySlot {
                        key: "b".into(),
                        slot: key_slot(b"b")
                    },
                ]
            );
        }
        other => panic!("expected CrossSlot, got {other:?}"),
    }
}

/// `move_item` building keys from its first key.
static PREFIXED: Script = crate::script::with_key_prefixes(MOVE_ITEM, &[1], false);

fn prefix_error(call: &Call<(), Error>) -> Option<(String, String, crate::KeyPrefixProblem)> {
    match call.check_slots() {
        Err(Error::KeyPrefix {
            prefix,
            parameter,
            reason,
            ..
        }) => Some((prefix, parameter, reason)),
        Ok(()) => None,
        Err(other) => panic!("expected KeyPrefix, got {other:?}"),
    }
}

#[test]
fn key_prefixes_need_a_hash_tag_in_the_call_slot() {
    use crate::KeyPrefixProblem::{NoHashTag, NoKeys};
    let tagged = start_call::<(), Error>(&PREFIXED, keys(&["queue:{emails}:"]));
    assert_eq!(prefix_error(&tagged), None);
    let untagged = start_call::<(), Error>(&PREFIXED, keys(&["queue:emails:", "x"]));
    // Keys in different slots are refused as such first.
    assert!(matches!(
        untagged.check_slots(),
        Err(Error::CrossSlot { .. })
    ));
    let untagged = start_call::<(), Error>(&PREFIXED, keys(&["queue:emails:"]));
    assert_eq!(
        prefix_error(&untagged),
        Some(("queue:emails:".into(), "KEYS[1]".into(), NoHashTag))
    );
    // An empty tag is no tag: the whole key is hashed.
    let empty = start_call::<(), Error>(&PREFIXED, keys(&["queue:{}:"]));
    assert!(prefix_error(&empty).is_some());
    // Only the declared positions are prefixes.
    let second = start_call::<(), Error>(&PREFIXED, keys(&["{q}:a", "{q}b"]));
    assert_eq!(prefix_error(&second), None);

    // An argument declared a key prefix: tag, slot, and keys.
    let mut argument = start_call::<(), Error>(&SCRIPT, keys(&["count:{x}"]));
    push_key_prefix(&mut argument, &"jobs:{x}:", 1);
    assert_eq!(prefix_error(&argument), None);
    assert_eq!(arguments(&argument.command())[4], b"jobs:{x}:");
    let mut untagged = start_call::<(), Error>(&SCRIPT, keys(&["count:{x}"]));
    push_key_prefix(&mut untagged, &"jobs:", 1);
    assert_eq!(
        prefix_error(&untagged),
        Some(("jobs:".into(), "ARGV[1]".into(), NoHashTag))
    );
    let mut elsewhere = start_call::<(), Error>(&SCRIPT, keys(&["count:{x}"]));
    push_key_prefix(&mut elsewhere, &"jobs:{y}:", 1);
    match elsewhere.check_slots() {
        Err(Error::CrossSlot { keys, .. }) => assert_eq!(
            keys.iter().map(|key| key.slot).collect::<Vec<_>>(),
            [key_slot(b"count:{x}"), key_slot(b"jobs:{y}:")]
        ),
        other => panic!("expected CrossSlot, got {other:?}"),
    }
    let mut keyless = start_call::<(), Error>(&SCRIPT, Keys::new());
    push_key_prefix(&mut keyless, &"jobs:{x}:", 1);
    assert_eq!(
        prefix_error(&keyless),
        Some(("jobs:{x}:".into(), "ARGV[1]".into(), NoKeys))
    );

    // A standalone server: the caller lets them all go.
    let allowed =
        start_call::<(), Error>(&PREFIXED, keys(&["queue:emails:"])).allow_untagged_prefixes();
    assert_eq!(
        allowed.slot().ok().flatten(),
        Some(key_slot(b"queue:emails:"))
    );
    let allowed = elsewhere.allow_untagged_prefixes();
    assert!(allowed.check_slots().is_ok());
}

fn texts(command: &Cmd) -> Vec<String> {
    arguments(command)
        .into_iter()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .collect()
}

fn function_call(script: &'static Script) -> Call<i64, Error> {
    let mut call = start_call::<i64, Error>(script, keys(&["rl:{t}"]));
    push_argument(&mut call, &10u32);
    push_argument(&mut call, &60u64);
    call
}

#[test]
fn fcall_command_layout() {
    let call = function_call(&ALLOW);
    assert_eq!(
        texts(&call.command()),
        ["FCALL", "allow_marked", "1", "rl:{t}", "10", "60"]
    );
    assert_eq!(call.first_key().as_deref(), Some("rl:{t}"));
    assert_eq!(call.slot().ok().flatten(), Some(key_slot(b"rl:{t}")));
    // No EVAL form: the cold path loads the library.
    assert_eq!(texts(&call.eval_command()), texts(&call.command()));
    let pipeline = call.load_and_call(&LIBRARY);
    let commands: Vec<Vec<String>> = pipeline.cmd_iter().map(texts).collect();
    assert_eq!(
        commands,
        [
            vec![
                "FUNCTION".to_owned(),
                "LOAD".to_owned(),
                LIBRARY.source().to_owned()
            ],
            texts(&call.command()),
        ]
    );
    assert_eq!(ALLOW.library().map(Library::name), Some("quota_lib"));
    assert_eq!(ALLOW.sha1(), LIBRARY.sha1());
    assert_eq!(ALLOW.path(), "lua/quota_lib.lua");
    assert!(SCRIPT.library().is_none());
}

#[test]
fn no_writes_functions_use_fcall_ro_and_load_with_plain_fcall() {
    let call = function_call(&PEEK);
    assert_eq!(texts(&call.command())[0], "FCALL_RO");
    let pipeline = call.load_and_call(&LIBRARY);
    let last = pipeline.cmd_iter().last().map(texts).unwrap_or_default();
    assert_eq!(last[0], "FCALL", "a load goes to a primary");
}

/// Drives `call` through `replies`, one per round trip, and returns
/// the commands sent (a pipeline as its commands joined by ` | `) and
/// the result.
fn drive(
    call: &Call<i64, Error>,
    replies: Vec<redis::RedisResult<Vec<Value>>>,
) -> (Vec<String>, Option<Result<i64, Error>>) {
    let mut attempts = Attempts::new(
        call,
        Options::default(),
        Reconnects::Maybe,
        tracing::Span::none(),
    );
    let mut next = attempts.start();
    let mut sent = Vec::new();
    for reply in replies {
        // A wait takes no reply: the send after it does.
        while let Next::Wait(_) = next {
            next = attempts.send_again();
        }
        next = match next {
            Next::Send(command) => {
                sent.push(texts(&command)[0].clone());
                attempts.received(reply.map(|mut values| values.remove(0)))
            }
            Next::SendPipeline(pipeline) => {
                let names: Vec<String> = pipeline
                    .cmd_iter()
                    .map(|command| texts(command)[..2].join(" "))
                    .collect();
                sent.push(names.join(" | "));
                attempts.received_pipeline(reply)
            }
            Next::Wait(_) => unreachable!("waits are passed above"),
            Next::Done(result) => return (sent, Some(result)),
        };
    }
    match next {
        Next::Done(result) => (sent, Some(result)),
        _ => (sent, None),
    }
}

fn not_found() -> redis::RedisResult<Vec<Value>> {
    Ok(vec![server_error("ERR Function not found")])
}

#[test]
fn function_not_found_loads_the_library_and_calls_in_one_pipeline() {
    let (sent, result) = drive(
        &function_call(&ALLOW),
        vec![
            not_found(),
            Ok(vec![
                Value::BulkString(b"quota_lib".to_vec()),
                Value::Int(3),
            ]),
        ],
    );
    assert_eq!(sent, ["FCALL", "FUNCTION LOAD | FCALL allow_marked"]);
    assert_eq!(result.map(|result| result.ok()), Some(Some(3)));

    // Someone else loaded it meanwhile: the call's reply counts.
    let (_, result) = drive(
        &function_call(&ALLOW),
        vec![
            not_found(),
            Ok(vec![
                server_error("ERR Library 'quota_lib' already exists"),
                Value::Int(4),
            ]),
        ],
    );
    assert_eq!(result.map(|result| result.ok()), Some(Some(4)));
}

#[test]
fn a_load_that_did_not_help_says_why() {
    /// A `FUNCTION LOAD` error reply and a test of the error it leads to.
    type Case = (&'static str, fn(&Error) -> bool);
    let cases: [Case; 4] = [
        ("ERR Library 'quota_lib' already exists", |error| {
            matches!(
                error,
                Error::LibraryConflict {
                    library: "quota_lib",
                    node: None,
                    deployed_sha1: None,
                    ..
                }
            )
        }),
        (
            "ERR Function peek already exists",
            |error| matches!(error, Error::FunctionNameTaken { function, .. } if function == "peek"),
        ),
        (
            "ERR Error compiling function: user_function:1: boom",
            |error| matches!(error, Error::LoadFailed { code, .. } if code == "ERR"),
        ),
        (
            "OOM command not allowed when used memory > 'maxmemory'.",
            |error| matches!(error, Error::Refused { code, .. } if code == "OOM"),
        ),
    ];
    for (load, expected) in cases {
        let (sent, result) = drive(
            &function_call(&ALLOW),
            vec![
                not_found(),
                Ok(vec![
                    server_error(load),
                    server_error("ERR Function not found"),
                ]),
            ],
        );
        assert_eq!(sent.len(), 2, "{load}: never a third round trip");
        match result {
            Some(Err(error)) => {
                assert!(expected(&error), "{load}: {error:?}");
                assert!(!error.may_have_executed(), "{load}: {error:?}");
                assert_eq!(error.operation(), "allow");
            }
            other => panic!("{load}: {other:?}"),
        }
    }
}

#[test]
fn a_functions_marked_errors_never_load_the_library() {
    let (sent, result) = drive(
        &function_call(&ALLOW),
        vec![Ok(vec![server_error("~ERR Function not found")])],
    );
    assert_eq!(
        sent,
        ["FCALL"],
        "a returned reply: never loaded and sent again"
    );
    match result {
        Some(Err(error @ Error::Script { .. })) => {
            assert!(error.may_have_executed());
            assert_eq!(error.code(), Some("ERR"));
        }
        other => panic!("{other:?}"),
    }
    let (sent, result) = drive(
        &function_call(&PEEK),
        vec![Ok(vec![server_error("^ERR Function not found @4")])],
    );
    assert_eq!(sent, ["FCALL_RO"], "a raised error: never loaded either");
    assert!(result.is_some_and(|result| result.is_err_and(|error| error.may_have_executed())),);
}

#[test]
fn a_dropped_cold_pipeline_is_resent_only_for_no_writes_functions() {
    let dropped = || -> redis::RedisResult<Vec<Value>> {
        Err(redis::RedisError::from(io::Error::from(
            io::ErrorKind::ConnectionReset,
        )))
    };
    let (sent, result) = drive(&function_call(&ALLOW), vec![not_found(), dropped()]);
    assert_eq!(sent.len(), 2);
    match result {
        Some(Err(error)) => assert!(error.may_have_executed(), "{error:?}"),
        other => panic!("{other:?}"),
    }
    let (sent, result) = drive(
        &function_call(&PEEK),
        vec![not_found(), dropped(), Ok(vec![Value::Int(7)])],
    );
    assert_eq!(
        sent,
        ["FCALL_RO", "FUNCTION LOAD | FCALL peek_marked", "FCALL_RO"]
    );
    assert_eq!(result.map(|result| result.ok()), Some(Some(7)));
}

#[test]
fn raised_function_errors_point_into_the_library_file() {
    let (_, result) = drive(
        &function_call(&ALLOW),
        vec![Ok(vec![server_error("^ERR user_function:6: kaboom @6")])],
    );
    match result {
        Some(Err(error)) => {
            assert_eq!(
                error.location(),
                Some(crate::ScriptLocation {
                    path: "lua/quota_lib.lua",
                    line: 6
                })
            );
            assert!(error.may_have_executed());
        }
        other => panic!("{other:?}"),
    }
    // The library's own NOSCRIPT-looking error is its own, not a miss.
    let (sent, result) = drive(
        &function_call(&PEEK),
        vec![Ok(vec![server_error(
            "^NOSCRIPT No matching script. Please use EVAL. @2",
        )])],
    );
    assert_eq!(sent, ["FCALL_RO"]);
    assert!(
        matches!(result, Some(Err(Error::Script { .. }))),
        "{result:?}"
    );
}

#[test]
fn keys_written_in_pieces_keep_their_boundaries() {
    let mut list = Keys::new();
    {
        use std::io::Write as _;
        let mut writer = list.writer_for_next_arg();
        writer.write_all(b"{a}").ok();
        writer.write_all(b":1").ok();
    }
    list.write_arg(b"{a}:2");
    let collected: Vec<&[u8]> = list.iter().collect();
    assert_eq!(collected, vec![&b"{a}:1"[..], &b"{a}:2"[..]]);
    assert_eq!(list.get(0), Some(&b"{a}:1"[..]));
    assert_eq!(list.get(1), Some(&b"{a}:2"[..]));
    assert_eq!(list.get(2), None);
}

#[test]
fn every_command_of_a_call_is_rendered_from_the_same_keys_and_arguments() {
    let mut call = start_call::<i64, Error>(&ONCE, keys(&["{q}:a", "{q}:b"]));
    push_argument(&mut call, &7u32);
    push_argument(&mut call, &vec!["x", "y"]);
    let tail = |command: Cmd| texts(&command)[2..].to_vec();
    let first = tail(call.command());
    assert_eq!(first[..3], ["3", "{q}:a", "{q}:b"]);
    assert!(first[3].starts_with("rs:once:"), "the record: {first:?}");
    assert_eq!(
        first[4..],
        ["600000", "7", "x", "y"],
        "the TTL, then the arguments"
    );
    for (name, command) in [
        ("EVAL", call.eval_command()),
        ("EVALSHA", call.plain_evalsha()),
        ("EVAL", call.plain_eval()),
    ] {
        assert_eq!(texts(&command)[0], name);
        assert_eq!(tail(command), first, "{name}");
    }
}

fn timed_out() -> redis::RedisResult<Vec<Value>> {
    Err(redis::RedisError::from(io::Error::from(
        io::ErrorKind::TimedOut,
    )))
}

fn reset() -> redis::RedisResult<Vec<Value>> {
    Err(redis::RedisError::from(io::Error::from(
        io::ErrorKind::ConnectionReset,
    )))
}

#[test]
fn an_exactly_once_call_sends_its_record_after_its_keys_and_its_ttl_first() {
    let mut call = start_call_with_id::<i64, Error>(&ONCE, keys(&["{q}:a"]), CallId::new("id-1"));
    push_argument(&mut call, &"x");
    let sent = texts(&call.command());
    let record = &sent[4];
    assert_eq!(
        sent[..4],
        ["EVALSHA", ONCE.sha1(), "2", "{q}:a"].map(str::to_owned)
    );
    assert!(
        record.starts_with("rs:once:{") && record.ends_with("}count_once:id-1"),
        "{record}"
    );
    assert_eq!(key_slot(record.as_bytes()), key_slot(b"{q}:a"));
    assert_eq!(sent[5..], ["600000", "x"].map(str::to_owned));
    assert_eq!(call.call_id().map(CallId::as_str), Some("id-1"));

    // A keyless call is routed by its record.
    let keyless = start_call_with_id::<i64, Error>(&ONCE, Keys::new(), "{k}7".into());
    assert_eq!(keyless.slot().ok().flatten(), Some(key_slot(b"{k}")));
    assert_eq!(texts(&keyless.command())[2], "1");
    // Each call of the generated `call` gets a new id.
    let first = start_call::<i64, Error>(&ONCE, Keys::new());
    let second = start_call::<i64, Error>(&ONCE, Keys::new());
    assert_ne!(first.call_id(), second.call_id());
    // Other scripts carry no id.
    assert_eq!(
        start_call::<i64, Error>(&SCRIPT, Keys::new()).call_id(),
        None
    );
}

#[test]
fn an_exactly_once_call_is_sent_again_after_timeouts_and_failures() {
    let call = start_call_with_id::<i64, Error>(&ONCE, keys(&["{q}:a"]), "id".into());
    let (sent, result) = drive(&call, vec![timed_out(), reset(), Ok(vec![Value::Int(3)])]);
    assert_eq!(sent, ["EVALSHA", "EVALSHA", "EVALSHA"]);
    assert_eq!(result.map(|result| result.ok()), Some(Some(3)));

    // Two retries, then the error: it may have run (at most once).
    let (sent, result) = drive(&call, vec![timed_out(), timed_out(), timed_out()]);
    assert_eq!(sent.len(), 3);
    match result {
        Some(Err(error)) => assert!(error.is_timeout() && error.may_have_executed()),
        other => panic!("{other:?}"),
    }

    // A send that may have run, then a refusal: the call may have run.
    let moved = || Ok(vec![server_error("MOVED 7497 127.0.0.1:7001")]);
    let (sent, result) = drive(&call, vec![reset(), moved()]);
    assert_eq!(sent.len(), 2);
    match result {
        Some(Err(error)) => assert!(error.may_have_executed(), "{error:?}"),
        other => panic!("{other:?}"),
    }
    // A refusal alone says it did not run.
    let (_, result) = drive(&call, vec![moved()]);
    match result {
        Some(Err(error)) => assert!(!error.may_have_executed(), "{error:?}"),
        other => panic!("{other:?}"),
    }

    // A script without `exactly_once` that writes is never sent again.
    let plain = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a"]));
    let (sent, result) = drive(&plain, vec![timed_out(), Ok(vec![Value::Int(3)])]);
    assert_eq!(sent.len(), 1);
    assert!(
        matches!(result, Some(Err(Error::Timeout { .. }))),
        "{result:?}"
    );

    // Nor is a blocking call: its connection would read the late reply.
    let mut attempts = Attempts::new(
        &call,
        Options::default(),
        Reconnects::Never,
        tracing::Span::none(),
    );
    let Next::Send(_) = attempts.start() else {
        panic!("sends first")
    };
    let next = attempts.received(Err(redis::RedisError::from(io::Error::from(
        io::ErrorKind::TimedOut,
    ))));
    assert!(matches!(next, Next::Done(Err(Error::Timeout { .. }))));
}

/// Read-only scripts of their own: the fallback they record outlives the
/// test.
static READ_ONLY_A: Script = crate::script::new_script(
    "read_only_a",
    "lua/a.lua",
    "return 1",
    "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
    true,
    false,
);
static READ_ONLY_B: Script = crate::script::new_script(
    "read_only_b",
    "lua/b.lua",
    "return 1",
    "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
    true,
    false,
);

static READ_ONLY_ON_REDIS_6: Script = crate::script::new_script(
    "read_only_on_redis_6",
    "lua/c.lua",
    "return 2",
    "7f923f79fe76194c868d7e1d0820de36700eb649",
    true,
    false,
);

/// Redis 6.x names the unknown command in backquotes.
#[test]
fn redis_6_wording_of_an_unknown_read_only_command_falls_back_too() {
    let unknown = || {
        Err(redis::RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError),
            "unknown command",
            "unknown command `EVALSHA_RO`, with args beginning with: `7f92`, `1`, ".to_owned(),
        )))
    };
    let call = start_call::<i64, Error>(&READ_ONLY_ON_REDIS_6, keys(&["{r}:c"]));
    let (sent, result) = drive(&call, vec![unknown(), Ok(vec![Value::Int(2)])]);
    assert_eq!(sent, ["EVALSHA_RO", "EVALSHA"]);
    assert_eq!(result.map(|result| result.ok()), Some(Some(2)));
}

#[test]
fn an_unknown_read_only_command_makes_only_its_script_fall_back() {
    let unknown = || {
        Err(redis::RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError),
            "unknown command",
            "unknown command 'EVALSHA_RO', with args beginning with: ".to_owned(),
        )))
    };
    let call = start_call::<i64, Error>(&READ_ONLY_A, keys(&["{r}:a"]));
    let (sent, result) = drive(&call, vec![unknown(), Ok(vec![Value::Int(1)])]);
    assert_eq!(sent, ["EVALSHA_RO", "EVALSHA"]);
    assert_eq!(result.map(|result| result.ok()), Some(Some(1)));

    let again = start_call::<i64, Error>(&READ_ONLY_A, keys(&["{r}:a"]));
    assert_eq!(texts(&again.command())[0], "EVALSHA", "remembered");
    let other = start_call::<i64, Error>(&READ_ONLY_B, keys(&["{r}:b"]));
    assert_eq!(texts(&other.command())[0], "EVALSHA_RO", "another script");
    assert_eq!(texts(&other.eval_command())[0], "EVAL_RO");
}

/// A `Json` argument serde_json cannot write (a map with tuple keys) fails
/// the call before sending, naming its ARGV position; the other
/// arguments keep their places, and a write outside a call is forgotten
/// by the next call.
#[cfg(feature = "json")]
#[test]
fn unwritable_json_arguments_fail_the_call_before_sending() {
    use std::collections::HashMap;

    use redis::ToRedisArgs as _;

    use crate::{ArgumentProblem, Json};

    let unwritable = Json(HashMap::from([((1u8, 2u8), 3u8)]));
    // Outside a call: what serde_json wrote before failing, never JSON.
    let outside = unwritable.to_redis_args();
    assert_eq!(outside.len(), 1);
    assert!(serde_json::from_slice::<serde_json::Value>(&outside[0]).is_err());

    let mut call = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a", "{q}:b"]));
    push_argument(&mut call, &"x");
    push_argument(&mut call, &Json(vec![1, 2]));
    assert!(call.check_arguments().is_ok());
    push_argument(&mut call, &unwritable);
    push_argument(&mut call, &7u32);
    push_argument(&mut call, &Json(HashMap::from([((0u8, 0u8), 0u8)])));
    let sent = arguments(&call.command());
    assert_eq!(sent.len(), 3 + 2 + 5, "every argument keeps its place");
    assert_eq!(sent[5], b"x");
    assert_eq!(sent[6], b"[1,2]");
    assert_eq!(sent[8], b"7");
    let error = call.check_arguments().unwrap_err();
    match &error {
        Error::Argument {
            operation,
            parameter,
            problem: ArgumentProblem::Json { type_name, message },
        } => {
            assert_eq!(*operation, SCRIPT.name());
            assert_eq!(parameter, "ARGV[3]", "the first failure");
            assert_eq!(type_name, "Json<HashMap<(u8, u8), u8>>");
            assert_eq!(message, "key must be a string");
        }
        other => panic!("expected Error::Argument, got {other:?}"),
    }
    assert!(!error.may_have_executed());
    assert_eq!(error.kind(), "argument");
    assert_eq!(
        error.to_string(),
        format!(
            "`{}`: ARGV[3] could not be encoded, nothing was sent: serde_json cannot write this `Json<HashMap<(u8, u8), u8>>` as JSON: key must be a string",
            SCRIPT.name()
        )
    );

    // A variadic parameter names its failing element.
    let mut call = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a"]));
    push_argument(&mut call, &"x");
    let variadic = vec![
        Json(HashMap::new()),
        Json(HashMap::from([((0u8, 0u8), 0u8)])),
    ];
    push_argument(&mut call, &variadic);
    match call.check_arguments() {
        Err(Error::Argument { parameter, .. }) => assert_eq!(parameter, "ARGV[3]"),
        other => panic!("expected Error::Argument, got {other:?}"),
    }

    // A failure outside a call does not leak into the next one.
    let _ = unwritable.to_redis_args();
    let mut call = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a"]));
    push_argument(&mut call, &1u8);
    assert!(call.check_arguments().is_ok());
}

/// The batch refuses a call whose argument failed, and queues nothing.
#[cfg(feature = "json")]
#[test]
fn a_batch_refuses_a_call_whose_argument_failed() {
    use std::collections::HashMap;

    let mut call = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a"]));
    push_argument(&mut call, &crate::Json(HashMap::from([((1u8, 2u8), 3u8)])));
    let mut batch = crate::Batch::pipeline();
    assert!(matches!(batch.add(call), Err(Error::Argument { .. })));
    assert!(batch.is_empty());
}
