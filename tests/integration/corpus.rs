//! The analysis corpus (`tests/lua/corpus/*.lua`, scripts the checker must
//! accept) is also accepted by a real redis-server.

use redis_script_testkit::RedisServer;

#[test]
fn every_corpus_script_loads_into_redis() {
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
