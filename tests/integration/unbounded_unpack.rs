//! The `unbounded_unpack` finding's claim, with the live server as the
//! oracle: for each way a script can let the data or an argument size the
//! table it unpacks, the checker warns at the `unpack`, and the server
//! takes 7990 elements but fails the call with "too many results to
//! unpack" at 8000; the batched form is not flagged and takes any size.

use redis::Value;
use redis_script_analysis::{Code, Signature, analyze};
use redis_script_test::RedisServer;

/// Each shape fills or reads a table of `ARGV[1]` elements (the list at
/// `KEYS[1]` holds that many) and adds them to the set at `KEYS[2]`.
const FLAGGED: [(&str, &str); 4] = [
    (
        "a whole read",
        "local all = redis.call('LRANGE', KEYS[1], 0, -1)\nredis.call('SADD', KEYS[2], unpack(all))\nreturn #all",
    ),
    (
        "a range whose end an argument sets",
        "local some = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)\nredis.call('SADD', KEYS[2], unpack(some))\nreturn #some",
    ),
    (
        "a loop up to an argument",
        "local t = {}\nfor i = 1, tonumber(ARGV[1]) do t[i] = 'm' .. i end\nredis.call('SADD', KEYS[2], unpack(t))\nreturn #t",
    ),
    (
        "a loop over a whole read",
        "local t = {}\nfor _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do t[#t + 1] = 'm' .. v end\nredis.call('SADD', KEYS[2], unpack(t))\nreturn #t",
    ),
];

const BATCHED: &str = "local all = redis.call('LRANGE', KEYS[1], 0, -1)\nfor i = 1, #all, 1000 do\n  redis.call('SADD', KEYS[2], unpack(all, i, math.min(i + 999, #all)))\nend\nreturn #all";

/// The lines the checker reports `unbounded_unpack` at.
fn flagged_lines(source: &str) -> Vec<usize> {
    let signature = Signature {
        keys: 2,
        args: 1,
        allow_unused: true,
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.code == Code::UnboundedUnpack)
        .map(|diagnostic| diagnostic.line)
        .collect()
}

/// The script's reply with `size` elements in the list.
fn run(connection: &mut redis::Connection, source: &str, size: usize) -> redis::RedisResult<Value> {
    redis::cmd("DEL")
        .arg("list")
        .arg("set")
        .query::<()>(connection)?;
    redis::cmd("EVAL")
        .arg("for i = 1, tonumber(ARGV[1]) do redis.call('RPUSH', KEYS[1], i) end")
        .arg(1)
        .arg("list")
        .arg(size)
        .query::<()>(connection)?;
    redis::cmd("EVAL")
        .arg(source)
        .arg(2)
        .arg("list")
        .arg("set")
        .arg(size)
        .query(connection)
}

#[test]
fn every_table_the_data_sizes_is_flagged_where_the_server_refuses_to_unpack_it() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    for (shape, source) in FLAGGED {
        let unpack_line = source
            .lines()
            .position(|line| line.contains("unpack("))
            .map(|index| index + 1);
        assert_eq!(
            flagged_lines(source),
            Vec::from_iter(unpack_line),
            "{shape}: the warning is at the unpack"
        );
        assert_eq!(
            run(&mut connection, source, 7990).ok(),
            Some(Value::Int(7990)),
            "{shape}: 7990 elements unpack"
        );
        match run(&mut connection, source, 8000) {
            Err(error) => assert!(
                error.to_string().contains("too many results to unpack"),
                "{shape}: {error}"
            ),
            Ok(reply) => panic!("{shape}: 8000 elements unpacked: {reply:?}"),
        }
    }
}

#[test]
fn the_batched_form_is_not_flagged_and_takes_any_size() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    assert_eq!(flagged_lines(BATCHED), Vec::<usize>::new());
    for size in [0, 1, 8000, 20_000] {
        assert_eq!(
            run(&mut connection, BATCHED, size).ok(),
            Some(Value::Int(size as i64)),
            "{size} elements"
        );
    }
}
