//! The reply forms the contract checks refuse, on the live server: each
//! script below ends with a command's map or status reply (or a literal
//! status); the analysis names the form of its `return`, the reply types'
//! constants say which types the build refuses, and the server's real
//! reply, decoded as the runtime decodes it, must fail for every refused
//! type and succeed for every type the messages recommend.

use std::collections::HashMap;

use redis::Value;
use redis_script::__private_v3::accepts_field_values;
use redis_script::{ReplyShape, ScriptReply};
use redis_script_analysis::{ReplyForm, ReturnShape, ReturnSite, Signature, ValueKind, analyze};
use redis_script_test::RedisServer;

use crate::releases::before_redis_6_2;

/// A struct with named fields, decoded by position.
#[derive(Debug, ScriptReply)]
#[allow(dead_code)]
struct Profile {
    name: String,
    email: String,
}

/// A script's reply expression and the commands that set its key up.
struct Case {
    expression: &'static str,
    setup: &'static [&'static [&'static str]],
}

const fn case(expression: &'static str, setup: &'static [&'static [&'static str]]) -> Case {
    Case { expression, setup }
}

/// Every command of the model with a status or map reply that runs in a
/// script on one key, in its plain forms and with options, and literal
/// status replies, numeric texts included.
const CASES: &[Case] = &[
    case("redis.call('SET', KEYS[1], 'v')", &[]),
    case("redis.call('SET', KEYS[1], 'v', 'EX', 100)", &[]),
    case("redis.call('SET', KEYS[1], 'v', 'PX', 100000, 'NX')", &[]),
    case(
        "redis.call('SET', KEYS[1], 'v', 'PX', 100000, 'NX')",
        &[&["SET", "k", "old"]],
    ),
    case(
        "redis.call('SET', KEYS[1], 'v', 'XX')",
        &[&["SET", "k", "old"]],
    ),
    case("redis.call('SET', KEYS[1], 'v', 'XX')", &[]),
    case(
        "redis.call('SET', KEYS[1], 'v', 'GET')",
        &[&["SET", "k", "old"]],
    ),
    case("redis.call('SETEX', KEYS[1], 100, 'v')", &[]),
    case("redis.call('PSETEX', KEYS[1], 100000, 'v')", &[]),
    case("redis.call('MSET', KEYS[1], 'a')", &[]),
    case(
        "redis.call('LTRIM', KEYS[1], 0, 1)",
        &[&["RPUSH", "k", "a", "b", "c"]],
    ),
    case(
        "redis.call('LSET', KEYS[1], 0, 'x')",
        &[&["RPUSH", "k", "a"]],
    ),
    case(
        "redis.call('RENAME', KEYS[1], KEYS[1])",
        &[&["SET", "k", "v"]],
    ),
    case("redis.call('HMSET', KEYS[1], 'f', 'v')", &[]),
    case("redis.call('PING')", &[]),
    case("redis.call('TYPE', KEYS[1])", &[&["SET", "k", "v"]]),
    case("redis.status_reply('OK')", &[]),
    case("redis.status_reply('QUEUED')", &[]),
    case("{ok = 'PONG'}", &[]),
    case("{ok = '12'}", &[]),
    case("{ok = 'inf'}", &[]),
    // String literals returned whole: read as a status is.
    case("'too many'", &[]),
    case("'12'", &[]),
    case("'-0.5'", &[]),
    case("''", &[]),
    case("redis.call('HGETALL', KEYS[1])", &[]),
    case(
        "redis.call('HGETALL', KEYS[1])",
        &[&["HSET", "k", "name", "ada"]],
    ),
    case(
        "redis.call('HGETALL', KEYS[1])",
        &[&["HSET", "k", "name", "ada", "email", "a@b", "age", "36"]],
    ),
    case(
        "redis.call('XINFO', 'STREAM', KEYS[1])",
        &[&["XADD", "k", "*", "f", "v"]],
    ),
];

/// What the build says of returning `site` into `T`, as `contract.rs`
/// asks it of `T`'s constants: refused, or not.
fn refused<T: ReplyShape>(site: &ReturnSite) -> bool {
    let texts: Vec<&str> = match (&site.form, &site.shape) {
        (Some(ReplyForm::FieldValues { .. }), _) => return !accepts_field_values(&T::SHAPE),
        (Some(ReplyForm::Status { texts, .. }), _) => texts.iter().map(String::as_str).collect(),
        (None, ReturnShape::Status(Some(text))) => vec![text.as_str()],
        (None, ReturnShape::Value(ValueKind::String(Some(text)))) => vec![text.as_str()],
        _ => return false,
    };
    let failing: Vec<&str> = texts
        .into_iter()
        .filter(|text| text.parse::<f64>().is_err() && text.parse::<i128>().is_err())
        .collect();
    let ok = failing.contains(&"OK");
    let other = failing.iter().any(|text| *text != "OK");
    (ok && !T::ACCEPTS_OK) || (other && !T::ACCEPTS_STATUS)
}

/// Checks one type against the live reply: a refused type must fail to
/// decode it (or, for a map into a struct of matching size, put a field
/// name where a value belongs); `recommended` types must decode it.
fn check<T: ReplyShape + std::fmt::Debug>(
    site: &ReturnSite,
    reply: &Value,
    recommended: bool,
    what: &str,
    refusals: &mut usize,
) {
    let decoded = T::from_redis_value_ref(reply);
    let name = std::any::type_name::<T>();
    if refused::<T>(site) && *reply != Value::Nil {
        *refusals += 1;
        if let Ok(value) = &decoded {
            let shown = format!("{value:?}");
            assert!(
                matches!(site.form, Some(ReplyForm::FieldValues { .. }))
                    && shown.contains("\"name\""),
                "{what}: refused for {name}, yet {reply:?} decodes as {shown}"
            );
        }
    } else if recommended {
        assert!(
            decoded.is_ok(),
            "{what}: accepted for {name}, yet {reply:?} fails: {decoded:?}"
        );
    }
}

#[test]
fn refused_reply_forms_fail_to_decode_and_the_fixes_decode() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let signature = Signature {
        keys: 1,
        allow_unused: true,
        ..Signature::default()
    };
    let (mut maps, mut statuses, mut refusals) = (0, 0, 0);
    for case in CASES {
        // `SET … GET` came with Redis 6.2: Redis 6.0 refuses it.
        if before_redis_6_2() && case.expression.ends_with("'GET')") {
            let refused = redis::cmd("EVAL")
                .arg(format!("return {}", case.expression))
                .arg(1)
                .arg("k")
                .query::<Value>(&mut connection)
                .expect_err("SET … GET before Redis 6.2");
            assert!(refused.to_string().contains("syntax error"), "{refused}");
            continue;
        }
        let () = redis::cmd("FLUSHALL")
            .query(&mut connection)
            .expect("FLUSHALL");
        for command in case.setup {
            let _: Value = redis::cmd(command[0])
                .arg(&command[1..])
                .query(&mut connection)
                .expect("setup");
        }
        let source = format!("return {}", case.expression);
        let analysis = analyze(&source, &signature);
        let [site] = analysis.returns.as_slice() else {
            panic!("{source}: one return site, got {:?}", analysis.returns);
        };
        let reply: Value = redis::cmd("EVAL")
            .arg(&source)
            .arg(1)
            .arg("k")
            .query(&mut connection)
            .unwrap_or_else(|error| panic!("{source}: {error}"));
        let what = format!("{source} after {:?} (form {:?})", case.setup, site.form);
        let status = matches!(site.form, Some(ReplyForm::Status { .. }))
            || matches!(site.shape, ReturnShape::Status(Some(_)));
        let map = matches!(site.form, Some(ReplyForm::FieldValues { .. }));
        // What the message recommends: strings for a hash, any values for
        // the other maps.
        let hash = matches!(&site.form, Some(ReplyForm::FieldValues { command, .. }) if command == "HGETALL");
        statuses += usize::from(status);
        maps += usize::from(map);
        let ok_only = matches!(reply, Value::Okay);
        let integer = matches!(&reply, Value::SimpleString(text) if text.parse::<i64>().is_ok());
        let float = matches!(&reply, Value::SimpleString(text) if text.parse::<f64>().is_ok());
        let r = &mut refusals;
        check::<i64>(site, &reply, status && integer, &what, r);
        check::<u64>(site, &reply, false, &what, r);
        check::<i32>(site, &reply, false, &what, r);
        check::<f64>(site, &reply, status && float, &what, r);
        check::<bool>(site, &reply, status && ok_only, &what, r);
        check::<String>(site, &reply, status && reply != Value::Nil, &what, r);
        check::<Option<i64>>(site, &reply, false, &what, r);
        check::<Option<String>>(site, &reply, status, &what, r);
        check::<()>(site, &reply, status || map, &what, r);
        check::<Value>(site, &reply, status || map, &what, r);
        check::<HashMap<String, String>>(site, &reply, hash, &what, r);
        check::<Vec<(String, String)>>(site, &reply, hash, &what, r);
        check::<Option<HashMap<String, String>>>(site, &reply, hash, &what, r);
        check::<HashMap<String, Value>>(site, &reply, map, &what, r);
        check::<Profile>(site, &reply, false, &what, r);
        check::<Option<Profile>>(site, &reply, false, &what, r);
        check::<(String, String)>(site, &reply, false, &what, r);
    }
    // The cases exercise both forms and the refusals.
    assert!(
        maps >= 3 && statuses >= 10,
        "maps {maps}, statuses {statuses}"
    );
    assert!(refusals >= 40, "only {refusals} refusals checked");
}

/// A profile decoded by field name from `HGETALL`'s names and values, by
/// hand: the map check asks for no `ReplyShape` of it.
#[derive(Debug, PartialEq)]
struct ProfileByName {
    name: String,
    email: String,
}

impl redis::FromRedisValue for ProfileByName {
    fn from_redis_value(value: redis::Value) -> Result<Self, redis::ParsingError> {
        let fields: std::collections::HashMap<String, String> =
            redis::FromRedisValue::from_redis_value(value)?;
        let field = |name: &str| {
            fields
                .get(name)
                .cloned()
                .ok_or_else(|| redis::ParsingError::from(format!("no field {name}")))
        };
        Ok(Self {
            name: field("name")?,
            email: field("email")?,
        })
    }
}

#[redis_script::redis_script(path = "lua/replies/profile_fields.lua", keys = 1)]
async fn profile_fields(profile: &str) -> ProfileByName;

#[tokio::test]
async fn a_hand_written_type_reads_a_map_by_name() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let () = redis::cmd("HSET")
        .arg("profile:{1}")
        .arg("email")
        .arg("ada@example.com")
        .arg("name")
        .arg("ada")
        .query_async(&mut connection)
        .await
        .expect("HSET");
    let profile = profile_fields(&mut connection, "profile:{1}")
        .await
        .expect("the profile decodes by name");
    assert_eq!(
        profile,
        ProfileByName {
            name: "ada".into(),
            email: "ada@example.com".into()
        }
    );
}
