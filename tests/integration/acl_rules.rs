//! The ACL rules the analysis generates (`redis-script-check --acl`), with
//! the live server as the oracle, for every script and library of `lua/`
//! and scripts that build keys from a prefix argument:
//! a user holding exactly the generated rules (each placeholder replaced by
//! the keys the calls pass) runs every call below; the same user without
//! any one of the rules fails some call with an ACL refusal; and a command
//! or a key the script does not use is denied. The rules are the ones
//! generated for the server's own release (`--target redis-6.2` on Redis
//! 6.2.5): Redis 6.x gets `~` and `+evalsha`, and refuses the Redis 7.0
//! form.

use redis::Value;
use redis_script_analysis::Target;
use redis_script_analysis::acl::AclRules;
use redis_script_analysis::{Header, LibrarySignature, Signature, analyze, analyze_library};
use redis_script_test::RedisServer;

use crate::releases::{before_redis_6_2, before_redis_7};
use crate::server_refusals::target_of;

/// One call: what the administrator stores first, then the keys and the
/// arguments, and for a library the function (and whether it is called
/// with `FCALL_RO`).
struct Case {
    seed: &'static [&'static [&'static str]],
    function: Option<(&'static str, bool)>,
    keys: &'static [&'static str],
    args: &'static [&'static str],
}

const fn call(
    seed: &'static [&'static [&'static str]],
    keys: &'static [&'static str],
    args: &'static [&'static str],
) -> Case {
    Case {
        seed,
        function: None,
        keys,
        args,
    }
}

/// Each file of `lua/`, and scripts that build keys from a prefix argument,
/// with calls that between them run every command it can run (a rule no
/// call needs would pass the removal test).
const SCRIPTS: &[(&str, &[Case])] = &[
    (
        "tests/lua/derived/argv_prefix.lua",
        &[call(
            &[],
            &["{acl}:counter"],
            &["{acl}:queue:", "job-1", "payload"],
        )],
    ),
    (
        "tests/lua/acl/read_job.lua",
        &[call(
            &[&["HSET", "{acl}:queue:job:job-1", "payload", "p"]],
            &["{acl}:counter"],
            &["{acl}:queue:", "job-1"],
        )],
    ),
    (
        "lua/counter_increment.lua",
        &[call(&[], &["{acl}:counter"], &["5"])],
    ),
    (
        "lua/enqueue_job.lua",
        &[call(&[], &["{acl}:queue:"], &["job-1", "payload"])],
    ),
    (
        "lua/idempotency_claim.lua",
        &[
            call(&[], &["{acl}:claim"], &["me", "1000"]),
            call(
                &[&["HSET", "{acl}:claim", "state", "running", "owner", "other"]],
                &["{acl}:claim"],
                &["me", "1000"],
            ),
        ],
    ),
    (
        "lua/idempotency_complete.lua",
        &[call(
            &[&["HSET", "{acl}:claim", "state", "running", "owner", "me"]],
            &["{acl}:claim"],
            &["me", "200", "body", "1000"],
        )],
    ),
    (
        "lua/lock_acquire.lua",
        &[
            call(&[], &["{acl}:lock", "{acl}:fence"], &["me", "1000"]),
            call(
                &[&["SET", "{acl}:lock", "me"]],
                &["{acl}:lock", "{acl}:fence"],
                &["me", "1000"],
            ),
            call(
                &[&["SET", "{acl}:lock", "other"]],
                &["{acl}:lock", "{acl}:fence"],
                &["me", "1000"],
            ),
        ],
    ),
    (
        "lua/lock_extend.lua",
        &[call(
            &[&["SET", "{acl}:lock", "me"]],
            &["{acl}:lock"],
            &["me", "1000"],
        )],
    ),
    (
        "lua/rate_limit_fixed.lua",
        &[
            call(&[], &["{acl}:window"], &["5", "1000"]),
            call(
                &[&["SET", "{acl}:window", "5"]],
                &["{acl}:window"],
                &["5", "1000"],
            ),
        ],
    ),
    (
        "lua/rate_limit_sliding.lua",
        &[
            call(&[], &["{acl}:log"], &["5", "1000", "request-1"]),
            call(
                &[&[
                    "ZADD",
                    "{acl}:log",
                    "99999999999999",
                    "a",
                    "99999999999999",
                    "b",
                ]],
                &["{acl}:log"],
                &["1", "1000", "request-2"],
            ),
        ],
    ),
    (
        "lua/release_lock.lua",
        &[call(
            &[&["SET", "{acl}:lock", "me"]],
            &["{acl}:lock"],
            &["me"],
        )],
    ),
    (
        "lua/session_touch.lua",
        &[call(
            &[],
            &["session:{acl}:s1", "user-sessions:{acl}"],
            &["s1", "1000", "cli"],
        )],
    ),
    (
        "lua/transfer.lua",
        &[call(
            &[&["SET", "{acl}:from", "10"]],
            &["{acl}:from", "{acl}:to"],
            &["3"],
        )],
    ),
    (
        "lua/versioned_get.lua",
        &[call(
            &[&["HSET", "{acl}:doc", "version", "1", "doc", "{}"]],
            &["{acl}:doc"],
            &[],
        )],
    ),
    (
        "lua/versioned_set.lua",
        &[
            call(&[], &["{acl}:doc"], &["{\"a\":1}", "", "1000"]),
            call(
                &[&["HSET", "{acl}:doc", "version", "1", "doc", "{}"]],
                &["{acl}:doc"],
                &["{\"a\":2}", "1", "0"],
            ),
        ],
    ),
    (
        "lua/quota_lib.lua",
        &[
            Case {
                seed: &[],
                function: Some(("fixed_window_allow", false)),
                keys: &["{acl}:quota"],
                args: &["5", "1000"],
            },
            Case {
                seed: &[&["SET", "{acl}:quota", "5"]],
                function: Some(("fixed_window_allow", false)),
                keys: &["{acl}:quota"],
                args: &["5", "1000"],
            },
            Case {
                seed: &[&["SET", "{acl}:quota", "2"]],
                function: Some(("quota_peek", true)),
                keys: &["{acl}:quota"],
                args: &[],
            },
        ],
    ),
];

const USER: &str = "acl-app";
const PASSWORD: &str = "acl-app-password";

/// The generated rules of `file` for `target`, as `ACL SETUSER` words,
/// each placeholder replaced by what `cases` pass there.
fn rules_for(file: &str, source: &str, cases: &[Case], target: &Target) -> Vec<String> {
    let rules = if redis_script_analysis::is_library(source) {
        let library = LibrarySignature {
            library: Signature {
                target: target.clone(),
                ..Signature::default()
            },
            ..LibrarySignature::default()
        };
        AclRules::of_library(&analyze_library(source, &library), &library)
    } else {
        let header = Header::parse(source);
        let signature = Signature {
            key_prefix_args: header.key_prefix_args(),
            target: target.clone(),
            ..header
                .documented_signature()
                .unwrap_or_else(|| panic!("{file}: its header declares its keys and arguments"))
        };
        AclRules::of_script(&analyze(source, &signature), &signature)
    };
    let line = rules.render("");
    let mut words = Vec::new();
    for word in line.split(' ').filter(|word| !word.is_empty()) {
        let Some(start) = word.find('<') else {
            words.push(word.to_owned());
            continue;
        };
        let (permission, placeholder) = word.split_at(start);
        let end = placeholder.find('>').expect("a closed placeholder");
        let (name, rest) = (&placeholder[1..end], &placeholder[end + 1..]);
        let (table, index) = name.split_once('[').expect("KEYS[n] or ARGV[n]");
        let position: usize = index
            .strip_suffix(']')
            .and_then(|index| index.parse().ok())
            .unwrap_or_else(|| panic!("{file}: a placeholder of this test's kind: {word}"));
        // The same position holds the same key or prefix in every call.
        let passed = if table == "KEYS" {
            cases[0].keys
        } else {
            cases[0].args
        };
        let key = passed[position - 1];
        words.push(format!("{permission}{key}{rest}"));
    }
    words
}

fn query(connection: &mut redis::Connection, command: &redis::Cmd) -> Value {
    command.query::<Value>(connection).unwrap_or_else(|error| {
        Value::ServerError(error.try_into().unwrap_or_else(|error| panic!("{error}")))
    })
}

/// Whether `reply` is the server refusing on ACL grounds, at the call or
/// inside the script.
fn acl_refusal(reply: &Value) -> bool {
    let Value::ServerError(error) = reply else {
        return false;
    };
    let text = format!("{error:?}").to_ascii_lowercase();
    // NOPERM at the call; inside a script, Redis 7.0 says "The user
    // executing the script can't run this command or subcommand", later
    // releases "ACL failure in script: … no permissions to …".
    text.contains("noperm")
        || text.contains("acl failure")
        || text.contains("no permissions")
        || text.contains("the user executing the script can't")
}

/// Replaces the user's rules with `rules`.
fn set_user(administrator: &mut redis::Connection, rules: &[String]) {
    let mut command = redis::cmd("ACL");
    command
        .arg("SETUSER")
        .arg(USER)
        .arg("reset")
        .arg("on")
        .arg(format!(">{PASSWORD}"));
    for rule in rules {
        command.arg(rule);
    }
    let reply = query(administrator, &command);
    assert_eq!(reply, Value::Okay, "ACL SETUSER {rules:?}");
}

/// Seeds the case's data and calls it as the user: the reply.
fn run(
    administrator: &mut redis::Connection,
    application: &mut redis::Connection,
    sha1: &str,
    case: &Case,
    read_only: bool,
) -> Value {
    query(administrator, &redis::cmd("FLUSHALL"));
    for command in case.seed {
        query(administrator, redis::cmd(command[0]).arg(&command[1..]));
    }
    let (name, target) = match case.function {
        Some((function, true)) => ("FCALL_RO", function),
        Some((function, false)) => ("FCALL", function),
        None if read_only => ("EVALSHA_RO", sha1),
        None => ("EVALSHA", sha1),
    };
    query(
        application,
        redis::cmd(name)
            .arg(target)
            .arg(case.keys.len())
            .arg(case.keys)
            .arg(case.args),
    )
}

#[test]
fn the_generated_rules_are_exactly_what_each_script_needs() {
    let server = RedisServer::start();
    let mut administrator = server.client().get_connection().expect("connection");
    // The rules for the server's own release, as `--target` names it.
    let target = target_of(&server);
    if before_redis_7() {
        rules_of_redis_7_are_refused(&mut administrator);
    }
    for (file, cases) in SCRIPTS {
        let path = format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(&path).expect("the script");
        let rules = rules_for(file, &source, cases, &target);
        let library = redis_script_analysis::is_library(&source);
        if library && before_redis_7() {
            // Nothing calls a library there: no rules (the errors of a
            // library call on 6.x are `releases.rs`'s).
            assert_eq!(rules, Vec::<String>::new(), "{file} for {target}");
            continue;
        }
        let sha1 = if library {
            let reply = query(
                &mut administrator,
                redis::cmd("FUNCTION")
                    .arg("LOAD")
                    .arg("REPLACE")
                    .arg(&source),
            );
            assert!(!matches!(reply, Value::ServerError(_)), "{file}: {reply:?}");
            String::new()
        } else {
            redis::cmd("SCRIPT")
                .arg("LOAD")
                .arg(&source)
                .query(&mut administrator)
                .expect("SCRIPT LOAD")
        };
        let read_only = rules.iter().any(|rule| rule == "+evalsha_ro");
        set_user(&mut administrator, &rules);
        let mut application = server.client().get_connection().expect("connection");
        let auth = query(&mut application, redis::cmd("AUTH").arg(USER).arg(PASSWORD));
        assert_eq!(auth, Value::Okay, "AUTH");

        // Every call runs with the rules as generated.
        for case in *cases {
            let reply = run(&mut administrator, &mut application, &sha1, case, read_only);
            assert!(
                !matches!(reply, Value::ServerError(_)),
                "{file} {:?} {:?} with {rules:?}: {reply:?}",
                case.keys,
                case.args
            );
        }
        // Without any one rule, some call is refused.
        let mut refused_with = |rules: &[String]| {
            set_user(&mut administrator, rules);
            cases.iter().any(|case| {
                acl_refusal(&run(
                    &mut administrator,
                    &mut application,
                    &sha1,
                    case,
                    read_only,
                ))
            })
        };
        for (index, removed) in rules.iter().enumerate() {
            let mut fewer = rules.clone();
            fewer.remove(index);
            assert!(
                refused_with(&fewer),
                "{file}: every call ran without `{removed}`"
            );
            // A key rule with one permission: the other one is not enough.
            let other = if let Some(pattern) = removed.strip_prefix("%R~") {
                format!("%W~{pattern}")
            } else if let Some(pattern) = removed.strip_prefix("%W~") {
                format!("%R~{pattern}")
            } else {
                continue;
            };
            fewer.insert(index, other.clone());
            assert!(
                refused_with(&fewer),
                "{file}: every call ran with `{other}` for `{removed}`"
            );
        }
        // A command the script does not run, and a key it does not take.
        set_user(&mut administrator, &rules);
        let key = cases[0].keys[0];
        for unused in [
            vec!["FLUSHALL"],
            vec!["SET", key, "v"],
            vec!["HGETALL", key],
            vec!["UNLINK", key],
        ] {
            if rules.contains(&format!("+{}", unused[0].to_ascii_lowercase())) {
                continue;
            }
            if before_redis_7() {
                // No `ACL DRYRUN` before 7.0: the user sends it, and the
                // server refuses it before running it.
                let reply = query(&mut application, redis::cmd(unused[0]).arg(&unused[1..]));
                assert!(
                    acl_refusal(&reply),
                    "{file}: `{unused:?}` is not denied: {reply:?}"
                );
                continue;
            }
            let reply = query(
                &mut administrator,
                redis::cmd("ACL").arg("DRYRUN").arg(USER).arg(&unused),
            );
            assert!(
                matches!(&reply, Value::BulkString(text) if String::from_utf8_lossy(text).contains("no permissions")),
                "{file}: `{unused:?}` is not denied: {reply:?}"
            );
        }
        let elsewhere = Case {
            seed: &[],
            function: cases[0].function,
            keys: &["{elsewhere}:key"],
            args: cases[0].args,
        };
        if cases[0].keys.len() == 1 {
            let reply = run(
                &mut administrator,
                &mut application,
                &sha1,
                &elsewhere,
                read_only,
            );
            assert!(acl_refusal(&reply), "{file}: another key: {reply:?}");
        }
    }
}

/// The least-privilege guide's application user for `enqueue_job.lua`, as
/// written: its rules are the generated ones with `queue:{emails}:` in
/// place of `<KEYS[1]>`, and the user enqueues a job.
#[test]
fn the_guide_s_application_user_runs_as_written() {
    let guide = include_str!("../../runtime/src/doc/guide/least_privilege.md");
    let line = guide
        .lines()
        .find(|line| line.starts_with("ACL SETUSER application on >application-password resetkeys"))
        .expect("the guide's ACL SETUSER line");
    let words: Vec<&str> = line.split(' ').collect();
    let source = include_str!("../../lua/enqueue_job.lua");
    let signature = Header::parse(source)
        .documented_signature()
        .expect("the header declares the keys");
    let generated = AclRules::of_script(&analyze(source, &signature), &signature)
        .render("")
        .replace("<KEYS[1]>", "queue:{emails}:");
    assert!(
        line.ends_with(&format!("-@all {generated}")),
        "the guide's rules are not the generated ones: {line} vs {generated}"
    );

    let server = RedisServer::start();
    let mut administrator = server.client().get_connection().expect("connection");
    let mut words = words;
    if before_redis_6_2() {
        // Redis 6.0 has no channel rules: it refuses `resetchannels`.
        let reply = query(&mut administrator, redis::cmd(words[0]).arg(&words[1..]));
        assert!(matches!(reply, Value::ServerError(_)), "{line}: {reply:?}");
        words.retain(|word| *word != "resetchannels");
    }
    let reply = query(&mut administrator, redis::cmd(words[0]).arg(&words[1..]));
    assert_eq!(reply, Value::Okay, "{line}");
    let sha1: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(source)
        .query(&mut administrator)
        .expect("SCRIPT LOAD");
    let mut application = server.client().get_connection().expect("connection");
    let auth = query(
        &mut application,
        redis::cmd("AUTH")
            .arg("application")
            .arg("application-password"),
    );
    assert_eq!(auth, Value::Okay);
    let reply = query(
        &mut application,
        redis::cmd("EVALSHA")
            .arg(&sha1)
            .arg(1)
            .arg("queue:{emails}:")
            .arg("job-1")
            .arg("payload"),
    );
    assert_eq!(reply, Value::Int(1), "the job is enqueued");
    let elsewhere = query(
        &mut application,
        redis::cmd("EVALSHA")
            .arg(&sha1)
            .arg(1)
            .arg("queue:{sms}:")
            .arg("job-1")
            .arg("payload"),
    );
    assert!(acl_refusal(&elsewhere), "another queue: {elsewhere:?}");
}

/// On Redis 6.x, which has neither key selectors by access (`%R~`, `%W~`)
/// nor `EVALSHA_RO` and `FCALL`: the server refuses each rule the checker
/// generates for a Redis 7.0 target, which is why a 6.x target gets `~`
/// and `+evalsha` instead (the rest of the test proves those).
fn rules_of_redis_7_are_refused(administrator: &mut redis::Connection) {
    let Ok(redis_7) = Target::parse("redis-7.0") else {
        panic!("redis-7.0 is a target");
    };
    let mut refused = Vec::new();
    for (file, cases) in SCRIPTS {
        let path = format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(&path).expect("the script");
        for rule in rules_for(file, &source, cases, &redis_7) {
            if !(rule.starts_with('%') || rule.ends_with("_ro") || rule.starts_with("+fcall")) {
                continue;
            }
            let mut command = redis::cmd("ACL");
            command.arg("SETUSER").arg(USER).arg(&rule);
            let reply = query(administrator, &command);
            assert!(
                matches!(&reply, Value::ServerError(_)),
                "{file}: {rule} on Redis 6.x: {reply:?}"
            );
            refused.push(rule);
        }
    }
    for form in ["%R~", "%W~", "+evalsha_ro", "+fcall", "+fcall_ro"] {
        assert!(
            refused.iter().any(|rule| rule.starts_with(form)),
            "no generated rule for Redis 7.0 reads {form}: {refused:?}"
        );
    }
}
