//! The checker under targets: the default accepts what some server accepts,
//! a named target rejects what one of its servers rejects.

use crate::{DeclaredCommands, Severity, Signature, Target, analyze};

/// A signature of `keys` keys and `args` arguments under `target`.
pub(crate) fn signature(keys: usize, args: usize, target: &str) -> Signature {
    Signature {
        keys,
        args,
        target: match Target::parse(target) {
            Ok(target) => target,
            Err(error) => panic!("{error}"),
        },
        ..Signature::default()
    }
}

fn errors(source: &str, keys: usize, args: usize, target: &str) -> Vec<String> {
    analyze(source, &signature(keys, args, target))
        .errors()
        .map(|d| d.text())
        .collect()
}

/// Scripts that run on some supported server, each failing on an older one.
const NEWER_SERVERS: &[(&str, usize, usize, &str, &str)] = &[
    (
        "return redis.call('JSON.SET', KEYS[1], '$', ARGV[1])",
        1,
        1,
        "redis-7.2",
        "`JSON.SET` is a command of the JSON module, which Redis bundles since 8.0: this crate targets redis-7.2 without it",
    ),
    (
        "return redis.call('BLPOP', KEYS[1], 0)",
        1,
        0,
        "redis-7.0",
        "`BLPOP` cannot be called from a script on redis-7.0 (allowed since Redis 7.2 and Valkey 7.2)",
    ),
    (
        "return redis.call('ZRANK', KEYS[1], ARGV[1], 'WITHSCORE')",
        1,
        1,
        "redis-7.0",
        "`ZRANK` takes exactly 2 arguments after its name on redis-7.0, but this call passes 3: Redis fails with \"Wrong number of args calling Redis command from script\"",
    ),
    (
        "return redis.call('HGETEX', KEYS[1], 'EX', 10, 'FIELDS', 1, ARGV[1])",
        1,
        1,
        "redis-7.2",
        "`HGETEX` exists since Redis 8.0 and Valkey 9.0; this crate targets redis-7.2",
    ),
    (
        "return server.call('GET', KEYS[1])",
        1,
        0,
        "redis-7.2",
        "`server` is not defined on redis-7.2: reading it fails there with \"Script attempted to access nonexistent global variable\" (it exists since Valkey 7.2; this crate targets redis-7.2)",
    ),
    (
        "return redis.call('HEXPIRE', KEYS[1], 10, 'FIELDS', 1, ARGV[1])",
        1,
        1,
        "redis-7.2",
        "`HEXPIRE` exists since Redis 7.4 and Valkey 9.0; this crate targets redis-7.2",
    ),
    (
        "return redis.call('DELIFEQ', KEYS[1], ARGV[1])",
        1,
        1,
        "valkey-8.1",
        "`DELIFEQ` exists since Valkey 9.0, not on Redis (up to 8.10): this crate targets valkey-8.1",
    ),
    (
        "return redis.call('MSETEX', 2, KEYS[1], ARGV[1], KEYS[2], ARGV[2], 'PX', 500)",
        2,
        2,
        "valkey-9.0",
        "`MSETEX` exists since Redis 8.4 and Valkey 9.1; this crate targets valkey-9.0",
    ),
    (
        "return redis.call('DELEX', KEYS[1], 'IFEQ', ARGV[1])",
        1,
        1,
        "redis-8.2",
        "`DELEX` exists since Redis 8.4, not on Valkey (up to 9.1); this crate targets redis-8.2",
    ),
    // Redis 8.8 and 8.10: commands the documentation pages date there.
    (
        "return redis.call('INCREX', KEYS[1], 'BYINT', ARGV[1], 'SATURATE')",
        1,
        1,
        "redis-8.6",
        "`INCREX` exists since Redis 8.8, not on Valkey (up to 9.1); this crate targets redis-8.6",
    ),
    (
        "return redis.call('LMOVEM', KEYS[1], KEYS[2], 'LEFT', 'RIGHT', 2)",
        2,
        0,
        "redis-8.8",
        "`LMOVEM` exists since Redis 8.10, not on Valkey (up to 9.1); this crate targets redis-8.8",
    ),
];

#[test]
fn the_default_accepts_what_some_server_accepts() {
    for (source, keys, args, _, _) in NEWER_SERVERS {
        assert_eq!(
            errors(source, *keys, *args, "any"),
            Vec::<String>::new(),
            "{source}"
        );
    }
}

#[test]
fn a_named_target_rejects_what_its_server_rejects() {
    for (source, keys, args, target, message) in NEWER_SERVERS {
        assert_eq!(errors(source, *keys, *args, target), [*message], "{source}");
    }
}

#[test]
fn a_target_that_has_the_command_accepts_it() {
    for (source, keys, args, target) in [
        (
            "return redis.call('JSON.SET', KEYS[1], '$', ARGV[1])",
            1,
            1,
            "redis-8.0",
        ),
        (
            "return redis.call('JSON.SET', KEYS[1], '$', ARGV[1])",
            1,
            1,
            "redis-7.2+json",
        ),
        (
            "return redis.call('BLPOP', KEYS[1], 0)",
            1,
            0,
            "redis-7.2,valkey-8.1",
        ),
        (
            "return redis.call('HGETEX', KEYS[1], 'EX', 10, 'FIELDS', 1, ARGV[1])",
            1,
            1,
            "redis-8.2",
        ),
        ("return server.call('GET', KEYS[1])", 1, 0, "valkey-8.0"),
        ("return os.clock()", 0, 0, "redis-7.4"),
        (
            "return redis.call('HGETEX', KEYS[1], 'EX', 10, 'FIELDS', 1, ARGV[1])",
            1,
            1,
            "redis-8.0,valkey-9.0",
        ),
        (
            "return redis.call('DELIFEQ', KEYS[1], ARGV[1])",
            1,
            1,
            "valkey-9.0,valkey-9.1",
        ),
        (
            "return redis.call('MSETEX', 2, KEYS[1], ARGV[1], KEYS[2], ARGV[2], 'PX', 500)",
            2,
            2,
            "valkey-9.1",
        ),
        (
            "return redis.call('DELEX', KEYS[1], 'IFEQ', ARGV[1])",
            1,
            1,
            "redis-8.4",
        ),
        (
            "return redis.call('MSETEX', 2, KEYS[1], ARGV[1], KEYS[2], ARGV[2], 'PX', 500)",
            2,
            2,
            "redis-8.4,valkey-9.1",
        ),
        (
            "return redis.call('INCREX', KEYS[1], 'BYINT', ARGV[1], 'SATURATE')",
            1,
            1,
            "redis-8.8",
        ),
        (
            "return redis.call('LMOVEM', KEYS[1], KEYS[2], 'LEFT', 'RIGHT', 2)",
            2,
            0,
            "redis-8.10",
        ),
    ] {
        assert_eq!(
            errors(source, keys, args, target),
            Vec::<String>::new(),
            "{source} on {target}"
        );
    }
}

#[test]
fn a_list_is_strict_for_each_server() {
    assert_eq!(
        errors(
            "return server.call('GET', KEYS[1])",
            1,
            0,
            "valkey-8.1,redis-8.2"
        ),
        [
            "`server` is not defined on redis-8.2: reading it fails there with \"Script attempted to access nonexistent global variable\" (it exists since Valkey 7.2; this crate targets valkey-8.1,redis-8.2)"
        ]
    );
}

#[test]
fn wrong_everywhere_is_wrong_under_the_default() {
    assert_eq!(
        errors("return redis.call('ZRANK', KEYS[1])", 1, 0, "any"),
        [
            "`ZRANK` takes at least 2 arguments after its name, but this call passes 1: Redis fails with \"Wrong number of args calling Redis command from script\""
        ]
    );
    assert_eq!(
        errors("return redis.call('EVAL', 'return 1', 0)", 0, 0, "any"),
        ["`EVAL` cannot be called from a script: Redis marks it `noscript`"]
    );
}

#[test]
fn deprecated_commands_are_notes_naming_the_replacement() {
    for target in ["any", "redis-7.0", "valkey-8.1", "valkey-9.1"] {
        let analysis = analyze(
            "return redis.call('GETSET', KEYS[1], ARGV[1])",
            &signature(1, 1, target),
        );
        let notes: Vec<(Severity, String)> = analysis
            .diagnostics
            .iter()
            .map(|d| (d.severity, d.text()))
            .collect();
        assert_eq!(
            notes,
            [(
                Severity::Warning,
                "`GETSET` is deprecated since Redis 6.2.0: use `SET` with the `GET` argument instead"
                    .to_owned()
            )],
            "{target}"
        );
    }
}

#[test]
fn module_flags_hold_on_every_target_with_the_module() {
    for target in ["any", "redis-8.0", "redis-7.2+json"] {
        let read = analyze(
            "return redis.call('JSON.GET', KEYS[1])",
            &signature(1, 0, target),
        );
        assert!(read.read_only, "{target}");
        assert_eq!(
            errors(
                "#!lua flags=no-writes\nreturn redis.call('JSON.SET', KEYS[1], '$', ARGV[1])",
                1,
                1,
                target
            ),
            [
                "`JSON.SET` is a write command, but the script declares `#!lua flags=no-writes`: Redis refuses it (Write commands are not allowed from read-only scripts)"
            ],
            "{target}"
        );
    }
}

#[test]
fn declared_commands_are_checked() {
    let declared = match DeclaredCommands::parse(
        "MYMOD.PUT arity=-3 keys=1 write\nMYMOD.GET arity=2 keys=1 readonly\n",
    ) {
        Ok(declared) => declared,
        Err(errors) => panic!("{errors:?}"),
    };
    let check = |source: &str| {
        let signature = Signature {
            keys: 1,
            args: 1,
            declared_commands: declared.clone(),
            ..Signature::default()
        };
        let analysis = analyze(source, &signature);
        let errors: Vec<String> = analysis.errors().map(|d| d.text()).collect();
        (errors, analysis.read_only)
    };
    assert_eq!(
        check("return redis.call('mymod.put', KEYS[1], ARGV[1])"),
        (vec![], false)
    );
    assert_eq!(
        check("return redis.call('MYMOD.GET', KEYS[1], ARGV[1])").0,
        [
            "`MYMOD.GET` takes exactly 1 argument after its name, but this call passes 2: Redis fails with \"Wrong number of args calling Redis command from script\""
        ]
    );
    assert_eq!(
        check("redis.call('MYMOD.GET', ARGV[1]) return KEYS[1]").0,
        [
            "key argument `ARGV[1]` of `MYMOD.GET` does not come from KEYS (ARGV[1], an argument): Redis Cluster routes the script by KEYS only, so this key may live on another node"
        ]
    );
    let (unknown, _) = check("return redis.call('MYMOD.DEL', KEYS[1], ARGV[1])");
    assert_eq!(
        unknown,
        ["unknown Redis command `MYMOD.DEL`: the call fails at run time"]
    );
    assert_eq!(
        check("redis.call('MYMOD.GET', KEYS[1]) return ARGV[1]"),
        (vec![], true)
    );
}
