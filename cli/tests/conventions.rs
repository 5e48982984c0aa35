//! The checker on scripts kept the way other projects keep them: a
//! `redis-script.toml` next to them, includes a loader resolves, prelude
//! files a loader sends first; and what CI tools read: SARIF and a
//! baseline.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Run, ci_tools, run_in};

fn conventions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conventions")
}

fn run(arguments: &[&str]) -> Run {
    run_in(&conventions(), arguments)
}

/// A copy of `tests/conventions/<name>` in a fresh temporary directory,
/// for tests that change files.
fn copy_of(name: &str, test: &str) -> PathBuf {
    let target = std::env::temp_dir().join(format!(
        "redis-script-conventions-{}-{test}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&target);
    copy_tree(&conventions().join(name), &target);
    target
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory");
    for entry in std::fs::read_dir(from).expect("a fixture directory") {
        let entry = entry.expect("an entry");
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

/// bullmq's `--- @include` lines are resolved as its loader resolves them
/// (relative to the including file, `.lua` added, each file once, nested
/// includes first), so the functions they define are defined; a mistake
/// in an included file is reported in that file, once for all the scripts
/// including it, with how the script got it; an include that names no file
/// is the loader's error; the included files are not checked on their own;
/// the key counts come from the file names.
#[test]
fn includes_are_resolved_and_findings_point_into_the_included_file() {
    let found = run(&["queue"]);
    assert_eq!(found.status, 1, "{}", found.stderr);
    assert_eq!(
        found.stdout,
        "\
error[RS007]: the include `includes/missing` names no file (looked for `queue/includes/missing.lua`)
 --> queue/popJob-1.lua:8:14
  |
8 | --- @include \"includes/missing\"
  |              ^^^^^^^^^^^^^^^^^^
  |
  = help: the path is relative to this file's directory, with `.lua` added when it has no extension

error[RS020]: unknown Redis command `INCRR`: the call fails at run time
 --> queue/includes/pushAndCount.lua:5:21
  |
5 |   return redis.call('INCRR', counter)
  |                     ^^^^^^^
  |
  = note: this file is part of `queue/popJob-1.lua`, which includes it at line 7
  = note: reported once: 1 more script includes this line
  = help: did you mean `INCR`? if `INCRR` comes from a module or a newer server, declare it in the file named by REDIS_SCRIPT_COMMANDS (see the redis-script docs) to have its calls checked

checked 2 scripts: 2 errors
"
    );
}

/// Include lines that no configuration asks for are read as bullmq's
/// loader reads them, with the same diagnostics as `includes = "bullmq"`
/// gives, and the run says once how to ask for it; where an include names
/// no file, the names the script reads without defining are not reported
/// one by one, the include's error says so.
#[test]
fn include_lines_without_a_configuration_are_resolved_and_said_once() {
    let unconfigured = copy_of("queue", "unconfigured");
    std::fs::remove_file(unconfigured.join("redis-script.toml")).expect("remove");
    std::fs::write(
        unconfigured.join("ackJob-1.lua"),
        "-- KEYS[1] = job\n--- @include \"includes/gone\"\nreturn gone(KEYS[1]) + gone(KEYS[1])\n",
    )
    .expect("write");
    let found = run_in(&unconfigured, &["--target", "redis-7.2", "."]);
    assert_eq!(found.status, 1, "{}", found.stderr);
    assert!(
        !found.stdout.contains("RS030"),
        "undefined names: {}",
        found.stdout
    );
    assert!(
        found.stdout.contains(
            "\
error[RS007]: the include `includes/gone` names no file (looked for `./includes/gone.lua`)
 --> ./ackJob-1.lua:2:14
  |
2 | --- @include \"includes/gone\"
  |              ^^^^^^^^^^^^^^^
  |
  = note: 2 uses of names the script does not define are not reported: the file it cannot include may define them
"
        ),
        "{}",
        found.stdout
    );
    // The included files are parts of scripts, not scripts.
    assert!(
        found.stdout.ends_with(
            "\
checked 3 scripts: 3 errors
includes: the `--- @include` lines of 3 scripts were read as bullmq's loader reads them, as no configuration says how: say so with `includes = \"bullmq\"` in `redis-script.toml`, or `--includes bullmq`
"
        ),
        "{}",
        found.stdout
    );
    // As the configuration would have them, the summary aside.
    let json = |arguments: &[&str]| {
        let mut all = vec!["--format", "json", "--target", "redis-7.2"];
        all.extend_from_slice(arguments);
        run_in(&unconfigured, &all).stdout
    };
    let pushed = json(&["pushJob-2.lua"]);
    assert_eq!(pushed, json(&["--includes", "bullmq", "pushJob-2.lua"]));
    assert!(pushed.contains("\"errors\": 1"), "{pushed}");
    // Told how includes are read, the checker reads them so and says nothing.
    let configured = run_in(
        &unconfigured,
        &["--includes", "bullmq", "--target", "redis-7.2", "."],
    );
    assert!(
        !configured.stdout.contains("includes:"),
        "{}",
        configured.stdout
    );
    let _ = std::fs::remove_dir_all(unconfigured);
}

/// A file named on the command line is checked even when other scripts
/// include it; the command line's counts win over the configuration's.
#[test]
fn the_command_line_wins_over_the_configuration() {
    let included = run(&["--format", "json", "queue/includes/trim.lua"]);
    assert!(
        included
            .stdout
            .contains("\"path\": \"queue/includes/trim.lua\", \"signature\": {\"keys\": 0"),
        "{}",
        included.stdout
    );
    let counted = run(&["--keys", "1", "--args", "1", "queue/pushJob-2.lua"]);
    assert!(
        counted
            .stdout
            .contains("`KEYS[2]` is out of range: the command line declares 1 key"),
        "{}",
        counted.stdout
    );
    let configured = copy_of("queue", "command-line");
    std::fs::write(
        configured.join("redis-script.toml"),
        "includes = \"bullmq\"\n[[scripts]]\nfiles = \"push*.lua\"\nkeys = 1\n",
    )
    .expect("write");
    let by_configuration = run_in(&configured, &["pushJob-2.lua"]);
    assert!(
        by_configuration
            .stdout
            .contains("`KEYS[2]` is out of range: the configuration declares 1 key")
            && by_configuration
                .stdout
                .contains("help: set `keys = 2` in `redis-script.toml`"),
        "{}",
        by_configuration.stdout
    );
    let _ = std::fs::remove_dir_all(configured);
}

/// A prelude is checked with the script it precedes, and a finding in it
/// says which script's configuration put it there; the prelude file is not
/// checked on its own.
#[test]
fn a_prelude_comes_before_its_script() {
    let clean = run(&["limiter"]);
    assert_eq!(
        (clean.status, clean.stdout.as_str()),
        (0, "checked 1 script: no problems found\n")
    );
    let broken = copy_of("limiter", "prelude");
    let refs = broken.join("refs.lua");
    let text = std::fs::read_to_string(&refs).expect("read");
    std::fs::write(&refs, text.replace("'HGET'", "'HGETT'")).expect("write");
    let found = run_in(&broken, &["."]);
    assert_eq!(found.status, 1);
    assert!(
        found.stdout.contains(" --> ./refs.lua:3:30\n")
            && found
                .stdout
                .contains("= note: the configuration's prelude puts this file before `./take.lua`"),
        "{}",
        found.stdout
    );
    let _ = std::fs::remove_dir_all(broken);
}

/// A configuration the checker cannot follow is a usage error naming the
/// file and the setting.
#[test]
fn a_wrong_configuration_is_a_usage_error() {
    let directory = copy_of("limiter", "configuration");
    for (text, expected) in [
        ("keys = 1\n", "unknown field `keys`"),
        (
            "[[scripts]]\nfiles = \"*.lua\"\nkeys = \"many\"\n",
            "`keys = \"many\"`: expected a number such as 2, \"2+\" for two followed by a variadic list, or \"file-name\"",
        ),
        ("target = \"redis-2.0\"\n", "`target`"),
        ("includes = \"require\"\n", "unknown variant `require`"),
    ] {
        std::fs::write(directory.join("redis-script.toml"), text).expect("write");
        let found = run_in(&directory, &["take.lua"]);
        assert_eq!(found.status, 2, "{text}: {}", found.stdout);
        assert!(
            found.stderr.contains(expected) && found.stderr.contains("redis-script.toml"),
            "{text}: {}",
            found.stderr
        );
    }
    let _ = std::fs::remove_dir_all(directory);
}

/// `--format sarif` is a SARIF 2.1.0 log that the OASIS schema accepts
/// (checked by the reference validator, Python's `jsonschema`), with one
/// result per diagnostic at its file, line and columns, and one rule per
/// code; the validator refuses a log with a mistake, so the check is real.
#[test]
fn sarif_validates_against_the_schema() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let found = run_in(
        &fixtures,
        &["--format", "sarif", "fixtures/failing", "conventions/queue"],
    );
    assert_eq!(found.status, 1, "{}", found.stderr);
    let log: serde_json::Value = serde_json::from_str(&found.stdout).expect("JSON");
    assert_eq!(validate(&found.stdout), Ok(()));
    let run = &log["runs"][0];
    let results = run["results"].as_array().expect("results");
    let json = run_in(
        &fixtures,
        &["--format", "json", "fixtures/failing", "conventions/queue"],
    );
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let diagnostics = report["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(results.len(), diagnostics.len());
    for (result, diagnostic) in results.iter().zip(diagnostics) {
        let place = &result["locations"][0]["physicalLocation"];
        assert_eq!(result["ruleId"], diagnostic["code"]);
        assert_eq!(result["level"], diagnostic["severity"]);
        assert_eq!(place["artifactLocation"]["uri"], diagnostic["path"]);
        assert_eq!(place["region"]["startLine"], diagnostic["line"]);
        assert_eq!(place["region"]["startColumn"], diagnostic["column"]);
        let rule =
            &run["tool"]["driver"]["rules"][result["ruleIndex"].as_u64().expect("index") as usize];
        assert_eq!(rule["id"], result["ruleId"]);
    }
    assert!(
        results.iter().any(
            |result| result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == "conventions/queue/includes/pushAndCount.lua"
        ),
        "{}",
        found.stdout
    );
    let broken = found
        .stdout
        .replacen("\"version\": \"2.1.0\"", "\"version\": \"2.2\"", 1);
    assert!(validate(&broken).is_err());
}

/// Validates `log` with the SARIF 2.1.0 schema.
fn validate(log: &str) -> Result<(), String> {
    let schema = ci_tools();
    let mut python = Command::new("python3")
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             schema = json.load(open(sys.argv[1]))\n\
             jsonschema.Draft4Validator.check_schema(schema)\n\
             errors = list(jsonschema.Draft4Validator(schema).iter_errors(json.load(sys.stdin)))\n\
             for error in errors: print(list(error.absolute_path), error.message)\n\
             sys.exit(1 if errors else 0)\n",
            schema.trim(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    python
        .stdin
        .take()
        .expect("stdin")
        .write_all(log.as_bytes())
        .expect("write the log");
    let output = python.wait_with_output().expect("the validator's verdict");
    match output.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(String::from_utf8_lossy(&output.stdout).into_owned()),
        _ => panic!(
            "the validator failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// `--update-baseline` records today's findings and passes; then the same
/// run passes with them hidden, a finding moved down by a new line above
/// it stays hidden, a new finding fails alone, and a fixed one is reported
/// as gone.
#[test]
fn the_baseline_round_trips() {
    let directory = copy_of("queue", "baseline");
    let write = run_in(
        &directory,
        &["--baseline", "baseline.json", "--update-baseline", "."],
    );
    assert_eq!(write.status, 0, "{}{}", write.stdout, write.stderr);
    assert_eq!(write.stderr, "recorded 2 findings in `baseline.json`\n");
    let recorded: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(directory.join("baseline.json")).expect("the baseline"),
    )
    .expect("JSON");
    assert_eq!(recorded["findings"].as_array().map(Vec::len), Some(2));
    assert_eq!(recorded["findings"][0]["path"], "includes/pushAndCount.lua");

    let again = run_in(&directory, &["--baseline", "baseline.json", "."]);
    assert_eq!(again.status, 0, "{}", again.stdout);
    assert_eq!(
        again.stdout,
        "checked 2 scripts: no problems found\n2 findings recorded in the baseline `baseline.json` not shown\n"
    );

    let include = directory.join("includes/pushAndCount.lua");
    let text = std::fs::read_to_string(&include).expect("read");
    std::fs::write(
        &include,
        format!(
            "-- Moved down a line.\n{}",
            text.replace("'LPUSH'", "'LPUSHH'")
        ),
    )
    .expect("write");
    let new = run_in(
        &directory,
        &["--baseline", "baseline.json", "--format", "json", "."],
    );
    assert_eq!(new.status, 1);
    let report: serde_json::Value = serde_json::from_str(&new.stdout).expect("JSON");
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|diagnostic| diagnostic["message"].as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("`LPUSHH`"), "{messages:?}");

    std::fs::write(&include, text.replace("'INCRR'", "'INCR'")).expect("write");
    let fixed = run_in(&directory, &["--baseline", "baseline.json", "."]);
    assert_eq!(fixed.status, 0, "{}", fixed.stdout);
    assert!(
        fixed.stdout.ends_with(
            "1 finding recorded in the baseline `baseline.json` not shown\n1 finding of the baseline no longer found: run with `--update-baseline` to drop it\n"
        ),
        "{}",
        fixed.stdout
    );
    let missing = run_in(&directory, &["--baseline", "absent.json", "."]);
    assert_eq!(missing.status, 2);
    assert!(
        missing.stderr.contains("`--update-baseline` writes it"),
        "{}",
        missing.stderr
    );
    let _ = std::fs::remove_dir_all(directory);
}

/// The pre-commit hook of the README, as written, in a fresh repository:
/// it fails the commit of a script with a mistake, showing the mistake,
/// and passes once it is fixed.
#[test]
fn the_readme_s_pre_commit_hook_works_as_written() {
    ci_tools();
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("the README");
    let hook = readme
        .split("```yaml\n")
        .filter_map(|block| block.split_once("```").map(|(yaml, _)| yaml))
        .find(|yaml| yaml.contains("repos:"))
        .expect("the README shows a pre-commit configuration");
    let repository =
        std::env::temp_dir().join(format!("redis-script-pre-commit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repository);
    std::fs::create_dir_all(repository.join("src/commands")).expect("a directory");
    std::fs::write(repository.join(".pre-commit-config.yaml"), hook).expect("write");
    let script = repository.join("src/commands/bump.lua");
    std::fs::write(
        &script,
        "-- KEYS[1] = counter\nreturn redis.call('INCRR', KEYS[1])\n",
    )
    .expect("write");
    let binary = Path::new(env!("CARGO_BIN_EXE_redis-script-check"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().expect("its directory").to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ),
    )
    .expect("a PATH");
    let git = |arguments: &[&str]| {
        let status = Command::new("git")
            .args(arguments)
            .current_dir(&repository)
            .output()
            .expect("run git");
        assert!(
            status.status.success(),
            "git {arguments:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    let pre_commit = || {
        Command::new("python3")
            .args(["-m", "pre_commit", "run", "--all-files"])
            .current_dir(&repository)
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", repository.join(".cache"))
            .output()
            .expect("run pre-commit")
    };
    let failed = pre_commit();
    let shown = String::from_utf8_lossy(&failed.stdout).into_owned();
    assert!(!failed.status.success(), "{shown}");
    assert!(
        shown.contains("redis-script-check") && shown.contains("unknown Redis command `INCRR`"),
        "{shown}"
    );
    std::fs::write(
        &script,
        "-- KEYS[1] = counter\nreturn redis.call('INCR', KEYS[1])\n",
    )
    .expect("write");
    git(&["add", "."]);
    let passed = pre_commit();
    assert!(
        passed.status.success(),
        "{}",
        String::from_utf8_lossy(&passed.stdout)
    );
    let _ = std::fs::remove_dir_all(repository);
}
