//! The library's hash-slot function agrees with a real cluster node.

use rand::Rng as _;
use redis_script::cluster::key_slot;
use redis_script_test::RedisCluster;

/// Keys that exercise every `{hash tag}` rule of the Cluster spec.
const EDGE_CASES: &[&str] = &[
    "",
    "{",
    "}",
    "{}",
    "}{",
    "{{}}",
    "{a}",
    "{a",
    "a}",
    "a{b}c",
    "a{}b{c}",
    "{a}{b}",
    "foo{{bar}}zap",
    "foo{bar}{zap}",
    "{user1000}.following",
    "{user1000}.followers",
    "é{ü}",
    "{ }",
    "{\u{0}}",
    "123456789",
];

#[test]
fn key_slot_matches_cluster_keyslot_on_10000_random_keys() {
    let cluster = RedisCluster::start(3, 0);
    for key in EDGE_CASES {
        assert_eq!(
            key_slot(key.as_bytes()),
            cluster.keyslot(key.as_bytes()),
            "key {key:?}"
        );
    }
    let mut rng = rand::rng();
    let alphabet = b"ab{}:-x0";
    for _ in 0..10_000 {
        let length = rng.random_range(0..12);
        let key: Vec<u8> = (0..length)
            .map(|_| {
                if rng.random_bool(0.2) {
                    rng.random()
                } else {
                    alphabet[rng.random_range(0..alphabet.len())]
                }
            })
            .collect();
        assert_eq!(
            key_slot(&key),
            cluster.keyslot(&key),
            "key {:?}",
            String::from_utf8_lossy(&key)
        );
    }
}
