//! Scripts in the string literals of Go, Python, JavaScript, TypeScript,
//! Ruby and PHP files: found with each language's literal rules, checked
//! with the counts their calls pass, reported at host lines and columns.

mod common;

use std::path::Path;

use common::{assert_snapshot, run_in};

fn tests_directory() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests"))
}

/// `--embedded` on a folder of host files, as a user reads it: each
/// finding at its host line, the scripts built at run time named, the
/// dependency folder and the file without Lua left alone
/// (`tests/snapshots/embedded.txt`; `SNAPSHOTS=overwrite` writes it).
#[test]
fn scripts_in_host_files_are_checked_at_their_host_lines() {
    let found = run_in(tests_directory(), &["--embedded", "embedded"]);
    assert_eq!(found.status, 1, "{}", found.stderr);
    assert_snapshot("embedded.txt", &found.stdout);
}

/// Each script's counts come from its call where the call states them
/// (`NewScript(1, …)`, `[]string{…}`, `eval(src, 1, …)`, `keys: […]`,
/// `numberOfKeys`, a redis-py script object's `keys=[…], args=[…]`), else
/// from what the script reads, which the report calls a guess
/// (`script-reads`, and `guessed` for each count no call states); its line
/// is where its text starts.
#[test]
fn the_calls_give_the_counts() {
    let found = run_in(
        tests_directory(),
        &["--format", "json", "--embedded", "embedded"],
    );
    let report: serde_json::Value = serde_json::from_str(&found.stdout).expect("JSON");
    let files: Vec<String> = report["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|file| {
            let signature = &file["signature"];
            format!(
                "{} {}/{} {} {}",
                file["path"].as_str().expect("a path"),
                signature["keys"],
                signature["args"],
                signature["declared_by"].as_str().expect("declared by"),
                file["guessed"]
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            "embedded/LuaScripts.php:7 2/0 host-call []",
            "embedded/LuaScripts.php:13 1/0 script-reads [\"keys\",\"args\"]",
            "embedded/counter.tsx:3 1/0 host-call [\"args\"]",
            "embedded/extend.py:2 1/3 host-call []",
            "embedded/glide_limiter.py:9 1/4 script-reads [\"keys\",\"args\"]",
            "embedded/glide_limiter.py:24 1/3 script-reads [\"keys\",\"args\"]",
            "embedded/limiter.py:3 1/1 script-reads [\"keys\",\"args\"]",
            "embedded/limiter.py:12 1/0 host-call []",
            "embedded/limiter.ts:2 1/2 host-call [\"args\"]",
            "embedded/lock.go:7 1/2 host-call []",
            "embedded/lock.go:13 1/2 host-call []",
            "embedded/lock.go:17 1/0 host-call [\"args\"]",
            "embedded/lock.go:21 1/0 host-call []",
            "embedded/queue.rb:3 1/1 script-reads [\"keys\",\"args\"]",
            "embedded/queue.rb:12 1/1 host-call []",
        ]
    );
    assert_eq!(
        report["built_at_run_time"],
        serde_json::json!([
            "embedded/built.js:2",
            "embedded/built.js:3",
            "embedded/glide_limiter.py:42",
            "embedded/limiter.ts:9"
        ])
    );
    assert_eq!(
        report["files"][9]["embedded_in"],
        serde_json::json!({"path": "embedded/lock.go", "line": 7})
    );
}

/// Scripts written with Valkey's `server.call` are found (an RPC help text
/// naming `server.call` is not), accepted on a Valkey target, and refused
/// on a Redis one, where `server` is no global, with `redis` as the fix.
#[test]
fn valkeys_server_spelling_is_found_and_checked_for_the_target() {
    let on = |target: &str| {
        run_in(
            tests_directory(),
            &["--target", target, "embedded/glide_limiter.py"],
        )
    };
    let valkey = on("valkey-8.1");
    assert_eq!(valkey.status, 0, "{}", valkey.stdout);
    assert!(
        valkey
            .stdout
            .starts_with("checked 2 scripts: no problems found\n"),
        "{}",
        valkey.stdout
    );
    let redis = on("redis-7.0");
    assert_eq!(redis.status, 1, "{}", redis.stdout);
    assert_eq!(
        redis
            .stdout
            .matches("error[RS031]: `server` is not defined on redis-7.0")
            .count(),
        7,
        "{}",
        redis.stdout
    );
    assert!(
        redis
            .stdout
            .contains("help: use `redis`, which every server defines"),
        "{}",
        redis.stdout
    );
}

/// A host file named on the command line is read even without
/// `--embedded`; one without Lua yields no script.
#[test]
fn a_named_host_file_is_read_and_one_without_lua_yields_nothing() {
    let found = run_in(tests_directory(), &["embedded/no_lua.py"]);
    assert_eq!(
        (found.status, found.stdout.as_str()),
        (0, "checked 0 scripts: no problems found\n")
    );
    let without_flag = run_in(tests_directory(), &["embedded"]);
    assert_eq!(without_flag.status, 2);
    assert!(
        without_flag.stderr.contains("no .lua file in `embedded`"),
        "{}",
        without_flag.stderr
    );
}

/// A script no call, configuration or header gives counts to is checked
/// against the indices it reads, and the report says so: in the summary,
/// and in a finding those counts decide.
#[test]
fn guessed_counts_are_said_to_be_guesses() {
    let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join("embedded-guessed");
    std::fs::create_dir_all(&directory).expect("a scratch directory");
    std::fs::write(
        directory.join("gap.go"),
        "package gap\n\nvar get = redis.NewScript(`return redis.call('GET', KEYS[2])`)\n",
    )
    .expect("write gap.go");
    let found = run_in(&directory, &["gap.go"]);
    assert_eq!(found.status, 1, "{}", found.stderr);
    assert!(
        found.stdout.contains(
            "help: use KEYS[1] in the script, or stop passing it in the call; no call states how many keys it passes, so the checker takes the highest index the script reads (state the count with `keys = N` for this file in `redis-script.toml`)"
        ),
        "{}",
        found.stdout
    );
    assert!(
        found.stdout.ends_with(
            "checked 1 script: 1 error\ncounts guessed from the indices read (nothing states them): gap.go:3 (keys and arguments)\n"
        ),
        "{}",
        found.stdout
    );
    let json = run_in(&directory, &["--format", "json", "gap.go"]);
    assert!(
        json.stdout.contains("\"declared_by\": \"script-reads\"")
            && json.stdout.contains("\"guessed\": [\"keys\", \"args\"]"),
        "{}",
        json.stdout
    );
}
