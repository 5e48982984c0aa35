//! The form of a command's reply a script returns as it came: a flat
//! map (`HGETALL`) or a status (`SET`), which the contract checks compare
//! with the declared reply type. A form is claimed only where the server
//! model gives it on every release and every alternative of the reply,
//! and only while nothing may have changed the value.

use crate::{ReplyForm, Signature, analyze};

/// The form of each return site of `source` (2 keys, 3 arguments).
fn forms(source: &str) -> Vec<Option<ReplyForm>> {
    let lenient = Signature {
        keys: 2,
        args: 3,
        allow_unused: true,
        ..Signature::default()
    };
    analyze(source, &lenient)
        .returns
        .into_iter()
        .map(|site| site.form)
        .collect()
}

fn field_values(command: &str, key: Option<&str>) -> Option<ReplyForm> {
    Some(ReplyForm::FieldValues {
        command: command.to_owned(),
        key: key.map(str::to_owned),
    })
}

fn status(command: &str, texts: &[&str]) -> Option<ReplyForm> {
    Some(ReplyForm::Status {
        command: command.to_owned(),
        texts: texts.iter().map(|text| (*text).to_owned()).collect(),
    })
}

#[test]
fn a_map_reply_returned_directly_or_through_a_local() {
    assert_eq!(
        forms("return redis.call('HGETALL', KEYS[1])"),
        [field_values("HGETALL", Some("KEYS[1]"))]
    );
    assert_eq!(
        forms("local h = redis.call('hgetall', KEYS[1])\nif #h == 0 then return nil end\nreturn h"),
        [None, field_values("HGETALL", Some("KEYS[1]"))]
    );
    // A table is never false: `or` gives the reply itself.
    assert_eq!(
        forms("return redis.call('HGETALL', KEYS[1]) or {}"),
        [field_values("HGETALL", Some("KEYS[1]"))]
    );
    // Read, not changed: still the reply.
    assert_eq!(
        forms(
            "local h = redis.call('HGETALL', KEYS[1])\nfor i = 1, #h, 2 do redis.call('SET', KEYS[2], h[i]) end\nreturn h"
        ),
        [field_values("HGETALL", Some("KEYS[1]"))]
    );
}

#[test]
fn a_changed_or_handed_over_map_is_no_reply_form() {
    for source in [
        "local h = redis.call('HGETALL', KEYS[1])\ntable.insert(h, 'x')\nreturn h",
        "local h = redis.call('HGETALL', KEYS[1])\nh[#h + 1] = 'x'\nreturn h",
        "local h = redis.call('HGETALL', KEYS[1])\nh.extra = 1\nreturn h",
        "local h = redis.call('HGETALL', KEYS[1])\ntable.sort(h)\nreturn h",
        "local function strip(t) t[1] = nil end\nlocal h = redis.call('HGETALL', KEYS[1])\nstrip(h)\nreturn h",
        "local h = redis.call('HGETALL', KEYS[1])\nif ARGV[1] == 'x' then h = {1, 2} end\nreturn h",
        "return redis.call('HGETALL', KEYS[1]) and 0",
        "return redis.pcall('HGETALL', KEYS[1])",
        // Elements of the map, and other replies of arrays.
        "return redis.call('HGETALL', KEYS[1])[2]",
        "return redis.call('HMGET', KEYS[1], 'a', 'b')",
        "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')",
        "return redis.call('HRANDFIELD', KEYS[1], 2, 'WITHVALUES')",
        // After `redis.setresp(3)` a map is `{map = …}`.
        "redis.setresp(3)\nreturn redis.call('HGETALL', KEYS[1])",
    ] {
        assert_eq!(forms(source), [None], "{source}");
    }
}

#[test]
fn status_replies_of_commands() {
    for (source, command) in [
        ("return redis.call('SET', KEYS[1], ARGV[1])", "SET"),
        // Options in any order, as servers take them; `NX` adds nil.
        (
            "return redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')",
            "SET",
        ),
        (
            "local ok = redis.call('SET', KEYS[1], ARGV[1], 'EX', 10)\nreturn ok",
            "SET",
        ),
        (
            "return redis.call('MSET', KEYS[1], ARGV[1], KEYS[2], ARGV[2])",
            "MSET",
        ),
        ("return redis.call('LTRIM', KEYS[1], 0, 99)", "LTRIM"),
        ("return redis.call('RENAME', KEYS[1], KEYS[2])", "RENAME"),
    ] {
        assert_eq!(forms(source), [status(command, &["OK"])], "{source}");
    }
}

#[test]
fn replies_that_may_be_no_status_have_no_form() {
    for source in [
        // `GET` replies the old value.
        "return redis.call('SET', KEYS[1], ARGV[1], 'GET')",
        "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'get')",
        // An option the call computes may be `GET`.
        "return redis.call('SET', KEYS[1], ARGV[1], ARGV[2])",
        "return redis.call('SET', KEYS[1], ARGV[1], unpack(ARGV))",
        // Integers and bulk strings.
        "return redis.call('HSET', KEYS[1], 'a', ARGV[1])",
        "return redis.call('INCR', KEYS[1])",
        "return redis.call('GET', KEYS[1])",
        // The status joined with another value.
        "local r = redis.call('SET', KEYS[1], ARGV[1])\nif ARGV[2] == 'x' then r = 1 end\nreturn r",
        // A command named at run time.
        "return redis.call(ARGV[1], KEYS[1], ARGV[2])",
    ] {
        assert_eq!(forms(source), [None], "{source}");
    }
}
