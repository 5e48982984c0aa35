//! The `key_as_value` finding's claim, with a cluster node as the oracle:
//! a value passed in KEYS (a number a command takes, an empty name standing
//! for "no key") is hashed for the call's slot like any key, so the node
//! refuses the call with CROSSSLOT before the script runs, while the same
//! call with the value in ARGV runs; and the analysis reports exactly the
//! first of each pair.

use redis_script_analysis::{Code, Signature, analyze};
use redis_script_test::TestCluster;

/// The lock release of the finding's explanation: the signal expiry in
/// KEYS[3], then in ARGV[2].
const EXPIRY_IN_KEYS: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
redis.call('LPUSH', KEYS[2], 1)
redis.call('PEXPIRE', KEYS[2], KEYS[3])
return redis.call('DEL', KEYS[1])";
const EXPIRY_IN_ARGV: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
redis.call('LPUSH', KEYS[2], 1)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('DEL', KEYS[1])";

/// An optional key passed empty as a flag, then always passed with the
/// flag in ARGV.
const EMPTY_KEY_AS_FLAG: &str = "redis.call('INCR', KEYS[1])
if KEYS[2] ~= '' then redis.call('INCR', KEYS[2]) end
return 1";
const FLAG_IN_ARGV: &str = "redis.call('INCR', KEYS[1])
if ARGV[1] == '1' then redis.call('INCR', KEYS[2]) end
return 1";

/// Whether the analysis reports `key_as_value` on `source`.
fn reported(source: &str, keys: usize, args: usize) -> bool {
    let signature = Signature {
        keys,
        args,
        allow_unused: true,
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .iter()
        .any(|diagnostic| diagnostic.code == Code::KeyAsValue)
}

/// What the node serving `keys[0]`'s slot answers an `EVAL` of `source`:
/// `Err` with the error's code, or the reply.
fn eval(
    cluster: &TestCluster,
    source: &str,
    keys: &[&str],
    args: &[&str],
) -> Result<redis::Value, String> {
    let slot = cluster.cluster().keyslot(keys[0].as_bytes());
    let node = cluster.cluster().node_for_slot(slot);
    let mut connection = node.client().get_connection().expect("connection");
    redis::cmd("EVAL")
        .arg(source)
        .arg(keys.len())
        .arg(keys)
        .arg(args)
        .query::<redis::Value>(&mut connection)
        .map_err(|error| error.code().unwrap_or("no code").to_owned())
}

#[test]
fn a_number_in_keys_is_refused_on_a_cluster() {
    assert!(reported(EXPIRY_IN_KEYS, 3, 1));
    assert!(!reported(EXPIRY_IN_ARGV, 2, 2));
    let cluster = TestCluster::new();
    let (lock, signal) = (cluster.key("lock:{res}"), cluster.key("signal:{res}"));
    let slot = cluster.cluster().keyslot(lock.as_bytes());
    let mut connection = cluster
        .cluster()
        .node_for_slot(slot)
        .client()
        .get_connection()
        .expect("connection");
    redis::cmd("SET")
        .arg(&lock)
        .arg("owner")
        .query::<()>(&mut connection)
        .expect("SET");
    assert_eq!(
        eval(
            &cluster,
            EXPIRY_IN_KEYS,
            &[&lock, &signal, "1000"],
            &["owner"]
        ),
        Err("CROSSSLOT".to_owned())
    );
    let held: bool = redis::cmd("EXISTS")
        .arg(&lock)
        .query(&mut connection)
        .expect("EXISTS");
    assert!(held, "the refused call released the lock");
    assert_eq!(
        eval(
            &cluster,
            EXPIRY_IN_ARGV,
            &[&lock, &signal],
            &["owner", "1000"]
        ),
        Ok(redis::Value::Int(1))
    );
}

#[test]
fn an_empty_key_name_is_refused_on_a_cluster() {
    assert!(reported(EMPTY_KEY_AS_FLAG, 2, 0));
    assert!(!reported(FLAG_IN_ARGV, 2, 1));
    let cluster = TestCluster::new();
    let (counter, optional) = (cluster.key("hits:{res}"), cluster.key("extra:{res}"));
    assert_eq!(
        eval(&cluster, EMPTY_KEY_AS_FLAG, &[&counter, ""], &[]),
        Err("CROSSSLOT".to_owned())
    );
    assert_eq!(
        eval(&cluster, FLAG_IN_ARGV, &[&counter, &optional], &["0"]),
        Ok(redis::Value::Int(1))
    );
}
