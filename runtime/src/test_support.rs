//! Fixtures the runtime's unit tests share: scripts, a library of
//! functions, keys and server error replies built without a server.

use redis::Value;

use crate::call::Keys;
use crate::library::Library;
use crate::script::Script;

/// The SHA1 every fixture script claims: the tests never send them.
const SHA1: &str = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";

/// A plain script of two keys (`move_item`).
pub(crate) const MOVE_ITEM: Script =
    crate::script::new_script("move_item", "lua/move.lua", "return 1", SHA1, false, false);

/// An `exactly_once` script allowed `retries` sends again.
pub(crate) const fn once(name: &'static str, retries: u32) -> Script {
    crate::script::with_exactly_once(
        crate::script::new_script(name, "lua/count.lua", "return 1", SHA1, false, false),
        crate::exactly_once::exactly_once(None, None, Some(retries)),
    )
}

/// `count_once`, an `exactly_once` script sent again at most twice.
pub(crate) static ONCE: Script = once("count_once", 2);

/// A library of two functions, `allow` and `peek`.
pub(crate) static LIBRARY: Library = crate::library::new_library(
    "quota_lib",
    "lua/quota_lib.lua",
    "#!lua name=quota_lib\nredis.register_function('allow', function(keys, args) return 1 end)\n",
    "0000000000000000000000000000000000000000",
    &["allow", "peek"],
);
/// `allow` of [`LIBRARY`], a function that writes, called by its marked
/// twin `allow_marked`.
pub(crate) static ALLOW: Script =
    crate::script::new_function(&LIBRARY, "allow", "allow_marked", false, false);
/// `peek` of [`LIBRARY`], a read-only function (its twin: `peek_marked`).
pub(crate) static PEEK: Script =
    crate::script::new_function(&LIBRARY, "peek", "peek_marked", true, false);

/// The keys of a call, in order.
pub(crate) fn keys(names: &[&str]) -> Keys {
    let mut keys = Keys::new();
    for name in names {
        keys.push(name);
    }
    keys
}

/// The server's error reply `-{text}`, parsed as redis-rs parses it.
pub(crate) fn server_error(text: &str) -> Value {
    match redis::parse_redis_value(format!("-{text}\r\n").as_bytes()) {
        Ok(value) => value,
        Err(error) => panic!("{text}: {error}"),
    }
}

/// A `CLUSTER SLOTS` range, `start` to `end`, served by the primary at
/// 127.0.0.1 on `port`.
#[cfg(feature = "cluster")]
pub(crate) fn slot_range(start: i64, end: i64, port: u16) -> Value {
    slot_range_with_replicas(start, end, port, &[])
}

/// [`slot_range`] with replicas at 127.0.0.1 on `replicas`.
#[cfg(feature = "cluster")]
pub(crate) fn slot_range_with_replicas(start: i64, end: i64, port: u16, replicas: &[u16]) -> Value {
    let node = |port: u16| {
        Value::Array(vec![
            Value::BulkString(b"127.0.0.1".to_vec()),
            Value::Int(i64::from(port)),
            Value::BulkString(b"id".to_vec()),
        ])
    };
    let nodes = std::iter::once(port)
        .chain(replicas.iter().copied())
        .map(node);
    Value::Array(
        [Value::Int(start), Value::Int(end)]
            .into_iter()
            .chain(nodes)
            .collect(),
    )
}
