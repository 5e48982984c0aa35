//! Every kind of loop the `endless_loop` finding names really blocks the
//! server: past `busy-reply-threshold` another client gets `BUSY`, until
//! `SCRIPT KILL` ends the script. So the finding's wording is proven, and
//! each example is one the analysis reports. The servers start with
//! `--lua-time-limit`, the name Redis 6.x knows the setting by and later
//! releases keep beside `busy-reply-threshold`.

use std::thread;
use std::time::{Duration, Instant};

use redis_script_analysis::{Signature, analyze};
use redis_script_test::RedisServer;

use crate::releases::lacks_functions_blocking;

/// Endless loops that only read, so `SCRIPT KILL` can end them.
const ENDLESS: &[&str] = &[
    "while true do redis.call('GET', KEYS[1]) end",
    "while 1 do redis.call('GET', KEYS[1]) end",
    "repeat redis.call('EXISTS', KEYS[1]) until false",
    "for i = 1, math.huge do redis.call('GET', KEYS[1]) end",
    "for i = 10, 1, 0 do redis.call('GET', KEYS[1]) end",
    "for i = 1, -math.huge, -1 do redis.call('GET', KEYS[1]) end",
    "local n = redis.call('LLEN', KEYS[1])\nwhile n do redis.call('LINDEX', KEYS[1], 0) end",
    "while true do\n  local ok = pcall(redis.call, 'GET', KEYS[1])\n  local f = function() return ok end\nend",
];

fn reported(source: &str) -> bool {
    let signature = Signature {
        keys: 1,
        allow_unused: true,
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .iter()
        .any(|diagnostic| diagnostic.code == redis_script_analysis::Code::EndlessLoop)
}

/// Whether the server answers `BUSY` to `other` within 5 s (a script runs
/// past `busy-reply-threshold`).
fn answers_busy(other: &mut redis::Connection) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match redis::cmd("PING").query::<String>(other) {
            Err(error) if error.code() == Some("BUSY") => return true,
            _ if Instant::now() > deadline => return false,
            _ => thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[test]
fn every_endless_loop_the_checker_reports_makes_the_server_answer_busy() {
    let server = RedisServer::start_with(&["--lua-time-limit", "50"]);
    let client = server.client();
    let mut other = client.get_connection().expect("connection");
    for source in ENDLESS {
        assert!(reported(source), "not reported: {source}");
        let script = source.to_string();
        let looping_client = client.clone();
        let looping = thread::spawn(move || {
            let mut connection = looping_client.get_connection().expect("connection");
            redis::cmd("EVAL")
                .arg(script)
                .arg(1)
                .arg("k")
                .query::<redis::Value>(&mut connection)
        });
        assert!(
            answers_busy(&mut other),
            "the server never answered BUSY to: {source}"
        );
        let () = redis::cmd("SCRIPT")
            .arg("KILL")
            .query(&mut other)
            .expect("SCRIPT KILL");
        let ended = looping.join().expect("the looping thread");
        let error = ended.expect_err("a killed script ends with an error");
        assert!(
            error.to_string().to_lowercase().contains("killed"),
            "{source}: {error}"
        );
    }
}

/// An endless loop sent as the runtime sends it (run under `xpcall`) still
/// ends with `SCRIPT KILL`: the server raises again on every line run, the
/// wrapper's included. The killed call says it ran; a writing call sent
/// meanwhile is refused with `BUSY` and says it did not run, and with
/// refusal retries it runs once after the kill. The same holds for a
/// library function's twin and `FUNCTION KILL`.
#[test]
fn a_wrapped_script_is_killed_and_says_it_ran() {
    use redis_script::__private_v3::{Keys, start_call};
    use redis_script::{Call, Error, RetryRefusals, Script};

    use crate::built;

    let server = RedisServer::start_with(&["--lua-time-limit", "50"]);
    let client = server.client();
    let mut other = client.get_connection().expect("connection");
    let signature = Signature {
        keys: 1,
        allow_unused: true,
        ..Signature::default()
    };
    let script = |source: &str| built::script("endless", source, &signature, false).0;
    let function = |body: &str| {
        let source = format!(
            "#!lua name=endless_lib\nredis.register_function('endless', function(KEYS, ARGV)\n{body}\nend)\n"
        );
        built::function("endless_lib", "endless", &source, &signature)
    };
    let call = |script: &'static Script| -> Call<redis::Value, Error> {
        let mut keys = Keys::new();
        keys.push(&"k");
        start_call(script, keys)
    };
    let counter = script("return redis.call('INCR', KEYS[1])");
    let loops: [(&str, &'static Script, &str); 3] = [
        ("script", script(ENDLESS[0]), "SCRIPT"),
        ("script catching errors", script(ENDLESS[7]), "SCRIPT"),
        ("function", function(ENDLESS[0]), "FUNCTION"),
    ];
    // Redis 6.x: the function's row proves the clear error instead.
    let without_functions = lacks_functions_blocking(
        &mut other,
        "endless_loops::a_wrapped_script_is_killed_and_says_it_ran (its function row)",
    );
    for (what, endless, kill) in loops {
        if without_functions && kill == "FUNCTION" {
            continue;
        }
        let looping_client = client.clone();
        let looping = thread::spawn(move || {
            let mut connection = looping_client.get_connection().expect("connection");
            call(endless).invoke_blocking(&mut connection)
        });
        assert!(
            answers_busy(&mut other),
            "{what}: the server never answered BUSY"
        );
        // A writing call meanwhile: refused, it did not run.
        let refused = call(counter).invoke_blocking(&mut other);
        match &refused {
            Err(error @ Error::Refused { code, .. }) if code == "BUSY" => {
                assert!(!error.may_have_executed())
            }
            other => panic!("{what}: {other:?}"),
        }
        // With refusal retries, it waits out the kill and runs once.
        let retrying_client = client.clone();
        let retrying = thread::spawn(move || {
            let mut connection = retrying_client.get_connection().expect("connection");
            call(counter)
                .retry_refusals(
                    RetryRefusals::new(50)
                        .with_delays(Duration::from_millis(20), Duration::from_millis(50)),
                )
                .invoke_blocking(&mut connection)
        });
        thread::sleep(Duration::from_millis(100));
        let () = redis::cmd(kill)
            .arg("KILL")
            .query(&mut other)
            .unwrap_or_else(|error| panic!("{what}: {kill} KILL: {error}"));
        let ended = looping.join().expect("the looping thread");
        match &ended {
            Err(error @ Error::Script { raised: true, .. }) => {
                assert!(error.may_have_executed(), "{what}: {error:?}");
                assert!(
                    error
                        .message()
                        .is_some_and(|message| message.to_lowercase().contains("killed")),
                    "{what}: {error:?}"
                );
            }
            other => panic!("{what}: a killed call ends as the script's error: {other:?}"),
        }
        let counted = retrying.join().expect("the retrying thread");
        let count: i64 = redis::cmd("GET").arg("k").query(&mut other).expect("GET");
        assert!(
            matches!(counted, Ok(redis::Value::Int(value)) if value == count),
            "{what}: ran once after the kill: {counted:?}, k = {count}"
        );
    }
}
