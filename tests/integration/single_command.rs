//! The `single_command` finding's claim, with the live server as the
//! oracle: where the checker, targeting the live server's release, says
//! one command does what a script does, the script and the command give
//! the same replies and leave the same data in every case; where it says
//! nothing, the live server lacks that command.

use redis::Value;
use redis_script_analysis::{Signature, Target, analyze};
use redis_script_test::RedisServer;

use crate::server_refusals::target_of;

/// The project's own compare-and-delete.
const RELEASE_LOCK: &str = include_str!("../../lua/release_lock.lua");

/// bull's and bullmq's releaseLock, as they write it: an alias of
/// `redis.call`, and an `else` that answers 0.
const RELEASE_LOCK_ALIASED: &str = "local rcall = redis.call\nif rcall(\"GET\", KEYS[1]) == ARGV[1] then\n  return rcall(\"DEL\", KEYS[1])\nelse\n  return 0\nend\n";

/// A compare-and-set: the new value goes in only over the expected one.
const COMPARE_AND_SET: &str = "-- KEYS[1] = the key\n-- ARGV[1] = the value expected\n-- ARGV[2] = the new value\nif redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('SET', KEYS[1], ARGV[2])\nend\nreturn false\n";

/// The command the checker names as doing the work of `source` (of `keys`
/// keys and `args` arguments) under `target`, if it names one.
fn single_command(source: &str, keys: usize, args: usize, target: &Target) -> Option<String> {
    let signature = Signature {
        keys,
        args,
        target: target.clone(),
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .into_iter()
        .find(|diagnostic| diagnostic.code == redis_script_analysis::Code::SingleCommand)
        .map(|diagnostic| {
            // "… on a match: `DELIFEQ` does that in one command …"
            let text = diagnostic.text();
            let after = text.split("on a match: `").nth(1);
            let named = after.and_then(|text| text.split('`').next());
            named.unwrap_or_default().to_owned()
        })
}

/// Whether the server knows `command` (`COMMAND INFO` answers nil for a
/// name it does not).
fn has_command(connection: &mut redis::Connection, command: &str) -> bool {
    !matches!(
        run(connection, redis::cmd("COMMAND").arg("INFO").arg(command)),
        Value::Array(ref items) if items.iter().all(|item| *item == Value::Nil)
    )
}

fn run(connection: &mut redis::Connection, command: &redis::Cmd) -> Value {
    command.query::<Value>(connection).unwrap_or_else(|error| {
        Value::ServerError(error.try_into().unwrap_or_else(|error| panic!("{error}")))
    })
}

/// Sets `key` to `value` (or deletes it for `None`).
fn seed(connection: &mut redis::Connection, key: &str, value: Option<&str>) {
    let command = match value {
        Some(value) => redis::cmd("SET").arg(key).arg(value).to_owned(),
        None => redis::cmd("DEL").arg(key).to_owned(),
    };
    run(connection, &command);
}

#[test]
fn one_command_does_what_the_script_does_where_the_checker_says_so() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let target = target_of(&server);

    // Compare-and-delete: DELIFEQ (Valkey), or DELEX … IFEQ (Redis).
    let delete_command: Option<&[&str]> = if has_command(&mut connection, "DELIFEQ") {
        Some(&["DELIFEQ"])
    } else if has_command(&mut connection, "DELEX") {
        Some(&["DELEX", "IFEQ"])
    } else {
        None
    };
    for script in [RELEASE_LOCK, RELEASE_LOCK_ALIASED] {
        assert_eq!(
            single_command(script, 1, 1, &target),
            delete_command.map(|words| words.join(" … ")),
            "the finding names under {target:?} exactly the command the server has:\n{script}"
        );
    }
    for script in [RELEASE_LOCK, RELEASE_LOCK_ALIASED]
        .iter()
        .filter(|_| delete_command.is_some())
    {
        let words = delete_command.unwrap_or_default();
        for (stored, token) in [(Some("me"), "me"), (Some("other"), "me"), (None, "me")] {
            seed(&mut connection, "{lock}:script", stored);
            seed(&mut connection, "{lock}:command", stored);
            let by_script = run(
                &mut connection,
                redis::cmd("EVAL")
                    .arg(*script)
                    .arg(1)
                    .arg("{lock}:script")
                    .arg(token),
            );
            let mut command = redis::cmd(words[0]);
            command.arg("{lock}:command").arg(&words[1..]).arg(token);
            let by_command = run(&mut connection, &command);
            assert_eq!(by_script, by_command, "{stored:?} vs {token}");
            let left: (Option<String>, Option<String>) = (
                redis::cmd("GET")
                    .arg("{lock}:script")
                    .query(&mut connection)
                    .expect("GET"),
                redis::cmd("GET")
                    .arg("{lock}:command")
                    .query(&mut connection)
                    .expect("GET"),
            );
            assert_eq!(left.0, left.1, "{stored:?} vs {token}");
        }
    }

    // Compare-and-set: SET … IFEQ.
    seed(&mut connection, "{cas}:probe", Some("a"));
    let has_ifeq = !matches!(
        run(
            &mut connection,
            redis::cmd("SET")
                .arg("{cas}:probe")
                .arg("b")
                .arg("IFEQ")
                .arg("a")
        ),
        Value::ServerError(_)
    );
    assert_eq!(
        single_command(COMPARE_AND_SET, 1, 2, &target).is_some(),
        has_ifeq,
        "the finding fires under {target:?} exactly where SET takes IFEQ"
    );
    if has_ifeq {
        for (stored, expected) in [(Some("old"), "old"), (Some("other"), "old"), (None, "old")] {
            seed(&mut connection, "{cas}:script", stored);
            seed(&mut connection, "{cas}:command", stored);
            let by_script = run(
                &mut connection,
                redis::cmd("EVAL")
                    .arg(COMPARE_AND_SET)
                    .arg(1)
                    .arg("{cas}:script")
                    .arg(expected)
                    .arg("new"),
            );
            let by_command = run(
                &mut connection,
                redis::cmd("SET")
                    .arg("{cas}:command")
                    .arg("new")
                    .arg("IFEQ")
                    .arg(expected),
            );
            assert_eq!(by_script, by_command, "{stored:?} vs {expected}");
            let left: (Option<String>, Option<String>) = (
                redis::cmd("GET")
                    .arg("{cas}:script")
                    .query(&mut connection)
                    .expect("GET"),
                redis::cmd("GET")
                    .arg("{cas}:command")
                    .query(&mut connection)
                    .expect("GET"),
            );
            assert_eq!(left.0, left.1, "{stored:?} vs {expected}");
        }
    }
}
