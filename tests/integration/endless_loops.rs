//! Every kind of loop the `endless_loop` finding names really blocks the
//! server: past `busy-reply-threshold` another client gets `BUSY`, until
//! `SCRIPT KILL` ends the script. So the finding's wording is proven, and
//! each example is one the analysis reports.

use std::thread;
use std::time::{Duration, Instant};

use redis_script_analysis::{Signature, analyze};
use redis_script_test::RedisServer;

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
        .any(|diagnostic| diagnostic.finding == Some("endless_loop"))
}

#[test]
fn every_endless_loop_the_checker_reports_makes_the_server_answer_busy() {
    let server = RedisServer::start_with(&["--busy-reply-threshold", "50"]);
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
        // Bounded: the server answers BUSY within a second or the test fails.
        let deadline = Instant::now() + Duration::from_secs(5);
        let busy = loop {
            match redis::cmd("PING").query::<String>(&mut other) {
                Err(error) if error.code() == Some("BUSY") => break true,
                _ if Instant::now() > deadline => break false,
                _ => thread::sleep(Duration::from_millis(20)),
            }
        };
        assert!(busy, "the server never answered BUSY to: {source}");
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
