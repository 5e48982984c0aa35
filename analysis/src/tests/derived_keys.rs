//! Key provenance: which built keys are proven to derive from a prefix,
//! which prefixes the call must check, and what still needs an opt-out.

use std::collections::BTreeSet;

use crate::{Analysis, KeyPrefixes, Signature, analyze};

fn declared(keys: usize, args: usize, prefixes: &[usize]) -> Signature {
    Signature {
        keys,
        args,
        key_prefix_args: prefixes.iter().copied().collect(),
        ..Signature::default()
    }
}

fn messages(analysis: &Analysis) -> Vec<String> {
    analysis
        .errors()
        .map(|d| format!("{}:{} {}", d.line, d.column, d.text()))
        .collect()
}

/// The script passes, and each call must check these prefixes.
#[track_caller]
fn derives(source: &str, signature: &Signature, keys: &[usize], args: &[usize]) {
    let analysis = analyze(source, signature);
    assert_eq!(messages(&analysis), Vec::<String>::new(), "{source}");
    let expected = KeyPrefixes {
        keys: keys.iter().copied().collect(),
        every_key: false,
        args: args.iter().copied().collect::<BTreeSet<_>>(),
    };
    assert_eq!(analysis.key_prefixes, expected, "{source}");
}

#[test]
fn keys_appended_to_a_keys_element_derive_from_it() {
    let one = declared(1, 1, &[]);
    derives(
        "return redis.call('GET', KEYS[1] .. ARGV[1])",
        &one,
        &[1],
        &[],
    );
    derives(
        "local prefix = KEYS[1]\nlocal job = prefix .. 'job:' .. ARGV[1]\nreturn redis.call('HGET', job, 'state')",
        &one,
        &[1],
        &[],
    );
    derives(
        "return redis.call('GET', string.format('%s:jobs:%s', KEYS[1], ARGV[1]))",
        &one,
        &[1],
        &[],
    );
    // Through a helper that appends to its parameter, and one that reads
    // KEYS itself.
    derives(
        "local function key(prefix, id) return prefix .. id end\nreturn redis.call('GET', key(KEYS[1], ARGV[1]))",
        &one,
        &[1],
        &[],
    );
    derives(
        "local function job(id) return KEYS[1] .. 'job:' .. id end\nreturn redis.call('GET', job(ARGV[1]))",
        &one,
        &[1],
        &[],
    );
    // A helper that uses its parameter as a key: checked at its calls.
    derives(
        "local function remove(base, id)\n  redis.call('DEL', base .. id)\n  redis.call('SREM', base, id)\nend\nremove(KEYS[1], ARGV[1])\nreturn 1",
        &one,
        &[1],
        &[],
    );
    // A plain key needs no hash tag: nothing to check.
    derives(
        "return redis.call('GET', KEYS[1])",
        &declared(1, 0, &[]),
        &[],
        &[],
    );
}

#[test]
fn a_computed_index_makes_every_key_a_prefix() {
    let analysis = analyze(
        "for i = 1, #KEYS do redis.call('DEL', KEYS[i] .. ':lock') end\nreturn 1",
        &Signature {
            variadic_keys: true,
            ..declared(0, 0, &[])
        },
    );
    assert_eq!(messages(&analysis), Vec::<String>::new());
    assert!(analysis.key_prefixes.every_key);
}

#[test]
fn an_argument_is_a_prefix_only_when_declared_one() {
    let source = "return redis.call('HSET', ARGV[1] .. 'job:' .. ARGV[2], 'state', 'new')";
    derives(source, &declared(0, 2, &[1]), &[], &[1]);
    assert_eq!(
        messages(&analyze(source, &declared(0, 2, &[]))),
        [
            "1:27 key argument `ARGV[1] .. 'job:' .. ARGV[2]` of `HSET` is built from ARGV[1], an argument not declared a key prefix: Redis Cluster routes the script by KEYS only, so this key may live on another node"
        ]
    );
}

#[test]
fn keys_built_otherwise_still_need_the_opt_out() {
    let one = Signature {
        allow_unused: true,
        ..declared(1, 1, &[])
    };
    let cases = [
        (
            "local queue = redis.call('GET', KEYS[1])\nreturn redis.call('LLEN', queue .. ':jobs')",
            "2:27 key argument `queue .. ':jobs'` of `LLEN` does not come from KEYS (a value read from the reply of `GET` at line 1)",
        ),
        (
            "return redis.call('GET', ARGV[1] .. KEYS[1])",
            "1:26 key argument `ARGV[1] .. KEYS[1]` of `GET` is built from ARGV[1], an argument not declared a key prefix",
        ),
        (
            "return redis.call('GET', '{' .. KEYS[1] .. '}')",
            "1:26 key argument `'{' .. KEYS[1] .. '}'` of `GET` does not come from KEYS (a string built at run time, starting with the literal '{')",
        ),
        // The helper appends to what this call passes: a literal.
        (
            "local function key(prefix, id) return redis.call('GET', prefix .. id) end\nreturn key('jobs:', ARGV[1])",
            "2:12 `'jobs:'`, which the function called here appends to for a key of `GET` (line 1), does not come from KEYS (the string literal 'jobs:')",
        ),
        // The helper returns a key built from its parameter, and this
        // call passes one read from data.
        (
            "local function key(prefix, id) return prefix .. id end\nlocal job = key(redis.call('GET', KEYS[1]), ARGV[1])\nreturn redis.call('GET', job)",
            "3:26 key argument `job` of `GET` does not come from KEYS (a string built at run time, starting with a value that is no key)",
        ),
    ];
    for (source, expected) in cases {
        let found = messages(&analyze(source, &one));
        let found: Vec<&str> = found
            .iter()
            .map(|message| message.split(": Redis Cluster").next().unwrap_or(message))
            .collect();
        assert_eq!(found, [expected], "{source}");
    }
    // The opt-out silences them and asks the call to check nothing.
    let opted_out = Signature {
        dynamic_keys: true,
        ..one
    };
    let analysis = analyze("return redis.call('GET', KEYS[1] .. ARGV[1])", &opted_out);
    assert!(analysis.key_prefixes.is_empty());
}

#[test]
fn the_header_declares_a_prefix_argument() {
    let header = crate::Header::parse(
        "-- KEYS[1] = queue\n-- ARGV[1] = key prefix (hash-tagged)\n-- ARGV[2] = job id\nreturn 1",
    );
    assert_eq!(header.key_prefix_args(), BTreeSet::from([1]));
    let signature = header.documented_signature().unwrap_or_default();
    assert_eq!(signature.key_prefix_args, BTreeSet::from([1]));
}

#[test]
fn a_library_function_derives_its_own_prefixes() {
    let source = "#!lua name=queue\nredis.register_function('push', function(keys, args)\n  return redis.call('RPUSH', keys[1] .. 'jobs', args[1])\nend)\nredis.register_function('peek', function(keys, args)\n  return redis.call('LINDEX', keys[1], 0)\nend)";
    let declaration = crate::LibrarySignature {
        library: Signature::default(),
        functions: vec![
            crate::DeclaredFunction {
                name: "push".to_string(),
                signature: declared(1, 1, &[]),
            },
            crate::DeclaredFunction {
                name: "peek".to_string(),
                signature: declared(1, 0, &[]),
            },
        ],
    };
    let library = crate::analyze_library(source, &declaration);
    let errors: Vec<String> = library
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::Severity::Error)
        .map(|d| d.text())
        .collect();
    assert_eq!(errors, Vec::<String>::new());
    let prefixes: Vec<(String, BTreeSet<usize>)> = library
        .functions
        .iter()
        .map(|function| (function.name.clone(), function.key_prefixes.keys.clone()))
        .collect();
    assert_eq!(
        prefixes,
        [
            ("push".to_string(), BTreeSet::from([1])),
            ("peek".to_string(), BTreeSet::new())
        ]
    );
}

/// A key name the script reads from data (a reply, a decoded payload, an
/// element or field of one, a loop over one) may hash to any slot: it is
/// not from KEYS, through locals, aliases, helper functions and `unpack`,
/// and the message says where it was read.
#[test]
fn keys_read_from_data_are_not_from_keys() {
    let cases = [
        (
            "local target = redis.call('GET', KEYS[1])\nif not target then return 0 end\nreturn redis.call('DEL', target)",
            "3:26 key argument `target` of `DEL` does not come from KEYS (a value read from the reply of `GET` at line 1)",
        ),
        (
            "for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n  redis.call('DEL', member)\nend",
            "2:21 key argument `member` of `DEL` does not come from KEYS (a value read from the reply of `SMEMBERS` at line 1)",
        ),
        (
            "for field, name in pairs(redis.call('HGETALL', KEYS[1])) do\n  redis.call('DEL', name)\nend",
            "2:21 key argument `name` of `DEL` does not come from KEYS (a value read from the reply of `HGETALL` at line 1)",
        ),
        (
            "local queue = redis.call('HGET', KEYS[1], 'queue')\nreturn redis.call('LPUSH', queue, 'x')",
            "2:28 key argument `queue` of `LPUSH` does not come from KEYS (a value read from the reply of `HGET` at line 1)",
        ),
        (
            "local reply = redis.call('SCAN', 0)\nfor _, k in ipairs(reply[2]) do redis.call('DEL', k) end",
            "2:51 key argument `k` of `DEL` does not come from KEYS (a value read from the reply of `SCAN` at line 1)",
        ),
        (
            "local names = redis.call('KEYS', 'job:*')\nreturn redis.call('DEL', unpack(names))",
            "2:26 key argument `unpack(names)` of `DEL` does not come from KEYS (the elements of a table read from the reply of `KEYS` at line 1)",
        ),
        (
            "local name = redis.call('LPOP', KEYS[1])\nlocal alias = name\nreturn redis.call('INCR', alias)",
            "3:27 key argument `alias` of `INCR` does not come from KEYS (a value read from the reply of `LPOP` at line 1)",
        ),
        (
            "local payload = cjson.decode(ARGV[1])\nreturn redis.call('GET', payload.key)",
            "2:26 key argument `payload.key` of `GET` does not come from KEYS (a value decoded by `cjson.decode` at line 1)",
        ),
        (
            "return redis.call('DEL', ({redis.call('GET', KEYS[1])})[1])",
            "1:26 key argument `({redis.call('GET', KEYS[1])})[1]` of `DEL` does not come from KEYS (a value read from the reply of `GET` at line 1)",
        ),
        (
            "local names = {redis.call('GET', KEYS[1])}\nreturn redis.call('DEL', names[1])",
            "2:26 key argument `names[1]` of `DEL` does not come from KEYS (a value read from the reply of `GET` at line 1)",
        ),
        (
            "local names = {}\nfor _, n in ipairs(redis.call('SMEMBERS', KEYS[1])) do names[#names + 1] = n end\nreturn redis.call('DEL', unpack(names))",
            "3:26 key argument `unpack(names)` of `DEL` does not come from KEYS (the elements of a table read from the reply of `SMEMBERS` at line 2)",
        ),
        (
            "local names = {}\ntable.insert(names, redis.call('LPOP', KEYS[1]))\nreturn redis.call('EXISTS', names[1])",
            "3:29 key argument `names[1]` of `EXISTS` does not come from KEYS (a value read from the reply of `LPOP` at line 2)",
        ),
        (
            "local function pointed() return redis.call('GET', KEYS[1]) end\nreturn redis.call('DEL', pointed())",
            "2:26 key argument `pointed()` of `DEL` does not come from KEYS (a value read from the reply of `GET` at line 1)",
        ),
        (
            "local job = redis.call('GET', KEYS[1]) .. ':lock'\nreturn redis.call('DEL', job)",
            "2:26 key argument `job` of `DEL` does not come from KEYS (a value read from the reply of `GET` at line 1)",
        ),
        (
            "local function drop(a, b) local both = {a, b} return redis.call('DEL', unpack(both)) end\nreturn drop(KEYS[1], redis.call('GET', KEYS[1]))",
            "2:22 `redis.call('GET', KEYS[1])`, which the function called here passes as a key of `DEL` (line 1), does not come from KEYS (a value read from the reply of `GET` at line 2)",
        ),
        (
            "local function drop(k) return redis.call('DEL', k) end\nreturn drop(redis.call('GET', KEYS[1]))",
            "2:13 `redis.call('GET', KEYS[1])`, which the function called here passes as a key of `DEL` (line 1), does not come from KEYS (a value read from the reply of `GET` at line 2)",
        ),
    ];
    let lenient = Signature {
        keys: 1,
        args: 1,
        allow_unused: true,
        ..Signature::default()
    };
    for (source, expected) in cases {
        let found: Vec<String> = crate::analyze(source, &lenient)
            .errors()
            .map(|d| format!("{}:{} {}", d.line, d.column, d.message))
            .collect();
        assert_eq!(found, [expected], "{source}");
        // The opt-outs take it.
        let opted_out = Signature {
            dynamic_keys: true,
            ..lenient.clone()
        };
        assert_eq!(
            crate::analyze(source, &opted_out).errors().count(),
            0,
            "{source}"
        );
        let flagged = format!("#!lua flags=allow-cross-slot-keys\n{source}");
        assert_eq!(
            crate::analyze(&flagged, &lenient).errors().count(),
            0,
            "{source}"
        );
    }
    // Data used as a value, not as a key, is fine; so is a key from KEYS
    // next to data, and the index `ipairs` counts.
    for source in [
        "local n = redis.call('GET', KEYS[1])\nreturn redis.call('SET', KEYS[1], n)",
        "for i, v in ipairs(redis.call('LRANGE', KEYS[1], 0, 9)) do redis.call('HSET', KEYS[1], v, i) end",
        "local payload = cjson.decode(ARGV[1])\nreturn redis.call('HSET', KEYS[1], payload.field, payload.value)",
        "for i in ipairs(redis.call('LRANGE', KEYS[1], 0, 9)) do redis.call('INCRBY', KEYS[1], i) end",
        // A table mixing keys and data keeps no element's origin.
        "local entry = {redis.call('GET', KEYS[1]), KEYS[1]}\nreturn redis.call('DEL', entry[2])",
        // A table of keys, by position, in a loop and spread.
        "local keys = {KEYS[1], KEYS[1] .. ':b'}\nfor i = 1, #keys do redis.call('DEL', keys[i]) end\nreturn redis.call('DEL', unpack(keys))",
        // Data collected as values, sent as values.
        "local values = {}\nvalues[#values + 1] = redis.call('GET', KEYS[1])\nreturn redis.call('RPUSH', KEYS[1], unpack(values))",
    ] {
        assert_eq!(
            crate::analyze(source, &lenient)
                .errors()
                .map(|d| d.text())
                .collect::<Vec<_>>(),
            Vec::<String>::new(),
            "{source}"
        );
    }
}
