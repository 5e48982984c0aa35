//! The key oracle: the server says which keys a script touches, and every
//! key it touches that the call did not pass in KEYS must be one the
//! analysis reports (`key_not_from_keys`, naming the command), unless the
//! script opts out with `#!lua flags=allow-cross-slot-keys`.
//!
//! Each script runs with every `redis.call`/`redis.pcall` recorded (a local
//! `redis` that records, then calls the real one), on data seeded five ways
//! (nothing, and each key a string, set, list or sorted set holding key
//! names), and `COMMAND GETKEYS` names the keys of each recorded call. The
//! scripts are the analysis corpus (`tests/lua/corpus`, which the checker
//! accepts: they must touch no key outside KEYS) and the checker's
//! fixtures of keys read from data (each reported). `REDIS_SCRIPT_KEY_ORACLE`
//! names another directory of `.lua` files to measure, such as the fetched
//! corpus of public projects; the test prints the table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use redis_script_analysis::{Code, Signature, analyze};
use redis_script_test::RedisServer;

/// How many keys and arguments each call passes: more than any script of
/// the corpora reads, so that no read of KEYS or ARGV is nil.
const KEY_COUNT: usize = 20;
const ARG_COUNT: usize = 30;
/// The key names the seeded data holds: none of them is in KEYS.
const DATA_KEYS: [&str; 2] = ["{o}from-data-1", "{o}from-data-2"];

/// How the keys are seeded before a run.
const SEEDS: [&str; 5] = ["nothing", "string", "set", "list", "sorted set"];

/// `source` with every `redis.call`/`redis.pcall` recorded: it replies
/// with the recorded calls instead of its own reply.
fn instrumented(source: &str) -> String {
    let (shebang, body) = match source.strip_prefix("#!") {
        Some(_) => source.split_once('\n').unwrap_or((source, "")),
        None => ("", source),
    };
    let shebang = if shebang.is_empty() {
        String::new()
    } else {
        format!("{shebang}\n")
    };
    format!(
        "{shebang}local __calls = {{}}
local __real = redis
local function __record(...)
  local call = {{}}
  for i = 1, select('#', ...) do
    local word = select(i, ...)
    -- The server refuses such a call before it touches a key.
    if type(word) ~= 'string' and type(word) ~= 'number' then return end
    call[i] = tostring(word)
  end
  __calls[#__calls + 1] = call
end
local redis = setmetatable({{
  call = function(...) __record(...) return __real.call(...) end,
  pcall = function(...) __record(...) return __real.pcall(...) end,
}}, {{__index = __real}})
local server = redis
pcall(function(...)
{body}
end)
return __calls
"
    )
}

/// The keys each call passes (one hash tag, so they share a slot) and its
/// arguments.
fn keys_and_args() -> (Vec<String>, Vec<String>) {
    (
        (1..=KEY_COUNT)
            .map(|index| format!("{{o}}k{index}"))
            .collect(),
        (1..=ARG_COUNT).map(|index| index.to_string()).collect(),
    )
}

fn seed(connection: &mut redis::Connection, how: &str) {
    let () = redis::cmd("FLUSHALL").query(connection).expect("FLUSHALL");
    for key in keys_and_args().0 {
        let mut command = match how {
            "string" => redis::cmd("SET"),
            "set" => redis::cmd("SADD"),
            "list" => redis::cmd("RPUSH"),
            "sorted set" => redis::cmd("ZADD"),
            _ => return,
        };
        command.arg(&key);
        match how {
            "string" => {
                command.arg(DATA_KEYS[0]);
            }
            "sorted set" => {
                for (score, member) in DATA_KEYS.iter().enumerate() {
                    command.arg(score).arg(member);
                }
            }
            _ => {
                command.arg(&DATA_KEYS[..]);
            }
        }
        let _: redis::Value = command.query(connection).expect("seed");
    }
}

/// The calls `source` made on data seeded `how`, each as its words.
fn calls(connection: &mut redis::Connection, source: &str, how: &str) -> Vec<Vec<String>> {
    seed(connection, how);
    let (keys, args) = keys_and_args();
    let reply: redis::RedisResult<Vec<Vec<String>>> = redis::cmd("EVAL")
        .arg(instrumented(source))
        .arg(keys.len())
        .arg(&keys)
        .arg(&args)
        .query(connection);
    reply.unwrap_or_default()
}

/// The keys of a call, as the server reads them (none for a command
/// without keys or with arguments it refuses).
fn keys_of(connection: &mut redis::Connection, call: &[String]) -> Vec<String> {
    let mut command = redis::cmd("COMMAND");
    command.arg("GETKEYS").arg(call);
    command.query(connection).unwrap_or_default()
}

/// One script's verdict: the calls that touched keys outside KEYS, and
/// those of them the analysis did not report.
struct Verdict {
    outside: BTreeSet<String>,
    missed: BTreeSet<String>,
    ran_calls: bool,
}

fn judge(connection: &mut redis::Connection, path: &Path) -> Verdict {
    let source = std::fs::read_to_string(path).expect("read the script");
    let opted_out = source
        .lines()
        .next()
        .is_some_and(|line| line.starts_with("#!") && line.contains("allow-cross-slot-keys"));
    let signature = Signature {
        variadic_keys: true,
        variadic_args: true,
        allow_unused: true,
        ..Signature::default()
    };
    let reported: Vec<String> = analyze(&source, &signature)
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Code::KeyNotFromKeys)
        .map(|diagnostic| diagnostic.message.clone())
        .collect();
    let keys = keys_and_args().0;
    let mut verdict = Verdict {
        outside: BTreeSet::new(),
        missed: BTreeSet::new(),
        ran_calls: false,
    };
    for how in SEEDS {
        for call in calls(connection, &source, how) {
            verdict.ran_calls = true;
            let command = call
                .first()
                .map(|name| name.to_ascii_uppercase())
                .unwrap_or_default();
            // A key in KEYS, or built by appending to one (whose hash
            // tag the call checks), is routed with the call.
            let outside = keys_of(connection, &call)
                .into_iter()
                .any(|key| !keys.iter().any(|passed| key.starts_with(passed.as_str())));
            if !outside {
                continue;
            }
            verdict.outside.insert(command.clone());
            let named = format!("`{command}`");
            if !opted_out && !reported.iter().any(|message| message.contains(&named)) {
                verdict
                    .missed
                    .insert(format!("{command} (data seeded as {how})"));
            }
        }
    }
    verdict
}

fn lua_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "lua") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_key_a_script_touches_outside_keys_is_reported() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let accepted = lua_files(&root.join("lua/corpus"));
    let from_data = lua_files(&root.join("../cli/tests/fixtures/keys_from_data"));
    assert!(accepted.len() >= 30 && from_data.len() >= 8);
    for path in &accepted {
        let verdict = judge(&mut connection, path);
        assert!(
            verdict.outside.is_empty(),
            "{}: touched keys outside KEYS with {:?}",
            path.display(),
            verdict.outside
        );
    }
    let mut reached = 0;
    for path in &from_data {
        let verdict = judge(&mut connection, path);
        assert!(
            verdict.missed.is_empty(),
            "{}: missed {:?}",
            path.display(),
            verdict.missed
        );
        reached += usize::from(!verdict.outside.is_empty());
    }
    // The seeded data reaches the keys read from data in most fixtures
    // (not the hash field, the JSON payload or the SCAN pattern they need).
    assert!(
        reached >= 5,
        "only {reached} fixtures touched a key read from data"
    );
    if let Some(directory) = std::env::var_os("REDIS_SCRIPT_KEY_ORACLE") {
        let (mut scripts, mut ran, mut touching, mut missed) = (0, 0, 0, Vec::new());
        for path in lua_files(Path::new(&directory)) {
            let verdict = judge(&mut connection, &path);
            scripts += 1;
            ran += usize::from(verdict.ran_calls);
            touching += usize::from(!verdict.outside.is_empty());
            if !verdict.missed.is_empty() {
                missed.push(format!("{}: {:?}", path.display(), verdict.missed));
            }
        }
        eprintln!(
            "key oracle over {}: {scripts} scripts, {ran} ran commands, {touching} touched keys outside KEYS, {} missed",
            PathBuf::from(&directory).display(),
            missed.len()
        );
        for line in &missed {
            eprintln!("  missed: {line}");
        }
        assert!(missed.is_empty(), "{missed:#?}");
    }
}
