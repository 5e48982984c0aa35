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

/// What Redis 6.0 and 6.2 refuse, each checked live against 6.0.9 and
/// 6.2.5 (`redis-cli EVAL`, and the generator's probes).
mod before_seven {
    use super::{errors, signature};
    use crate::{DeclaredFunction, LibrarySignature, Severity, analyze, analyze_library};

    const NX_GET: &str = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET')";

    #[test]
    fn set_nx_get_is_refused_on_6_2_and_taken_from_7_0() {
        assert_eq!(
            errors(NX_GET, 1, 1, "redis-6.2"),
            [
                "`SET` takes `NX` and `GET` each alone on redis-6.2, but not together: the call fails there with \"ERR syntax error\""
            ]
        );
        // Either option alone is fine there, and the pair from 7.0 on.
        for source in [
            "return redis.call('SET', KEYS[1], ARGV[1], 'GET')",
            "return redis.call('SET', KEYS[1], ARGV[1], 'NX')",
            "return redis.call('SET', KEYS[1], ARGV[1], 'XX', 'GET')",
        ] {
            assert_eq!(
                errors(source, 1, 1, "redis-6.2"),
                Vec::<String>::new(),
                "{source}"
            );
        }
        for target in ["redis-7.0", "valkey-7.2", "any"] {
            let analysis = analyze(NX_GET, &signature(1, 1, target));
            assert!(
                analysis.diagnostics.is_empty(),
                "{target}: {:?}",
                analysis.diagnostics
            );
        }
        // A list with a 6.x release is strict for it.
        assert_eq!(errors(NX_GET, 1, 1, "redis-6.2,redis-7.0").len(), 1);
    }

    #[test]
    fn the_get_option_is_refused_on_6_0() {
        for (source, option) in [
            ("return redis.call('SET', KEYS[1], ARGV[1], 'GET')", "GET"),
            (
                "return redis.call('set', KEYS[1], ARGV[1], 'pxat', 1700000000000)",
                "PXAT",
            ),
        ] {
            assert_eq!(
                errors(source, 1, 1, "redis-6.0"),
                [format!(
                    "`SET` has no `{option}` option on redis-6.0 (it takes one since Redis 6.2 and Valkey 7.2): the server there refuses the call with \"ERR syntax error\""
                )],
                "{source}"
            );
            assert_eq!(
                errors(source, 1, 1, "redis-6.2"),
                Vec::<String>::new(),
                "{source}"
            );
        }
        // Both 6.x releases named: `GET` is unknown to one, refused with
        // `NX` by the other.
        assert_eq!(errors(NX_GET, 1, 1, "redis-6.0,redis-6.2").len(), 2);
        // A value that happens to read `GET` is no option.
        assert_eq!(
            errors(
                "return redis.call('SET', KEYS[1], 'GET')",
                1,
                0,
                "redis-6.0"
            ),
            Vec::<String>::new()
        );
        // An option word only known at run time decides nothing.
        assert_eq!(
            errors(
                "return redis.call('SET', KEYS[1], ARGV[1], ARGV[2])",
                1,
                2,
                "redis-6.0"
            ),
            Vec::<String>::new()
        );
    }

    /// Redis 6.0's `ZADD` has no `GT`/`LT` (6.2 added them): it reads the
    /// word as a score, and refuses the call ("ERR syntax error" for an odd
    /// count of values, "ERR value is not a valid float" otherwise). The
    /// checker names the option, not the count it breaks.
    #[test]
    fn zadd_has_no_gt_on_6_0() {
        let gt = "`ZADD` has no `GT` option on redis-6.0 (it takes one since Redis 6.2 and Valkey 7.2): the server there takes the word for a `score` and refuses the call";
        for (source, args) in [
            ("return redis.call('ZADD', KEYS[1], 'GT', 1, 'm')", 0),
            (
                "return redis.call('ZADD', KEYS[1], 'gt', 'CH', ARGV[1], 'm')",
                1,
            ),
            (
                "return redis.call('zadd', KEYS[1], 'XX', 'GT', ARGV[1], ARGV[1])",
                1,
            ),
        ] {
            assert_eq!(errors(source, 1, args, "redis-6.0"), [gt], "{source}");
            for target in ["redis-6.2", "redis-7.0", "valkey-7.2", "any"] {
                assert_eq!(
                    errors(source, 1, args, target),
                    Vec::<String>::new(),
                    "{source} under {target}"
                );
            }
        }
        assert_eq!(
            errors(
                "return redis.call('ZADD', KEYS[1], 'LT', 1, 'm')",
                1,
                0,
                "redis-6.0"
            ),
            [gt.replace("`GT`", "`LT`")]
        );
        // A member that reads `GT`, and an option word known only at run
        // time, are no option.
        for (source, args) in [
            ("return redis.call('ZADD', KEYS[1], 1, 'GT')", 0),
            ("return redis.call('ZADD', KEYS[1], ARGV[1], 1, 'm')", 1),
        ] {
            assert_eq!(
                errors(source, 1, args, "redis-6.0"),
                Vec::<String>::new(),
                "{source}"
            );
        }
        // Three values after `GT`: a broken count where `GT` is an option,
        // four values whose first is no score on 6.0.
        let broken = "return redis.call('ZADD', KEYS[1], 'GT', 1, 'm', 2)";
        assert_eq!(errors(broken, 1, 0, "redis-6.0"), [gt]);
        let counted = errors(broken, 1, 0, "redis-6.2");
        assert!(
            counted.len() == 1 && counted[0].contains("in groups of 2"),
            "{counted:?}"
        );
        // Both 6.x releases named: 6.0 lacks it, and so the list does.
        assert_eq!(
            errors(
                "return redis.call('ZADD', KEYS[1], 'GT', 1, 'm')",
                1,
                0,
                "redis-6.0,redis-6.2"
            )
            .len(),
            1
        );
    }

    #[test]
    fn read_only_commands_and_functions_do_not_exist() {
        assert_eq!(
            errors("return redis.call('SORT_RO', KEYS[1])", 1, 0, "redis-6.2"),
            ["`SORT_RO` exists since Redis 7.0 and Valkey 7.2; this crate targets redis-6.2"]
        );
        assert_eq!(
            errors("return redis.call('FCALL', 'f', 0)", 0, 0, "redis-6.0"),
            ["`FCALL` exists since Redis 7.0 and Valkey 7.2; this crate targets redis-6.0"]
        );
        let mut read_only = signature(1, 0, "redis-6.2");
        read_only.read_only = true;
        let texts: Vec<String> = analyze("return redis.call('GET', KEYS[1])", &read_only)
            .errors()
            .map(|d| d.text())
            .collect();
        assert_eq!(
            texts,
            [
                "the script runs with EVAL_RO (`--read-only`), which redis-6.2 lacks: the server answers \"ERR unknown command `EVAL_RO`\" (this crate targets redis-6.2)"
            ]
        );
        read_only.target = signature(0, 0, "redis-7.0").target;
        assert_eq!(
            analyze("return redis.call('GET', KEYS[1])", &read_only)
                .errors()
                .count(),
            0
        );
    }

    #[test]
    fn a_library_needs_functions() {
        let source = "#!lua name=counters\nredis.register_function('bump', function(keys, args)\n  return redis.call('INCRBY', keys[1], args[1])\nend)\n";
        let declaration = |target: &str| LibrarySignature {
            library: signature(0, 0, target),
            functions: vec![DeclaredFunction {
                name: "bump".into(),
                signature: signature(1, 1, target),
            }],
        };
        let texts: Vec<String> = analyze_library(source, &declaration("redis-6.2"))
            .errors()
            .map(|d| d.text())
            .collect();
        assert_eq!(
            texts,
            [
                "redis-6.2 has no Redis Functions: `FUNCTION LOAD` and `FCALL` came with Redis 7.0, and an older server answers \"ERR unknown command\" (this crate targets redis-6.2)"
            ]
        );
        for target in ["redis-7.0", "any"] {
            assert_eq!(
                analyze_library(source, &declaration(target))
                    .errors()
                    .count(),
                0,
                "{target}"
            );
        }
    }

    #[test]
    fn a_shebang_line_does_not_compile() {
        for source in [
            "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])",
            "#!lua\nreturn redis.call('GET', KEYS[1])",
        ] {
            let analysis = analyze(source, &signature(1, 0, "redis-6.0,redis-6.2"));
            let found: Vec<(Severity, usize, usize, String)> = analysis
                .diagnostics
                .iter()
                .map(|d| (d.severity, d.line, d.column, d.text()))
                .collect();
            assert_eq!(
                found,
                [(
                    Severity::Error,
                    1,
                    1,
                    "redis-6.0, redis-6.2 cannot run a script with a `#!` line: script flags came with Redis 7.0, and an older server compiles the line as Lua and fails with \"Error compiling script (new function): user_script:1: unexpected symbol near '#'\" (this crate targets redis-6.0,redis-6.2)".to_owned()
                )],
                "{source}"
            );
            assert_eq!(errors(source, 1, 0, "redis-7.0"), Vec::<String>::new());
            assert_eq!(errors(source, 1, 0, "any"), Vec::<String>::new());
        }
    }

    #[test]
    fn the_6x_sandbox_is_its_own() {
        // `redis.setresp` exists since 6.0; `redis.REDIS_VERSION` since 7.0.
        assert_eq!(
            errors(
                "redis.setresp(3)\nreturn redis.call('GET', KEYS[1])",
                1,
                0,
                "redis-6.0"
            ),
            Vec::<String>::new()
        );
        let version = errors("return redis.REDIS_VERSION", 0, 0, "redis-6.2");
        assert!(
            matches!(version.as_slice(), [message] if message.contains("REDIS_VERSION") && message.contains("redis-6.2")),
            "{version:?}"
        );
        // `print` still existed before 7.0; from 7.0 it is gone.
        assert_eq!(
            errors("print('x')\nreturn 1", 0, 0, "redis-6.2"),
            Vec::<String>::new()
        );
        assert_eq!(
            errors("print('x')\nreturn 1", 0, 0, "redis-7.0"),
            ["`print` is not available in Redis scripts: reading it fails at run time"]
        );
    }
}
