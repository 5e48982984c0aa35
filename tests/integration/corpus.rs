//! The analysis corpus (`tests/lua/corpus/*.lua`, scripts the checker must
//! accept) is also accepted by a real redis-server, as written and wrapped
//! for `exactly_once`.

use redis_script_analysis::{Signature, analyze, exactly_once};
use redis_script_testkit::RedisServer;

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

#[test]
fn every_corpus_script_loads_into_redis() {
    let paths = corpus();
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    for path in &paths {
        let source = std::fs::read_to_string(path).expect("read script");
        let loaded: redis::RedisResult<String> = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(&source)
            .query(&mut connection);
        let sha = loaded.unwrap_or_else(|error| panic!("{} was refused: {error}", path.display()));
        assert_eq!(sha.len(), 40, "{}", path.display());
    }
}

/// Every corpus script that writes, wrapped as `exactly_once` would send it,
/// compiles on the server (`SCRIPT LOAD` compiles without running).
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
        let wrapped = exactly_once::wrap(&source, &analysis);
        let loaded: redis::RedisResult<String> = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(&wrapped)
            .query(&mut connection);
        if let Err(error) = loaded {
            panic!("{} wrapped was refused: {error}\n{wrapped}", path.display());
        }
        wrapped_count += 1;
    }
    eprintln!("corpus: {wrapped_count} writing scripts load wrapped");
    assert!(
        wrapped_count >= 15,
        "only {wrapped_count} corpus scripts write"
    );
}
