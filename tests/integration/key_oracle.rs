//! The key oracle: the server says which keys a script touches, and every
//! key it touches that the call did not pass in KEYS must be one the
//! analysis reports (`key_not_from_keys`, naming the command), unless the
//! script opts out with `#!lua flags=allow-cross-slot-keys`.
//!
//! Each script runs with every `redis.call`/`redis.pcall` recorded (a local
//! `redis` that records, then calls the real one), on data seeded six ways
//! (nothing, and each key a string, set, list, sorted set or hash holding
//! key names), and `COMMAND GETKEYS` names the keys of each recorded call.
//! The scripts are the analysis corpus (`tests/lua/corpus`, which the
//! checker accepts: they must touch no key outside KEYS), the checker's
//! fixtures of keys read from data (each reported), and the corpus's
//! mutants: each `KEYS[n]` of a script replaced, one at a time, by a read of
//! a key name from data (a reply, an element of one, a decoded payload, an
//! argument; directly, through a table, a helper function or a loop). A
//! mutant whose run touches a key outside KEYS that the original did not
//! must have a new report naming the command. `REDIS_SCRIPT_KEY_ORACLE`
//! names another directory of `.lua` files to measure the same way, with
//! their mutants, such as the fetched corpus of public projects; the test
//! prints both tables.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use redis_script_analysis::{Code, Signature, analyze};
use redis_script_test::RedisServer;

use crate::releases::before_redis_7;

/// How many keys and arguments each call passes: more than any script of
/// the corpora reads, so that no read of KEYS or ARGV is nil.
const KEY_COUNT: usize = 20;
const ARG_COUNT: usize = 30;
/// The key names the seeded data holds: none of them is in KEYS.
const DATA_KEYS: [&str; 2] = ["{o}from-data-1", "{o}from-data-2"];

/// How the keys are seeded before a run.
const SEEDS: [&str; 6] = ["nothing", "string", "set", "list", "sorted set", "hash"];

/// A mutation that reads a key name from data where the script took it
/// from KEYS: `{key}` in `template` is the replaced `KEYS[n]` and `{n}` its
/// index; `seed` is the data under which the read yields a key name.
struct DataRead {
    template: &'static str,
    seed: &'static str,
}

const DATA_READS: [DataRead; 10] = [
    DataRead {
        template: "redis.call('GET', {key})",
        seed: "string",
    },
    DataRead {
        template: "redis.call('SRANDMEMBER', {key})",
        seed: "set",
    },
    DataRead {
        template: "redis.call('LINDEX', {key}, 0)",
        seed: "list",
    },
    DataRead {
        template: "redis.call('ZRANGE', {key}, 0, 0)[1]",
        seed: "sorted set",
    },
    DataRead {
        template: "redis.call('HGET', {key}, 'field')",
        seed: "hash",
    },
    DataRead {
        template: "({redis.call('GET', {key})})[1]",
        seed: "string",
    },
    DataRead {
        template: "(function() local name = redis.call('GET', {key}) return name end)()",
        seed: "string",
    },
    DataRead {
        template: "(function() for _, name in ipairs(redis.call('SMEMBERS', {key})) do return name end end)()",
        seed: "set",
    },
    DataRead {
        template: "cjson.decode(cjson.encode({redis.call('LINDEX', {key}, 0)}))[1]",
        seed: "list",
    },
    DataRead {
        template: "ARGV[{n}]",
        seed: "nothing",
    },
];

/// The lines the instrumentation puts before a script's first line.
const PRELUDE_LINES: usize = 19;

/// `source` with every `redis.call`/`redis.pcall` recorded, each with the
/// line of the script that made it: it replies with the recorded calls
/// instead of its own reply.
fn instrumented(source: &str) -> String {
    let (shebang, body) = match source.strip_prefix("#!") {
        Some(_) => source.split_once('\n').unwrap_or((source, "")),
        None => ("", source),
    };
    // The shebang keeps its line, so the body's lines move by the prelude.
    // Redis 6.x cannot compile it: there it stays as a comment.
    let shebang = if shebang.is_empty() {
        String::new()
    } else if before_redis_7() {
        format!("--{shebang}\n")
    } else {
        format!("{shebang}\n")
    };
    // `error` at level 5 names the line of the wrapper's caller: the
    // anonymous function, `pcall`, `__record`, the wrapper, the script. A
    // call in a tail position (`return redis.call(…)`) has no such frame
    // left, and records no line.
    let instrumented = format!(
        "{shebang}local __calls = {{}}
local __real = redis
local function __record(...)
  local _, where = pcall(function() error('', 5) end)
  local call = {{tostring(where)}}
  for i = 1, select('#', ...) do
    local word = select(i, ...)
    -- The server refuses such a call before it touches a key.
    if type(word) ~= 'string' and type(word) ~= 'number' then return end
    call[i + 1] = tostring(word)
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
    );
    assert_eq!(
        instrumented[shebang.len()..]
            .lines()
            .position(|line| line == "pcall(function(...)"),
        Some(PRELUDE_LINES - 1)
    );
    instrumented
}

/// A call a script made: the line of the script it is on, when known, and
/// its words.
struct Recorded {
    line: Option<usize>,
    words: Vec<String>,
}

impl Recorded {
    /// From `{where, word…}` as the instrumentation records it, `where`
    /// being `user_script:N: ` for line N of the instrumented source.
    fn parse(mut recorded: Vec<String>, shebang: bool) -> Self {
        let location = if recorded.is_empty() {
            String::new()
        } else {
            recorded.remove(0)
        };
        let line = location
            .split(':')
            .nth(1)
            .and_then(|line| line.trim().parse::<usize>().ok())
            .and_then(|line| line.checked_sub(PRELUDE_LINES))
            .filter(|line| *line > usize::from(shebang));
        Recorded {
            line,
            words: recorded,
        }
    }
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
            "hash" => redis::cmd("HSET"),
            _ => return,
        };
        command.arg(&key);
        match how {
            "string" => {
                command.arg(DATA_KEYS[0]);
            }
            "hash" => {
                command.arg("field").arg(DATA_KEYS[0]);
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

/// The calls `source` made on data seeded `how`.
fn calls(connection: &mut redis::Connection, source: &str, how: &str) -> Vec<Recorded> {
    seed(connection, how);
    let (keys, args) = keys_and_args();
    let reply: redis::RedisResult<Vec<Vec<String>>> = redis::cmd("EVAL")
        .arg(instrumented(source))
        .arg(keys.len())
        .arg(&keys)
        .arg(&args)
        .query(connection);
    let shebang = source.starts_with("#!");
    reply
        .unwrap_or_default()
        .into_iter()
        .map(|recorded| Recorded::parse(recorded, shebang))
        .collect()
}

/// The keys of a call, as the server reads them (none for a command
/// without keys or with arguments it refuses).
fn keys_of(connection: &mut redis::Connection, call: &[String]) -> Vec<String> {
    let mut command = redis::cmd("COMMAND");
    command.arg("GETKEYS").arg(call);
    command.query(connection).unwrap_or_default()
}

/// A call that touched keys outside KEYS: its command, the line of the
/// script it is on (when known) and those keys.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Touch {
    command: String,
    line: Option<usize>,
    keys: Vec<String>,
}

/// The calls of a run of `source` on data seeded `how` that touched keys
/// outside KEYS, and whether it made any call.
fn touched_outside(
    connection: &mut redis::Connection,
    source: &str,
    how: &str,
) -> (BTreeSet<Touch>, bool) {
    let passed = keys_and_args().0;
    let mut touches = BTreeSet::new();
    let mut ran_calls = false;
    for call in calls(connection, source, how) {
        ran_calls = true;
        // A key in KEYS, or built by appending to one (whose hash tag the
        // call checks), is routed with the call.
        let keys: Vec<String> = keys_of(connection, &call.words)
            .into_iter()
            .filter(|key| !passed.iter().any(|passed| key.starts_with(passed.as_str())))
            .collect();
        if !keys.is_empty() {
            touches.insert(Touch {
                command: call
                    .words
                    .first()
                    .map(|name| name.to_ascii_uppercase())
                    .unwrap_or_default(),
                line: call.line,
                keys,
            });
        }
    }
    (touches, ran_calls)
}

/// The analysis's reports of keys not from KEYS: line and message.
fn key_reports(source: &str) -> BTreeSet<(usize, String)> {
    let signature = Signature {
        variadic_keys: true,
        variadic_args: true,
        allow_unused: true,
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.code == Code::KeyNotFromKeys)
        .map(|diagnostic| (diagnostic.line, diagnostic.message))
        .collect()
}

/// Whether one of `reports` is about `touch`: it names its command (alone,
/// or with its subcommand: `OBJECT ENCODING`) on the call's line or one of
/// the next (the server names the line a call starts on, the report the
/// line of its key), or anywhere when the line is unknown. A key a helper
/// function takes is reported where the helper is called, naming the
/// line of the call inside it: "a key of `SET` (line 70)".
fn covers(reports: &BTreeSet<(usize, String)>, touch: &Touch) -> bool {
    let alone = format!("`{}`", touch.command);
    let with_subcommand = format!("`{} ", touch.command);
    let near = |line: usize| {
        touch
            .line
            .is_none_or(|start| (start..=start + 10).contains(&line))
    };
    reports.iter().any(|(line, message)| {
        let named_line = message
            .split_once(&alone)
            .and_then(|(_, after)| after.strip_prefix(" (line "))
            .and_then(|after| after.split_once(')'))
            .and_then(|(line, _)| line.parse().ok());
        (message.contains(&alone) || message.contains(&with_subcommand))
            && (near(*line) || named_line.is_some_and(near))
    })
}

fn opts_out(source: &str) -> bool {
    source
        .lines()
        .next()
        .is_some_and(|line| line.starts_with("#!") && line.contains("allow-cross-slot-keys"))
}

/// One script's verdict: the commands that touched keys outside KEYS, the
/// calls among them the analysis did not report, and its mutants'.
#[derive(Default)]
struct Verdict {
    outside: BTreeSet<String>,
    missed: BTreeSet<String>,
    ran_calls: bool,
    mutants: Mutants,
}

/// What the mutants of a script did.
#[derive(Default)]
struct Mutants {
    made: usize,
    /// Touched a key read from data (the mutation's) outside KEYS.
    touching: usize,
    missed: Vec<String>,
}

fn judge(connection: &mut redis::Connection, path: &Path) -> Verdict {
    let source = std::fs::read_to_string(path).expect("read the script");
    let opted_out = opts_out(&source);
    let reported = key_reports(&source);
    let mut verdict = Verdict::default();
    let mut original = BTreeMap::new();
    for how in SEEDS {
        let (touches, ran_calls) = touched_outside(connection, &source, how);
        verdict.ran_calls |= ran_calls;
        for touch in &touches {
            verdict.outside.insert(touch.command.clone());
            if !opted_out && !covers(&reported, touch) {
                verdict.missed.insert(format!(
                    "{} at line {:?} (data seeded as {how})",
                    touch.command, touch.line
                ));
            }
        }
        original.insert(how, touches);
    }
    if opted_out {
        return verdict;
    }
    for (line, mutant, read, index) in mutants(&source) {
        verdict.mutants.made += 1;
        let (touches, _) = touched_outside(connection, &mutant, read.seed);
        let reports = key_reports(&mutant);
        let new_reports: BTreeSet<(usize, String)> =
            reports.difference(&reported).cloned().collect();
        let mut touching = false;
        for touch in touches.difference(&original[read.seed]) {
            // The key the mutation reads from data (a seeded key name, or
            // the argument it reads) needs a report of its own; a key the
            // script builds, reached on another path, one of any.
            let injected = touch.keys.iter().any(|key| {
                DATA_KEYS.iter().any(|data| key.starts_with(data))
                    || (read.template.starts_with("ARGV") && *key == index)
            });
            touching |= injected;
            let covered = if injected {
                covers(&new_reports, touch)
            } else {
                covers(&reports, touch)
            };
            if !covered {
                verdict.mutants.missed.push(format!(
                    "{}:{line}: `{}` at line {:?} touched {:?} ({} in place of KEYS[{index}]) without a report",
                    path.display(),
                    touch.command,
                    touch.line,
                    touch.keys,
                    read.template,
                ));
            }
        }
        verdict.mutants.touching += usize::from(touching);
    }
    verdict
}

/// Every mutant of `source`: each `KEYS[n]` of its code (not of a comment)
/// replaced by each read of a key name from data, with the line it is on
/// and the index `n`.
fn mutants(source: &str) -> Vec<(usize, String, &'static DataRead, String)> {
    let mut sites = Vec::new();
    let mut offset = 0;
    for (index, line) in source.split_inclusive('\n').enumerate() {
        let code = if index == 0 && line.starts_with("#!") {
            ""
        } else {
            line.split("--").next().unwrap_or_default()
        };
        let mut from = 0;
        while let Some(found) = code[from..].find("KEYS[") {
            let start = from + found;
            let digits: String = code[start + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let end = start + 5 + digits.len();
            if !digits.is_empty() && code[end..].starts_with(']') {
                sites.push((index + 1, offset + start, offset + end + 1, digits));
            }
            from = end;
        }
        offset += line.len();
    }
    let mut made = Vec::new();
    for (line, start, end, index) in sites {
        for read in &DATA_READS {
            let replacement = read
                .template
                .replace("{key}", &source[start..end])
                .replace("{n}", &index);
            let mutant = format!("{}{replacement}{}", &source[..start], &source[end..]);
            made.push((line, mutant, read, index.clone()));
        }
    }
    made
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

/// The table of a directory: scripts, those that ran commands, those that
/// touched keys outside KEYS, and the mutants; every miss.
fn measure(connection: &mut redis::Connection, files: &[PathBuf]) -> (String, Vec<String>) {
    let (mut ran, mut touching, mut mutants, mut mutants_touching) = (0, 0, 0, 0);
    let mut missed = Vec::new();
    for path in files {
        let verdict = judge(connection, path);
        ran += usize::from(verdict.ran_calls);
        touching += usize::from(!verdict.outside.is_empty());
        if !verdict.missed.is_empty() {
            missed.push(format!("{}: missed {:?}", path.display(), verdict.missed));
        }
        mutants += verdict.mutants.made;
        mutants_touching += verdict.mutants.touching;
        missed.extend(verdict.mutants.missed);
    }
    let table = format!(
        "| | scripts | ran commands | touched keys outside KEYS | reported | missed |
| --- | ---: | ---: | ---: | ---: | ---: |
| scripts | {} | {ran} | {touching} | {} | {} |
| mutants | {mutants} | | {mutants_touching} | {} | {} |",
        files.len(),
        touching
            - missed
                .iter()
                .filter(|line| line.contains(": missed "))
                .count(),
        missed
            .iter()
            .filter(|line| line.contains(": missed "))
            .count(),
        mutants_touching
            - missed
                .iter()
                .filter(|line| !line.contains(": missed "))
                .count(),
        missed
            .iter()
            .filter(|line| !line.contains(": missed "))
            .count(),
    );
    (table, missed)
}

#[test]
fn every_key_a_script_touches_outside_keys_is_reported() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let accepted = lua_files(&root.join("lua/corpus"));
    let from_data = lua_files(&root.join("../cli/tests/fixtures/keys_from_data"));
    assert!(accepted.len() >= 30 && from_data.len() >= 8);
    let mut mutants = Mutants::default();
    for path in &accepted {
        let verdict = judge(&mut connection, path);
        assert!(
            verdict.outside.is_empty(),
            "{}: touched keys outside KEYS with {:?}",
            path.display(),
            verdict.outside
        );
        mutants.made += verdict.mutants.made;
        mutants.touching += verdict.mutants.touching;
        mutants.missed.extend(verdict.mutants.missed);
    }
    eprintln!(
        "key oracle over tests/lua/corpus: {} scripts, {} mutants, {} touched a key read from data, {} missed",
        accepted.len(),
        mutants.made,
        mutants.touching,
        mutants.missed.len()
    );
    assert!(mutants.missed.is_empty(), "{:#?}", mutants.missed);
    // Most mutants reach their read with the data it needs (not those of a
    // branch the seeded data does not take, or of a key only counted). Redis
    // 6.0 lacks options some scripts use before their reads (`SET … GET`,
    // `ZADD … GT`), so fewer get there: 384 of 770, where later releases
    // reach half.
    let reaching_share = if crate::releases::before_redis_6_2() {
        0.45
    } else {
        0.5
    };
    assert!(
        mutants.made >= 500 && mutants.touching as f64 >= reaching_share * mutants.made as f64,
        "only {} of {} mutants touched a key read from data",
        mutants.touching,
        mutants.made
    );
    let mut reached = 0;
    for path in &from_data {
        let verdict = judge(&mut connection, path);
        assert!(
            verdict.missed.is_empty() && verdict.mutants.missed.is_empty(),
            "{}: missed {:?} {:?}",
            path.display(),
            verdict.missed,
            verdict.mutants.missed
        );
        reached += usize::from(!verdict.outside.is_empty());
    }
    // The seeded data reaches the keys read from data in most fixtures
    // (not the JSON payload or the SCAN pattern some need).
    assert!(
        reached >= 5,
        "only {reached} fixtures touched a key read from data"
    );
    if let Some(directory) = std::env::var_os("REDIS_SCRIPT_KEY_ORACLE") {
        let (table, missed) = measure(&mut connection, &lua_files(Path::new(&directory)));
        eprintln!(
            "key oracle over {}:\n{table}",
            PathBuf::from(&directory).display()
        );
        for line in &missed {
            eprintln!("  {line}");
        }
        assert!(missed.is_empty(), "{missed:#?}");
    }
}
