//! A server the user already runs (`REDIS_SCRIPT_TEST_URL`): each test
//! holds one of the databases it is given, empties only that one, and
//! waits while all are taken. This binary has one test, which sets the
//! variables before any database is handed out.

use std::time::{Duration, Instant};

use redis_script_test::{DATABASES_VARIABLE, RedisServer, SERVER_URL_VARIABLE, State, TestDb};

#[tokio::test]
async fn tests_share_a_server_they_did_not_start_one_database_each() {
    let server = RedisServer::start();
    let url = server.url();
    let mut admin = server.client().get_connection().expect("connection");
    let () = redis::cmd("SET")
        .arg("kept")
        .arg("by the application")
        .query(&mut admin)
        .expect("SET in database 0");
    // SAFETY: the only test of this binary sets them before any thread
    // reads the environment.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(SERVER_URL_VARIABLE, url.trim_end_matches('/'));
        std::env::set_var(DATABASES_VARIABLE, "2-4");
    }
    let mut first = TestDb::new();
    let second = TestDb::new();
    let third = TestDb::new();
    let mut indices = vec![first.index(), second.index(), third.index()];
    indices.sort_unstable();
    assert_eq!(indices, [2, 3, 4]);
    assert!(first.url().ends_with(&format!("/{}", first.index())));
    // No process of this crate's behind it to stop or restart.
    assert!(first.server_mut().is_none());
    first.given(&State::new().string("k", "first")).await;
    second.given(&State::new().string("k", "second")).await;
    first.assert_state(&State::new().string("k", "first")).await;
    // All three are taken: the next test waits until one ends.
    let released = second.index();
    let waiting = std::thread::spawn(move || {
        let started = Instant::now();
        let db = TestDb::new();
        (db.index(), started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    drop(second);
    let (index, waited) = waiting.join().expect("the waiting test");
    assert_eq!(index, released);
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    // Database 0 was never touched.
    let kept: String = redis::cmd("GET")
        .arg("kept")
        .query(&mut admin)
        .expect("GET");
    assert_eq!(kept, "by the application");
    drop((first, third));
}
