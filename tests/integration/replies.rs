//! Typed replies and typed script errors against a real `redis-server`:
//! every reply shape `#[derive(ScriptReply)]` decodes, as Redis actually
//! converts Lua values (nil holes, booleans, status replies, nested tables,
//! `cjson.encode`), the decode errors of replies that do not fit, and
//! `#[derive(ScriptError)]` decoding `redis.error_reply` / `error({err=…})`.

use std::collections::BTreeMap;

use redis_script::{Error, Failure, Json, ScriptError, ScriptReply, redis_script};
use redis_script_test::RedisServer;
use redis_script_tests::Decision;

/// A positional reply whose trailing fields may be cut by a nil.
#[derive(Debug, PartialEq, ScriptReply)]
struct Window {
    count: i64,
    label: String,
    active: bool,
    note: Option<String>,
    extra: Option<i64>,
}

#[derive(Debug, PartialEq, ScriptReply)]
struct Point(i64, i64);

#[derive(Debug, PartialEq, ScriptReply)]
struct Nested {
    numbers: Vec<i64>,
    points: Vec<Point>,
    pairs: Vec<(String, i64)>,
    decision: Decision,
    raw: Vec<u8>,
    empty: Vec<i64>,
}

#[derive(Debug, PartialEq, ScriptError)]
enum VersionError {
    /// `redis.error_reply('CONFLICT expected 3 found 4')`
    Conflict { expected: u64, found: u64 },
    /// `error({err = 'FROZEN …'})`
    Frozen { message: String },
    /// `redis.error_reply('INVALID …')`
    #[error_code("INVALID")]
    BadValue { message: String },
}

#[redis_script(path = "lua/replies/decision.lua", keys = 1)]
async fn decision(counter: &str, case: &str) -> Decision;

#[redis_script(path = "lua/replies/window.lua", keys = 0)]
async fn window(case: &str) -> Window;

#[redis_script(path = "lua/replies/nested.lua", keys = 0)]
async fn nested(raw: &[u8]) -> Nested;

#[redis_script(path = "lua/replies/json.lua", keys = 0)]
async fn json_counts(case: &str) -> Json<BTreeMap<String, u64>>;

#[redis_script(path = "lua/replies/json.lua", keys = 0)]
async fn json_pair(case: &str) -> Json<(String, Vec<u64>)>;

#[redis_script(path = "lua/replies/json.lua", keys = 0)]
async fn json_list(case: &str) -> Json<Vec<u64>>;

#[redis_script(path = "lua/replies/versioned_set.lua", keys = 1)]
async fn versioned_set(document: &str, expected: u64, value: &str) -> u64;

#[redis_script(path = "lua/replies/echo.lua", keys = 0)]
async fn echo_decision(json: &str) -> Decision;

#[redis_script(path = "lua/replies/echo.lua", keys = 0)]
async fn echo_window(json: &str) -> Window;

#[redis_script(path = "lua/replies/echo.lua", keys = 0)]
async fn echo_optional_decision(json: &str) -> Option<Decision>;

#[tokio::test]
async fn tagged_arrays_decode_into_enum_variants() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let mut call = async |case: &str| {
        decision(&mut connection, "replies:{counter}", case)
            .await
            .unwrap_or_else(|error| panic!("{case}: {error}"))
    };
    assert_eq!(call("allowed").await, Decision::Allowed { count: 1 });
    assert_eq!(
        call("denied").await,
        Decision::Denied {
            count: 2,
            retry_ms: 200
        }
    );
    assert_eq!(call("too_many").await, Decision::TooMany(3, None));
    assert_eq!(call("too_many_hint").await, Decision::TooMany(4, Some(7)));
}

#[tokio::test]
async fn unit_variants_decode_from_strings_status_replies_and_lone_tags() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    for case in ["busy_string", "busy_status", "busy_table"] {
        let reply = decision(&mut connection, "replies:{counter}", case).await;
        assert_eq!(reply.ok(), Some(Decision::Busy), "{case}");
    }
    // `redis.status_reply('OK')` arrives as redis-rs's `Value::Okay`.
    let reply = decision(&mut connection, "replies:{counter}", "ok").await;
    assert_eq!(reply.ok(), Some(Decision::Idle));
}

#[tokio::test]
async fn positional_structs_with_nil_holes_and_booleans() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let mut call = async |case: &str| {
        window(&mut connection, case)
            .await
            .unwrap_or_else(|error| panic!("{case}: {error}"))
    };
    let base = || Window {
        count: 5,
        label: "w".into(),
        active: true,
        note: None,
        extra: None,
    };
    assert_eq!(
        call("full").await,
        Window {
            note: Some("n".into()),
            extra: Some(9),
            ..base()
        }
    );
    // Lua `false` is sent as nil but does not end the array.
    assert_eq!(
        call("false_flag").await,
        Window {
            active: false,
            ..base()
        }
    );
    // `{5, 'w', true, nil, 9}` reaches Redis as `{5, 'w', true}`.
    assert_eq!(
        call("nil_hole").await,
        Window {
            count: 5,
            label: "w".into(),
            active: true,
            note: None,
            extra: None
        }
    );
    // `false` in the middle is a nil that keeps the elements after it.
    assert_eq!(
        call("false_hole").await,
        Window {
            count: 5,
            label: "w".into(),
            active: true,
            note: None,
            extra: Some(9)
        }
    );
}

#[tokio::test]
async fn nested_arrays_tuples_derived_types_and_bytes() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let raw = [0u8, 255, b'\n', 7];
    let reply = nested(&mut connection, &raw).await.expect("nested reply");
    assert_eq!(
        reply,
        Nested {
            numbers: vec![1, 2, 3],
            points: vec![Point(1, 2), Point(3, 4)],
            pairs: vec![("a".into(), 1), ("b".into(), 2)],
            decision: Decision::Allowed { count: 4 },
            raw: raw.to_vec(),
            empty: vec![],
        }
    );
}

#[tokio::test]
async fn json_replies_from_cjson_encode() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let counts = json_counts(&mut connection, "object")
        .await
        .expect("object");
    assert_eq!(counts.get("hits"), Some(&3));
    assert_eq!(
        counts.into_inner(),
        BTreeMap::from([("hits".to_owned(), 3), ("misses".to_owned(), 1)])
    );
    let pair = json_pair(&mut connection, "array").await.expect("array");
    assert_eq!(pair.0, ("ada".to_owned(), vec![1, 2, 3]));
    // cjson encodes an empty Lua table as `{}`; it still decodes as a list.
    let empty = json_list(&mut connection, "empty").await.expect("empty");
    assert!(empty.is_empty());

    let error = json_counts(&mut connection, "array")
        .await
        .expect_err("an array is not a map");
    let Error::Decode {
        operation: script,
        reply,
        reason,
        ..
    } = &error
    else {
        panic!("expected a decode error, got {error:?}");
    };
    assert_eq!(*script, "json_counts");
    assert_eq!(reply, r#""[\"ada\",[1,2,3]]""#);
    assert!(
        reason.contains("invalid JSON for BTreeMap<String, u64>: invalid type: sequence, expected a map at line 1 column 0"),
        "{reason}"
    );
}

#[tokio::test]
async fn decode_errors_name_the_script_the_expected_shape_and_the_reply() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;

    let error = echo_decision(&mut connection, r#"["DENIED", 3]"#)
        .await
        .expect_err("one element short");
    let Error::Decode {
        operation: script,
        reply,
        reason,
        expected,
        ..
    } = &error
    else {
        panic!("expected a decode error, got {error:?}");
    };
    assert_eq!(*script, "echo_decision");
    assert!(expected.ends_with("Decision"), "{expected}");
    assert_eq!(reply, r#"["DENIED", 3]"#);
    assert!(
        reason.ends_with(
            "expected Decision::Denied {count, retry_ms} (3 elements with the tag), got 2 elements"
        ),
        "{reason}"
    );
    assert!(
        error.may_have_executed(),
        "a reply that does not decode comes from a script that ran"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("`echo_decision`: cannot decode the reply [\"DENIED\", 3] as "),
        "{message}"
    );

    let error = echo_decision(&mut connection, r#"["MAYBE", 1]"#)
        .await
        .expect_err("unknown tag");
    assert!(
        error.to_string().ends_with(
            r#"unknown tag "MAYBE": expected one of ALLOWED, DENIED, TOO_MANY, BUSY, OK"#
        ),
        "{error}"
    );

    let error = echo_decision(&mut connection, r#""DENIED""#)
        .await
        .expect_err("bare tag of a variant with fields");
    assert!(
        error.to_string().ends_with(
            r#"expected Decision::Denied {count, retry_ms} (3 elements with the tag), got the bare tag "DENIED""#
        ),
        "{error}"
    );

    let error = echo_window(&mut connection, r#"[5, "w", true, "n", "nine"]"#)
        .await
        .expect_err("not a number");
    assert!(
        error
            .to_string()
            .contains("Window {count, label, active, note, extra}: field `extra` (element 5): "),
        "{error}"
    );

    // nil only decodes into an Option.
    let error = echo_decision(&mut connection, "null")
        .await
        .expect_err("nil");
    assert!(error.to_string().contains("got nil"), "{error}");
    let nothing = echo_optional_decision(&mut connection, "null").await;
    assert_eq!(nothing.ok(), Some(None));
    let status = echo_optional_decision(&mut connection, r#"{"ok": "BUSY"}"#).await;
    assert_eq!(status.ok(), Some(Some(Decision::Busy)));
}

#[tokio::test]
async fn long_replies_are_cut_in_decode_errors() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let long = "x".repeat(10_000);
    let many: Vec<String> = (0..1_000).map(|index| index.to_string()).collect();
    let json = format!(r#"["DENIED", "{long}", {}]"#, many.join(", "));
    let error = echo_decision(&mut connection, &json)
        .await
        .expect_err("wrong count");
    let Error::Decode { reply, reason, .. } = &error else {
        panic!("expected a decode error, got {error:?}");
    };
    assert!(reply.chars().count() < 200, "{reply}");
    assert!(reply.contains('…'), "{reply}");
    assert!(reason.chars().count() < 300, "{reason}");
    assert!(error.to_string().chars().count() < 600, "{error}");

    let json = format!(r#"["DENIED", 1, "{long}"]"#);
    let error = echo_decision(&mut connection, &json)
        .await
        .expect_err("not a number");
    assert!(error.to_string().chars().count() < 800, "{error}");
    assert!(
        error
            .to_string()
            .contains("Decision::Denied {count, retry_ms}: field `retry_ms` (element 3): "),
        "{error}"
    );
}

#[tokio::test]
async fn declared_script_errors_are_decoded_and_others_are_kept() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let document = "replies:doc";
    let mut set = async |expected: u64, value: &str| {
        versioned_set(&mut connection, document, expected, value)
            .await
            .map_err(Failure::<VersionError>::from)
    };

    assert_eq!(set(0, "a").await.ok(), Some(1));
    match set(0, "b").await {
        Err(Failure::Declared(VersionError::Conflict { expected, found })) => {
            assert_eq!((expected, found), (0, 1));
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(set(1, "b").await.ok(), Some(2));

    // `error({err = 'FROZEN …'})` is a script error like `error_reply`.
    let frozen = set(2, "c").await;
    match &frozen {
        Err(Failure::Declared(VersionError::Frozen { message })) => {
            assert_eq!(message, "version 2 is the last one");
        }
        other => panic!("expected FROZEN, got {other:?}"),
    }
    let failure = frozen.expect_err("frozen");
    assert!(failure.may_have_executed());
    assert_eq!(failure.to_string(), "FROZEN version 2 is the last one");
    assert_eq!(failure.declared().map(ScriptError::code), Some("FROZEN"));

    match set(2, "").await {
        Err(Failure::Declared(VersionError::BadValue { message })) => {
            assert_eq!(message, "the value is empty");
        }
        other => panic!("expected INVALID, got {other:?}"),
    }

    // An error the script did not declare stays a plain script error.
    let () = redis::cmd("SET")
        .arg("replies:string")
        .arg("x")
        .query_async(&mut connection)
        .await
        .expect("SET");
    let failure = versioned_set(&mut connection, "replies:string", 0, "x")
        .await
        .map_err(Failure::<VersionError>::from)
        .expect_err("WRONGTYPE");
    match &failure {
        Failure::Other(Error::Script {
            operation: script,
            code,
            location,
            ..
        }) => {
            assert_eq!((*script, code.as_str()), ("versioned_set", "WRONGTYPE"));
            let location = location.expect("Redis reports where a failing redis.call was");
            assert!(location.path.ends_with("versioned_set.lua"), "{location}");
        }
        other => panic!("expected an undeclared script error, got {other:?}"),
    }
    assert!(
        failure
            .to_string()
            .starts_with("`versioned_set` failed at "),
        "{failure}"
    );
}

#[tokio::test]
async fn derived_types_work_in_plain_redis_pipelines() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let (decision, window): (Decision, Window) = redis::pipe()
        .cmd("EVAL")
        .arg("return {'DENIED', 1, 2}")
        .arg(0)
        .cmd("EVAL")
        .arg("return {1, 'a', false}")
        .arg(0)
        .query_async(&mut connection)
        .await
        .expect("pipeline");
    assert_eq!(
        decision,
        Decision::Denied {
            count: 1,
            retry_ms: 2
        }
    );
    assert_eq!(
        window,
        Window {
            count: 1,
            label: "a".into(),
            active: false,
            note: None,
            extra: None
        }
    );
}

/// The compile-time check that rejects a non-`Option` reply type for a
/// script that can end with nil, with the server as the oracle: each way
/// a script ends with nil (a missing key's `GET`, `return false`, no
/// `return` on the path taken) reaches the client as nil, which `i64`
/// and `String` fail to decode and their `Option` decodes as `None`.
#[tokio::test]
async fn every_way_a_script_ends_with_nil_arrives_as_nil() {
    use redis::FromRedisValue;
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let scripts = [
        (
            "ui/replies/missing_key_into_integer.lua",
            vec!["replies:absent"],
            vec![],
        ),
        (
            "ui/replies/false_into_string.lua",
            vec!["replies:lock"],
            vec!["not-the-owner"],
        ),
        (
            "ui/replies/no_return_into_integer.lua",
            vec!["replies:counter"],
            vec!["-1"],
        ),
    ];
    for (path, keys, args) in scripts {
        let source =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
                .expect("the compile-fail case's script");
        let mut command = redis::cmd("EVAL");
        command.arg(&source).arg(keys.len()).arg(&keys).arg(&args);
        let reply: redis::Value = command.query_async(&mut connection).await.expect(path);
        assert_eq!(reply, redis::Value::Nil, "{path}");
        assert!(i64::from_redis_value(reply.clone()).is_err(), "{path}");
        assert!(String::from_redis_value(reply.clone()).is_err(), "{path}");
        assert_eq!(
            Option::<i64>::from_redis_value(reply.clone()).ok(),
            Some(None),
            "{path}"
        );
        assert_eq!(
            Option::<String>::from_redis_value(reply).ok(),
            Some(None),
            "{path}"
        );
    }
}
