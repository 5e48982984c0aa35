//! Runs the built `redis-script-check` on the project's own scripts and on
//! the fixtures under `tests/fixtures/`, and compares what a user reads
//! (the human report, the JSON document, the exit status) exactly.

use std::path::Path;
use std::process::Command;

mod common;

use common::{assert_snapshot, run, run_in, workspace};

#[test]
fn the_project_script_library_is_clean() {
    let sources: Vec<String> = std::fs::read_dir(workspace().join("lua"))
        .expect("lua directory")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
        .map(|path| std::fs::read_to_string(path).expect("script"))
        .collect();
    let libraries = sources
        .iter()
        .filter(|source| source.starts_with("#!lua name="))
        .count();
    let scripts = sources.len() - libraries;
    assert!(scripts >= 10, "only {scripts} scripts in lua/");
    assert_eq!(libraries, 1, "lua/quota_lib.lua");

    let human = run_in(&workspace(), &["lua"]);
    assert_eq!(
        (human.status, human.stdout.as_str()),
        (
            0,
            format!("checked {scripts} scripts and 1 library: no problems found\n").as_str()
        ),
        "{}",
        human.stderr
    );

    // Every script declares its keys and arguments in its header; a
    // function library's functions take theirs as callback parameters.
    let json = run_in(&workspace(), &["--format", "json", "lua"]);
    assert_eq!(json.status, 0);
    assert_eq!(
        json.stdout.matches("\"declared_by\": \"header\"").count(),
        scripts,
        "{}",
        json.stdout
    );
    assert!(
        json.stdout.contains("\"diagnostics\": [],"),
        "{}",
        json.stdout
    );
}

#[test]
fn an_error_reads_like_the_compiler() {
    let found = run(&["fixtures/failing/key_out_of_range.lua"]);
    assert_eq!(found.status, 1);
    assert_eq!(
        found.stdout,
        "\
error[RS011]: `KEYS[2]` is out of range: the script's header declares 1 key
 --> fixtures/failing/key_out_of_range.lua:6:28
  |
6 | return redis.call('LPUSH', KEYS[2], ARGV[1])
  |                            ^^^^^^^
  |
  = help: document it in the header (`-- KEYS[2] = …`), or the script must read one of the declared keys

checked 1 script: 1 error
"
    );
    assert_eq!(found.stderr, "");
}

#[test]
fn a_syntax_error_at_the_end_of_the_file_shows_the_last_line() {
    let found = run(&["fixtures/failing/unclosed_at_end.lua"]);
    assert_eq!(found.status, 1);
    assert_eq!(
        found.stdout,
        "\
error[RS001]: syntax error: `end` expected (to close `if` at line 3) at the end of the file
 --> fixtures/failing/unclosed_at_end.lua:5:13
  |
5 | return count
  |             ^
  |
  = help: add the missing `end`; when blocks are nested, the one missing may belong to an inner block

checked 1 script: 1 error
"
    );
}

#[test]
fn json_holds_every_file_and_diagnostic() {
    let found = run(&[
        "--format",
        "json",
        "fixtures/failing/key_out_of_range.lua",
        "fixtures/failing/indexes_missing_member.lua",
        "fixtures/failing/undeclared.lua",
    ]);
    assert_eq!(found.status, 1);
    assert_eq!(
        found.stdout,
        r#"{
  "files": [
    {"path": "fixtures/failing/key_out_of_range.lua", "signature": {"keys": 1, "variadic_keys": false, "args": 1, "variadic_args": false, "declared_by": "header"}},
    {"path": "fixtures/failing/indexes_missing_member.lua", "signature": {"keys": 1, "variadic_keys": false, "args": 0, "variadic_args": false, "declared_by": "header"}},
    {"path": "fixtures/failing/undeclared.lua", "signature": null}
  ],
  "built_at_run_time": [],
  "diagnostics": [
    {"severity": "error", "code": "RS011", "path": "fixtures/failing/key_out_of_range.lua", "line": 6, "column": 28, "width": 7, "message": "`KEYS[2]` is out of range: the script's header declares 1 key", "notes": [], "help": "document it in the header (`-- KEYS[2] = …`), or the script must read one of the declared keys", "parameter": null, "finding": null},
    {"severity": "error", "code": "RS032", "path": "fixtures/failing/indexes_missing_member.lua", "line": 3, "column": 15, "width": 4, "message": "`string.utf8` does not exist", "notes": ["the `string` library has no member `utf8`, so indexing it fails with \"attempt to index field 'utf8' (a nil value)\""], "help": "see the Redis Lua API reference for what `string` offers", "parameter": null, "finding": null},
    {"severity": "error", "code": "RS005", "path": "fixtures/failing/undeclared.lua", "line": 1, "column": 1, "width": 1, "message": "the script does not declare the keys and arguments it takes", "notes": [], "help": "document them in its header comment (`-- KEYS[1] = …`, `-- ARGV[1] = …`, `-- ARGV[2..] = …` for a variadic list), pass `--keys N --args N`, or set `keys` and `args` for it in `redis-script.toml`", "parameter": null, "finding": null}
  ],
  "errors": 3,
  "warnings": 0
}
"#
    );
}

#[test]
fn a_script_without_a_declaration_is_told_how_to_declare_one() {
    let found = run(&["fixtures/failing/undeclared.lua"]);
    assert_eq!(found.status, 1);
    assert_eq!(
        found.stdout,
        "\
error[RS005]: the script does not declare the keys and arguments it takes
 --> fixtures/failing/undeclared.lua:1:1
  |
1 | return redis.call('GET', KEYS[1])
  | ^
  |
  = help: document them in its header comment (`-- KEYS[1] = …`, `-- ARGV[1] = …`, `-- ARGV[2..] = …` for a variadic list), pass `--keys N --args N`, or set `keys` and `args` for it in `redis-script.toml`

checked 1 script: 1 error
"
    );
    // Options declare it instead; the one not given is 0.
    let declared = run(&["--keys", "1", "fixtures/failing/undeclared.lua"]);
    assert_eq!(
        (declared.status, declared.stdout.as_str()),
        (0, "checked 1 script: no problems found\n")
    );
}

#[test]
fn options_override_the_header() {
    let widened = run(&[
        "--keys=2",
        "--args=1",
        "fixtures/failing/key_out_of_range.lua",
    ]);
    assert_eq!(widened.status, 0, "{}", widened.stdout);

    let variadic = run(&["--keys", "1+", "fixtures/passing/server_time.lua"]);
    assert_eq!(variadic.status, 1);
    assert_eq!(
        variadic.stdout,
        "\
error[RS012]: key parameter 1 (`KEYS[1]`) is never read by the script
 --> fixtures/passing/server_time.lua:1:1
  |
1 | -- The server clock in milliseconds; no keys, no arguments.
  | ^
  |
  = help: use KEYS[1] in the script, pass a smaller `--keys`, or opt out with `--allow-unused`

error[RS013]: `--keys 1+` declares a variadic list of keys, but the script reads KEYS only at fixed indices
 --> fixtures/passing/server_time.lua:1:1
  |
1 | -- The server clock in milliseconds; no keys, no arguments.
  | ^
  |
  = note: extra keys would be ignored
  = help: iterate the extra keys (`for i = 2, #KEYS do … KEYS[i] … end`), or pass `--keys 1` without `+`

checked 1 script: 2 errors
"
    );
}

#[test]
fn warnings_pass_unless_denied() {
    let allowed = run(&["fixtures/passing"]);
    assert_eq!(allowed.status, 0);
    assert_eq!(
        allowed.stdout,
        "\
warning[RS032]: `redis.LOG_NOTIC` does not exist
 --> fixtures/passing/misspelled_log_level.lua:3:17
  |
3 | redis.log(redis.LOG_NOTIC, 'counter at ' .. count)
  |                 ^^^^^^^^^
  |
  = note: the `redis` library has no member `LOG_NOTIC`, so this reads nil
  = help: did you mean `redis.LOG_NOTICE`?

checked 3 scripts: 1 warning
"
    );
    let denied = run(&["--deny-warnings", "fixtures/passing"]);
    assert_eq!(denied.status, 1);
    assert!(
        denied
            .stdout
            .ends_with("checked 3 scripts: 1 warning (warnings are denied)\n"),
        "{}",
        denied.stdout
    );
}

#[test]
fn directories_are_searched_recursively_in_order() {
    let found = run(&["--format", "json", "fixtures"]);
    assert_eq!(found.status, 1);
    let paths: Vec<&str> = found
        .stdout
        .lines()
        .filter_map(|line| line.trim().strip_prefix("{\"path\": \""))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(
        paths,
        [
            "fixtures/declared/acme_put.lua",
            "fixtures/failing/indexes_missing_member.lua",
            "fixtures/failing/key_out_of_range.lua",
            "fixtures/failing/unclosed_at_end.lua",
            "fixtures/failing/undeclared.lua",
            "fixtures/key_prefixes/declared_in_header.lua",
            "fixtures/key_prefixes/undeclared.lua",
            "fixtures/keys_from_data/collected.lua",
            "fixtures/keys_from_data/constructed.lua",
            "fixtures/keys_from_data/get.lua",
            "fixtures/keys_from_data/helper.lua",
            "fixtures/keys_from_data/hget.lua",
            "fixtures/keys_from_data/json.lua",
            "fixtures/keys_from_data/lpop.lua",
            "fixtures/keys_from_data/members.lua",
            "fixtures/keys_from_data/scan.lua",
            "fixtures/keys_from_data/trailing_call.lua",
            "fixtures/keys_from_data/unpack.lua",
            "fixtures/libraries/counters.lua",
            "fixtures/passing/delete_all.lua",
            "fixtures/passing/misspelled_log_level.lua",
            "fixtures/passing/server_time.lua",
            "fixtures/read_only/touch_session.lua",
            "fixtures/targets/hash_field_expiry.lua",
        ]
    );
    assert!(
        found
            .stdout
            .ends_with("  \"errors\": 18,\n  \"warnings\": 6\n}\n"),
        "{}",
        found.stdout
    );
}

#[test]
fn usage_errors_exit_with_2() {
    for (arguments, message) in [
        (&["--fast", "lua"][..], "error: unknown option `--fast`\n"),
        (
            &[][..],
            "error: no script given: pass .lua files or directories\n",
        ),
        (
            &["--format", "xml", "fixtures"][..],
            "error: unknown format `xml`: use `--format human`, `json` or `sarif`\n",
        ),
        (
            &["fixtures/missing.lua"][..],
            "error: cannot read `fixtures/missing.lua`: No such file or directory (os error 2)\n",
        ),
    ] {
        let found = run(arguments);
        assert_eq!(found.status, 2, "{arguments:?}");
        assert_eq!(found.stdout, "", "{arguments:?}");
        assert!(
            found.stderr.starts_with(message),
            "{arguments:?}: {}",
            found.stderr
        );
        assert!(
            found
                .stderr
                .ends_with("For more information, try `--help`.\n"),
            "{arguments:?}: {}",
            found.stderr
        );
    }
}

#[test]
fn read_only_makes_a_write_an_error() {
    let script = "fixtures/read_only/touch_session.lua";
    let with_eval = run(&[script]);
    assert_eq!(
        (with_eval.status, with_eval.stdout.as_str()),
        (0, "checked 1 script: no problems found\n")
    );
    let with_eval_ro = run(&["--read-only", script]);
    assert_eq!(with_eval_ro.status, 1);
    assert!(
        with_eval_ro.stdout.contains(
            "error[RS024]: `EXPIRE` is a write command, but the script runs with EVAL_RO (`--read-only`)\n --> fixtures/read_only/touch_session.lua:4:12"
        ),
        "{}",
        with_eval_ro.stdout
    );
    assert!(run(&["--help"]).stdout.contains("--read-only"));
}

#[test]
fn an_argument_declared_a_key_prefix_derives_keys() {
    let declared = run(&["fixtures/key_prefixes/declared_in_header.lua"]);
    assert_eq!(
        (declared.status, declared.stdout.as_str()),
        (0, "checked 1 script: no problems found\n")
    );
    let script = "fixtures/key_prefixes/undeclared.lua";
    let undeclared = run(&[script]);
    assert_eq!(undeclared.status, 1);
    assert!(
        undeclared.stdout.contains(
            "error[RS014]: key argument `ARGV[1] .. 'done'` of `SADD` is built from ARGV[1], an argument not declared a key prefix"
        ) && undeclared
            .stdout
            .contains("write `-- ARGV[1] = key prefix` in the header"),
        "{}",
        undeclared.stdout
    );
    let on_the_command_line = run(&[
        "--keys",
        "1",
        "--args",
        "2",
        "--key-prefix-args",
        "1",
        script,
    ]);
    assert_eq!(
        on_the_command_line.status, 0,
        "{}",
        on_the_command_line.stdout
    );
    assert!(run(&["--help"]).stdout.contains("--key-prefix-args"));
}

#[test]
fn help_and_version() {
    let help = run(&["--help"]);
    assert_eq!(help.status, 0);
    assert!(
        help.stdout
            .starts_with("Usage: redis-script-check [OPTIONS] <PATH>...\n"),
        "{}",
        help.stdout
    );
    assert!(help.stdout.contains("-- KEYS[1] = lock key"));
    let version = run(&["-V"]);
    assert_eq!(
        (version.status, version.stdout),
        (
            0,
            format!("redis-script-check {}\n", env!("CARGO_PKG_VERSION"))
        )
    );
}

#[test]
fn the_target_decides_which_commands_exist() {
    let script = "fixtures/targets/hash_field_expiry.lua";
    // The default target builds it, and warns where it fails.
    let any = run(&[script]);
    assert_eq!(any.status, 0, "{}{}", any.stdout, any.stderr);
    assert!(
        any.stdout
            .contains("the default target (any supported server) lets this build"),
        "{}",
        any.stdout
    );
    assert!(
        any.stdout.contains("not on redis-7.0, redis-7.2"),
        "{}",
        any.stdout
    );

    let older = run(&["--target", "redis-7.2", script]);
    assert_eq!(older.status, 1, "{}", older.stdout);
    assert!(
        older.stdout.contains("`HEXPIRE` exists since Redis 7.4"),
        "{}",
        older.stdout
    );
    assert!(older.stdout.contains("redis-7.2"), "{}", older.stdout);

    let newer = run(&["--target=redis-7.4", script]);
    assert_eq!(newer.status, 0, "{}{}", newer.stdout, newer.stderr);

    // Redis 6.2 has no `HEXPIRE` either; 5.0 is no target at all.
    let six = run(&["--target", "redis-6.2", script]);
    assert_eq!(six.status, 1, "{}", six.stdout);
    assert!(
        six.stdout.contains("this script targets redis-6.2"),
        "{}",
        six.stdout
    );

    let invalid = run(&["--target", "redis-5.0", script]);
    assert_eq!(invalid.status, 2, "{}", invalid.stderr);
    assert!(invalid.stderr.contains("`--target`"), "{}", invalid.stderr);
}

#[test]
fn a_function_library_is_checked_as_its_functions_run() {
    let run = run(&["fixtures/libraries/counters.lua"]);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let report = format!("{}{}", run.stdout, run.stderr);
    assert!(
        report.contains("fixtures/libraries/counters.lua:9:54"),
        "{report}"
    );
    assert!(
        report.contains("`KEYS` is not defined in a function"),
        "{report}"
    );
    assert!(report.contains("1 error"), "{report}");
}

#[test]
fn declared_commands_come_from_the_option_or_the_variable() {
    let script = "fixtures/declared/acme_put.lua";
    let undeclared = run(&[script]);
    assert_eq!(undeclared.status, 1);
    assert!(
        undeclared
            .stdout
            .contains("unknown Redis command `ACME.PUT`"),
        "{}",
        undeclared.stdout
    );
    let with_option = run(&["--commands", "fixtures/declared/acme.commands", script]);
    assert_eq!(
        (with_option.status, with_option.stdout.as_str()),
        (0, "checked 1 script: no problems found\n")
    );
    let with_variable = Command::new(env!("CARGO_BIN_EXE_redis-script-check"))
        .arg(script)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"))
        .env("REDIS_SCRIPT_COMMANDS", "fixtures/declared/acme.commands")
        .output()
        .expect("run redis-script-check");
    assert_eq!(with_variable.status.code(), Some(0));
    let broken = run(&["--commands", "fixtures/declared/broken.commands", script]);
    assert_eq!(broken.status, 2);
    assert!(
        broken
            .stderr
            .starts_with("error: fixtures/declared/broken.commands:1:17: "),
        "{}",
        broken.stderr
    );
}

/// The report of every value finding class, one script each (the
/// compile-fail suite's `values` cases, under the default target, then the
/// one that needs a target), as a user reads it: compared with
/// `tests/snapshots/values.txt`; `SNAPSHOTS=overwrite` writes it anew for
/// review after a deliberate change of wording.
#[test]
fn every_value_finding_reads_well() {
    let tests = workspace().join("tests");
    let report = run_in(&tests, &["ui/values"]);
    assert_eq!(report.status, 1, "{}", report.stderr);
    // `single_command` speaks only where every server of the target has
    // the command.
    let targeted = run_in(
        &tests,
        &["--target", "valkey-9.1", "ui/values/single_command.lua"],
    );
    assert_eq!(targeted.status, 0, "{}", targeted.stderr);
    let both = format!(
        "{}\n$ --target valkey-9.1 ui/values/single_command.lua\n{}",
        report.stdout, targeted.stdout
    );
    assert_snapshot("values.txt", &both);
    // Each class is in it, with its name and its opt-out.
    for code in redis_script_analysis::Code::findings() {
        assert!(
            both.contains(&format!("[{code}]: "))
                && both.contains(&format!("allow({})", code.name())),
            "no case of {code} ({})",
            code.name()
        );
    }
}

/// `--report` on a clean script of the project and on the operational
/// safety cases, as a reviewer reads it: compared with
/// `tests/snapshots/report.md` (`SNAPSHOTS=overwrite` writes it anew). The
/// exit status is the check's.
#[test]
fn the_review_report_reads_well() {
    let report = run_in(
        &workspace(),
        &[
            "--report",
            "lua/release_lock.lua",
            "tests/ui/values/unbounded_read.lua",
            "tests/ui/values/endless_loop.lua",
            "--dynamic-keys",
        ],
    );
    assert_eq!(report.status, 1, "{}", report.stderr);
    assert_snapshot("report.md", &report.stdout);
    for row in [
        "| keys |",
        "| writes |",
        "| retry safety |",
        "| loops |",
        "| reads that grow with the data |",
        "| replies |",
        "| findings |",
        "| opt-outs |",
    ] {
        assert_eq!(report.stdout.matches(row).count(), 3, "{row}");
    }
}

/// `--report` opens with what the Lua engine of the target's releases is
/// exposed to, from the advisory table, and says nothing of a release the
/// table knows nothing of.
#[test]
fn the_review_report_names_the_lua_engine_advisories_of_the_target() {
    let report = run_in(
        &workspace(),
        &["--report", "--target", "redis-6.2", "lua/release_lock.lua"],
    );
    assert_eq!(report.status, 0, "{}", report.stderr);
    assert!(
        report.stdout.starts_with(
            "# Script review\n\n1 file checked by redis-script-check.\n\nLua engine (target `redis-6.2`): redis-6.2 releases before 6.2.20 are exposed to CVE-2025-49844, CVE-2025-46817, CVE-2025-46818 and CVE-2025-46819. See the guide's safety page, \"Known Lua-engine vulnerabilities\".\n\n## `lua/release_lock.lua`\n"
        ),
        "{}",
        report.stdout
    );
    let newest = run_in(
        &workspace(),
        &["--report", "--target", "redis-8.8", "lua/release_lock.lua"],
    );
    assert!(!newest.stdout.contains("Lua engine"), "{}", newest.stdout);
}

/// Each script of the project's library opens its review with what its
/// header's first line says, a line reading `Rate limiter: …` included.
#[test]
fn every_review_opens_with_the_headers_summary() {
    let report = run_in(&workspace(), &["--report", "lua"]);
    assert_eq!(report.status, 0, "{}", report.stderr);
    let mut reviewed = 0;
    for entry in std::fs::read_dir(workspace().join("lua")).expect("lua directory") {
        let path = entry.expect("entry").path();
        let source = std::fs::read_to_string(&path).expect("script");
        let Some(first) = source
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("-- "))
        else {
            continue; // a library, which has no review
        };
        let name = path.file_name().expect("file name").to_string_lossy();
        let section = report
            .stdout
            .split(&format!("## `lua/{name}`\n\n"))
            .nth(1)
            .expect("the script's section");
        assert!(
            section.starts_with(first),
            "lua/{name} opens with {:?}, not its header's {first:?}",
            section.lines().next()
        );
        reviewed += 1;
    }
    assert!(reviewed >= 10, "only {reviewed} scripts reviewed");
}

/// `--acl` on the project's scripts and library, on a script that builds
/// keys from a prefix argument and on one that takes a key read from
/// data, as a deployer reads them: compared with `tests/snapshots/acl.txt`
/// (`SNAPSHOTS=overwrite` writes it anew). The exit status is the check's.
#[test]
fn the_acl_rules_read_well() {
    let rules = run_in(
        &workspace(),
        &[
            "--acl",
            "lua",
            "tests/lua/acl/read_job.lua",
            "cli/tests/fixtures/keys_from_data/get.lua",
        ],
    );
    assert_eq!(rules.status, 1, "{}", rules.stderr);
    assert_snapshot("acl.txt", &rules.stdout);
    // A line of rules per file, and one for all of them.
    let lines = rules.stdout.lines().filter(|line| line.starts_with('+'));
    assert_eq!(lines.count(), 17);
}

/// `--acl` for a Redis 6.x target writes rules those releases take: `~`
/// for every key, `EVALSHA` for every call, and none for a library, which
/// nothing calls there; other targets keep the Redis 7.0 form.
#[test]
fn the_acl_rules_of_a_redis_6_target_are_the_ones_it_takes() {
    let paths = ["lua", "tests/lua/acl/read_job.lua"];
    for target in ["redis-6.0", "redis-6.2", "redis-6.2,redis-7.0"] {
        let mut arguments = vec!["--acl", "--target", target];
        arguments.extend(paths);
        let rules = run_in(&workspace(), &arguments);
        let lines: Vec<&str> = rules
            .stdout
            .lines()
            .filter(|line| line.starts_with('+'))
            .collect();
        // One line per script and one for all of them: the library has
        // none.
        assert_eq!(lines.len(), 15, "{target}: {}", rules.stdout);
        for line in &lines {
            for word in line.split(' ') {
                assert!(
                    !word.starts_with('%') && !word.ends_with("_ro") && !word.starts_with("+fcall"),
                    "{target}: `{word}` in {line}"
                );
            }
        }
        for expected in [
            "+evalsha +hmget ~<KEYS[1]>",
            "+evalsha +hget +incr ~<KEYS[1]> ~<ARGV[1]>*",
        ] {
            assert!(lines.contains(&expected), "{target}: {}", rules.stdout);
        }
        assert!(
            rules.stdout.contains(
                "# lua/quota_lib.lua\n#   no rules: the target has a release before Redis 7.0, which has no Redis Functions to call\n"
            ),
            "{target}: {}",
            rules.stdout
        );
        // Redis 6.0 refuses `resetchannels` (channel rules came with 6.2).
        let reset = if target == "redis-6.0" {
            "resetkeys -@all"
        } else {
            "resetkeys resetchannels -@all"
        };
        assert!(rules.stdout.contains(reset), "{target}: {}", rules.stdout);
    }
    let mut arguments = vec!["--acl", "--target", "redis-7.0"];
    arguments.extend(paths);
    let rules = run_in(&workspace(), &arguments);
    assert!(
        rules.stdout.contains("\n+evalsha_ro +hmget %R~<KEYS[1]>\n")
            && rules.stdout.contains("\n+fcall +fcall_ro "),
        "{}",
        rules.stdout
    );
}

/// `--explain` prints the long explanation of every code, found by its
/// code in any case or by its name; `all` lists them; anything else is a
/// usage error with the nearest code.
#[test]
fn every_code_is_explained() {
    for code in redis_script_analysis::Code::ALL {
        for asked in [
            code.code().to_owned(),
            code.code().to_lowercase(),
            code.name().to_owned(),
        ] {
            let found = run(&["--explain", &asked]);
            assert_eq!(found.status, 0, "{asked}: {}", found.stderr);
            assert_eq!(found.stdout, code.explanation(), "{asked}");
        }
    }
    let all = run(&["--explain", "all"]);
    assert_eq!(all.status, 0);
    assert_eq!(
        all.stdout.lines().count(),
        redis_script_analysis::Code::ALL.len()
    );
    assert!(all.stdout.starts_with("RS001  syntax "), "{}", all.stdout);
    let unknown = run(&["--explain", "always_tru"]);
    assert_eq!(unknown.status, 2);
    assert!(
        unknown.stderr.starts_with(
            "error: `--explain always_tru`: no such code; did you mean `always_true`?"
        ),
        "{}",
        unknown.stderr
    );
}

/// What the checker needs besides the file to see an explanation's example
/// as the user would: the code's own options, or `None` for the codes only
/// the attribute reports (a Rust type or a declaration is part of the
/// mistake), whose examples are the trybuild cases' business.
fn explanation_options(code: redis_script_analysis::Code) -> Option<&'static [&'static str]> {
    use redis_script_analysis::Code;
    match code {
        // The declaration takes fewer parameters than the header names.
        Code::HeaderContradiction => Some(&["--keys", "1", "--args", "1"]),
        Code::SingleCommand => Some(&["--target", "valkey-9.1"]),
        Code::UnresolvedInclude => Some(&["--includes", "bullmq", "--keys", "1"]),
        Code::WrongKindOfFile
        | Code::InternalError
        | Code::ReplyType
        | Code::JsonArgument
        | Code::UnreturnedVariant
        | Code::UnraisedErrorCode
        | Code::UnregisteredFunction
        | Code::UndeclaredFunction => None,
        _ => Some(&[]),
    }
}

/// The Lua blocks of `markdown`, in order.
fn lua_blocks(markdown: &str) -> Vec<&str> {
    markdown
        .split("```lua\n")
        .skip(1)
        .filter_map(|block| block.split_once("```").map(|(code, _)| code))
        .collect()
}

/// Every explanation's example is a script the checker reports with that
/// code, and its fix one it no longer reports.
#[test]
fn every_explanation_example_gets_its_code_and_every_fix_does_not() {
    let directory =
        std::env::temp_dir().join(format!("redis-script-explain-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("a temporary directory");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for &code in redis_script_analysis::Code::ALL {
        let Some(options) = explanation_options(code) else {
            continue;
        };
        let (example, fix) = code
            .explanation()
            .split_once("\n## Fix\n")
            .expect("a fix section");
        let cases = [(lua_blocks(example), true), (lua_blocks(fix), false)];
        assert!(!cases[0].0.is_empty(), "{code} has no example");
        for (blocks, reported) in cases {
            for (index, block) in blocks.into_iter().enumerate() {
                let file = format!("{code}_{reported}_{index}.lua");
                std::fs::write(directory.join(&file), block).expect("write the example");
                let mut arguments = vec!["--format", "json"];
                arguments.extend_from_slice(options);
                arguments.push(&file);
                let found = run_in(&directory, &arguments);
                let has_code = found.stdout.contains(&format!("\"code\": \"{code}\""));
                if has_code != reported {
                    wrong.push(format!("{file}: {}", found.stdout));
                }
                checked += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&directory);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked > 80, "only {checked} examples");
}

/// Scripts that use key names read from data (a reply, a set's members, a
/// hash field, `SCAN`, a list, a decoded payload, through an alias, a
/// helper, a helper's reply, a table they were collected in or made of,
/// or `unpack`) fail the check, each with the place it read the
/// key; with the opt-out they pass, and the review lists their lines.
#[test]
fn keys_read_from_data_fail_without_the_opt_out() {
    let directory = "fixtures/keys_from_data";
    let scripts: Vec<String> = std::fs::read_dir(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(directory),
    )
    .expect("the fixtures")
    .map(|entry| {
        entry
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .into_owned()
    })
    .filter(|name| name.ends_with(".lua"))
    .collect();
    assert!(scripts.len() >= 8, "{scripts:?}");
    for script in &scripts {
        let path = format!("{directory}/{script}");
        let found = run(&["--format", "json", &path]);
        assert_eq!(found.status, 1, "{path}: {}", found.stdout);
        let report: serde_json::Value = serde_json::from_str(&found.stdout).expect("JSON");
        let errors: Vec<&serde_json::Value> = report["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|diagnostic| diagnostic["severity"] == "error")
            .collect();
        assert!(
            !errors.is_empty()
                && errors.iter().all(|error| error["code"] == "RS014"
                    && error["message"]
                        .as_str()
                        .is_some_and(|message| message.contains(" at line "))),
            "{path}: {}",
            found.stdout
        );
        let opted_out = run(&["--dynamic-keys", &path]);
        assert_eq!(opted_out.status, 0, "{path}: {}", opted_out.stdout);
        let review = run(&["--report", "--dynamic-keys", &path]);
        assert!(
            !review
                .stdout
                .contains("every key a command takes comes from KEYS"),
            "{path}: {}",
            review.stdout
        );
    }
}

/// Run inside a crate, the checker reads `[env]` of `.cargo/config.toml`
/// here or in a parent directory, as `cargo build` does for the attribute:
/// the same script is checked for the same target.
#[test]
fn the_target_in_cargo_config_applies() {
    let root = std::env::temp_dir().join(format!("redis-script-cargo-env-{}", std::process::id()));
    let crate_dir = root.join("service");
    std::fs::create_dir_all(root.join(".cargo")).expect("a directory");
    std::fs::create_dir_all(crate_dir.join("lua")).expect("a directory");
    std::fs::write(
        root.join(".cargo/config.toml"),
        "[env]\nREDIS_SCRIPT_TARGET = \"redis-7.2\"\n",
    )
    .expect("write the config");
    std::fs::write(
        crate_dir.join("lua/expire_field.lua"),
        "-- KEYS[1] = session\n-- ARGV[1] = field\nreturn redis.call('HEXPIRE', KEYS[1], 60, 'FIELDS', 1, ARGV[1])\n",
    )
    .expect("write the script");
    let check = |target: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_redis-script-check"));
        command
            .current_dir(&crate_dir)
            .env_remove("REDIS_SCRIPT_TARGET")
            .arg("lua");
        if let Some(target) = target {
            command.env("REDIS_SCRIPT_TARGET", target);
        }
        let output = command.output().expect("run redis-script-check");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (status, stdout) = check(None);
    assert_eq!(status, Some(1), "{stdout}");
    assert!(
        stdout.contains("`HEXPIRE` exists since Redis 7.4") && stdout.contains("redis-7.2"),
        "{stdout}"
    );
    // The environment wins over the file, as with Cargo.
    let (status, stdout) = check(Some("redis-7.4"));
    assert_eq!(status, Some(0), "{stdout}");
    let _ = std::fs::remove_dir_all(&root);
}
