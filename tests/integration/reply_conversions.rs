//! The conversion rules of command replies into Lua values, one per rule,
//! run on the live server: what the script sees must be what the rule
//! says, and must be among the types the analysis gives the command's
//! reply on this server's release (`reply_lua_types`).

use redis_script_analysis::reply_lua_types;
use redis_script_test::RedisServer;

use crate::server_refusals::{checker_errors, target_of};

/// One rule: the command the model types, the keys the setup creates, the
/// expression the script evaluates, and what the script sees (its Lua
/// type, and the one field a converted table carries, if any).
struct Rule {
    name: &'static str,
    command: &'static str,
    resp3: bool,
    setup: &'static [&'static [&'static str]],
    expression: &'static str,
    sees: (&'static str, &'static str),
}

const RULES: &[Rule] = &[
    Rule {
        name: "integer → number",
        command: "incr",
        resp3: false,
        setup: &[],
        expression: "redis.call('INCR', KEYS[1])",
        sees: ("number", ""),
    },
    Rule {
        name: "bulk string → string",
        command: "get",
        resp3: false,
        setup: &[&["SET", "k", "v"]],
        expression: "redis.call('GET', KEYS[1])",
        sees: ("string", ""),
    },
    Rule {
        name: "null bulk → false",
        command: "get",
        resp3: false,
        setup: &[],
        expression: "redis.call('GET', KEYS[1])",
        sees: ("boolean", ""),
    },
    Rule {
        name: "null array → false",
        command: "lpop",
        resp3: false,
        setup: &[],
        expression: "redis.call('LPOP', KEYS[1], 2)",
        sees: ("boolean", ""),
    },
    Rule {
        name: "array → table",
        command: "lrange",
        resp3: false,
        setup: &[&["RPUSH", "k", "a", "b"]],
        expression: "redis.call('LRANGE', KEYS[1], 0, -1)",
        sees: ("table", ""),
    },
    Rule {
        name: "simple string → {ok = …}",
        command: "set",
        resp3: false,
        setup: &[],
        expression: "redis.call('SET', KEYS[1], 'v')",
        sees: ("table", "ok"),
    },
    Rule {
        name: "map → flat table (RESP2)",
        command: "hgetall",
        resp3: false,
        setup: &[&["HSET", "k", "f", "v"]],
        expression: "redis.call('HGETALL', KEYS[1])",
        sees: ("table", ""),
    },
    Rule {
        name: "set → table (RESP2)",
        command: "smembers",
        resp3: false,
        setup: &[&["SADD", "k", "a"]],
        expression: "redis.call('SMEMBERS', KEYS[1])",
        sees: ("table", ""),
    },
    Rule {
        name: "double → string (RESP2)",
        command: "zscore",
        resp3: false,
        setup: &[&["ZADD", "k", "1.5", "m"]],
        expression: "redis.call('ZSCORE', KEYS[1], 'm')",
        sees: ("string", ""),
    },
    Rule {
        name: "pairs → flat table (RESP2)",
        command: "zrange",
        resp3: false,
        setup: &[&["ZADD", "k", "1", "m"]],
        expression: "redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')",
        sees: ("table", ""),
    },
    Rule {
        name: "null → nil (RESP3)",
        command: "get",
        resp3: true,
        setup: &[],
        expression: "redis.call('GET', KEYS[1])",
        sees: ("nil", ""),
    },
    Rule {
        name: "integer → number (RESP3)",
        command: "incr",
        resp3: true,
        setup: &[],
        expression: "redis.call('INCR', KEYS[1])",
        sees: ("number", ""),
    },
    Rule {
        name: "map → {map = …} (RESP3)",
        command: "hgetall",
        resp3: true,
        setup: &[&["HSET", "k", "f", "v"]],
        expression: "redis.call('HGETALL', KEYS[1])",
        sees: ("table", "map"),
    },
    Rule {
        name: "set → {set = …} (RESP3)",
        command: "smembers",
        resp3: true,
        setup: &[&["SADD", "k", "a"]],
        expression: "redis.call('SMEMBERS', KEYS[1])",
        sees: ("table", "set"),
    },
    Rule {
        name: "double → {double = …} (RESP3)",
        command: "zscore",
        resp3: true,
        setup: &[&["ZADD", "k", "1.5", "m"]],
        expression: "redis.call('ZSCORE', KEYS[1], 'm')",
        sees: ("table", "double"),
    },
    Rule {
        name: "simple string → {ok = …} (RESP3)",
        command: "set",
        resp3: true,
        setup: &[],
        expression: "redis.call('SET', KEYS[1], 'v')",
        sees: ("table", "ok"),
    },
];

/// What the script sees of `expression`: its type, and the field that
/// marks a converted table.
fn script(expression: &str, resp3: bool) -> String {
    format!(
        "{}local v = {expression}\nlocal field = ''\nif type(v) == 'table' then\n  for _, name in ipairs({{'ok', 'err', 'map', 'set', 'double', 'big_number'}}) do\n    if v[name] ~= nil then field = name end\n  end\nend\nreturn {{type(v), field}}",
        if resp3 { "redis.setresp(3)\n" } else { "" }
    )
}

/// The model's name of the release the test server runs (`redis-7.0`).
fn release(connection: &mut redis::Connection) -> String {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(connection)
        .expect("INFO");
    let field = |name: &str| {
        info.lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|value| value.trim().to_owned())
    };
    let (family, version) = match field("valkey_version:") {
        Some(version) => ("valkey", version),
        None => ("redis", field("redis_version:").expect("a version")),
    };
    let minor: Vec<&str> = version.split('.').take(2).collect();
    format!("{family}-{}", minor.join("."))
}

#[test]
fn every_conversion_rule_is_what_the_server_does_and_what_the_analysis_says() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let release = release(&mut connection);
    let target = target_of(&server);
    let mut lacking = Vec::new();
    for rule in RULES {
        let () = redis::cmd("FLUSHALL")
            .query(&mut connection)
            .expect("FLUSHALL");
        for command in rule.setup {
            let _: redis::Value = redis::cmd(command[0])
                .arg(&command[1..])
                .query(&mut connection)
                .expect("setup");
        }
        let seen: redis::RedisResult<(String, String)> = redis::cmd("EVAL")
            .arg(script(rule.expression, rule.resp3))
            .arg(1)
            .arg("k")
            .query(&mut connection);
        let (seen_type, seen_field) = match seen {
            Ok(seen) => seen,
            // A form the release lacks (`LPOP`'s count before Redis 6.2):
            // the checker, targeting that release, refuses it as well.
            Err(error) => {
                let source = format!("return {}", rule.expression);
                assert!(
                    !checker_errors(&source, &target).is_empty(),
                    "{}: {release} refused it ({error}), the checker under {target:?} did not",
                    rule.name
                );
                lacking.push(rule.name);
                continue;
            }
        };
        assert_eq!(
            (seen_type.as_str(), seen_field.as_str()),
            rule.sees,
            "{} on {release}",
            rule.name
        );
        let predicted = reply_lua_types(rule.command, &release, rule.resp3).unwrap_or_else(|| {
            panic!(
                "{}: the model has no reply type for {}",
                rule.name, rule.command
            )
        });
        assert!(
            predicted.contains(&seen_type.as_str()),
            "{} on {release}: the script saw a {seen_type}, the analysis says {predicted:?}",
            rule.name
        );
    }
    // Every rule but the forms a release lacks ran there.
    assert!(
        lacking.len() <= 1,
        "{release} lacks the forms of {lacking:?}: the rules must be rewritten for it"
    );
    if !lacking.is_empty() {
        println!("{release} lacks the forms of {lacking:?}: checked refused by both");
    }
}

/// A command's error: raised by `redis.call` (what `pcall` catches is the
/// message, a string), returned by `redis.pcall` as a table with `err`.
#[test]
fn command_errors_are_raised_by_call_and_returned_by_pcall() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let () = redis::cmd("SET")
        .arg("k")
        .arg("text")
        .query(&mut connection)
        .expect("SET");
    let raised: (String, String, String) = redis::cmd("EVAL")
        .arg("local ok, e = pcall(redis.call, 'HGET', KEYS[1], 'f')\nreturn {tostring(ok), type(e), string.match(e, 'WRONGTYPE') or ''}")
        .arg(1)
        .arg("k")
        .query(&mut connection)
        .expect("EVAL");
    assert_eq!(
        raised,
        ("false".into(), "string".into(), "WRONGTYPE".into())
    );
    let returned: (String, String) = redis::cmd("EVAL")
        .arg("local v = redis.pcall('HGET', KEYS[1], 'f')\nreturn {type(v), v.err and 'err' or ''}")
        .arg(1)
        .arg("k")
        .query(&mut connection)
        .expect("EVAL");
    assert_eq!(returned, ("table".into(), "err".into()));
}
