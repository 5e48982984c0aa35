//! The analysis corpus (`tests/lua/corpus/*.lua`, scripts the checker must
//! accept) is also accepted by a real redis-server, as written and as sent
//! (wrapped to mark returned errors, and for `exactly_once`).

use redis_script_analysis::{Signature, analyze, exactly_once, sent};
use redis_script_test::RedisServer;

use crate::releases::before_redis_7;

fn corpus() -> Vec<std::path::PathBuf> {
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/lua/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(directory)
        .expect("corpus directory")
        .map(|entry| entry.expect("corpus entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "lua"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 30,
        "the corpus holds at least 30 scripts, found {}",
        paths.len()
    );
    paths
}

/// `SCRIPT LOAD` compiles a script without running it: the server's
/// verdict on `source`, or a panic naming `what`.
///
/// Redis 6.x cannot compile a `#!lua` first line: it refuses the script
/// with the compile error at that line's `#`, which the runtime reads as
/// `Error::Unsupported` (script flags).
fn loads(connection: &mut redis::Connection, source: &str, what: &str) {
    let loaded: redis::RedisResult<String> = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(source)
        .query(connection);
    if before_redis_7() && source.starts_with("#!") {
        let refused = loaded.expect_err(what);
        let detail = refused.detail().unwrap_or_default();
        assert!(
            detail.starts_with("Error compiling script")
                && detail.contains("user_script:1:")
                && detail.ends_with("near '#'"),
            "{what}: {refused}"
        );
        return;
    }
    let sha = loaded.unwrap_or_else(|error| panic!("{what} was refused: {error}\n{source}"));
    assert_eq!(sha.len(), 40, "{what}");
}

#[test]
fn every_corpus_script_loads_into_redis_as_written_and_as_sent() {
    let paths = corpus();
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    for path in &paths {
        let source = std::fs::read_to_string(path).expect("read script");
        let shown = path.display().to_string();
        loads(&mut connection, &source, &shown);
        let analysis = analyze(&source, &Signature::default());
        loads(
            &mut connection,
            &sent::script(&source, &analysis, false),
            &format!("{shown} as sent"),
        );
    }
}

/// Every corpus script that writes, as `exactly_once` sends it, compiles
/// on the server.
#[test]
fn every_writing_corpus_script_loads_wrapped_for_exactly_once() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let mut wrapped_count = 0;
    for path in corpus() {
        let source = std::fs::read_to_string(&path).expect("read script");
        let analysis = analyze(&source, &Signature::default());
        if exactly_once::refusal(&analysis).is_some() {
            continue;
        }
        let wrapped = sent::script(&source, &analysis, true);
        loads(
            &mut connection,
            &wrapped,
            &format!("{} wrapped for exactly_once", path.display()),
        );
        wrapped_count += 1;
    }
    eprintln!("corpus: {wrapped_count} writing scripts load wrapped");
    assert!(
        wrapped_count >= 15,
        "only {wrapped_count} corpus scripts write"
    );
}
