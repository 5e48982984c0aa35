//! Servers never outlive the test process: not when a test panics, and not
//! when the whole test binary is killed with `SIGKILL`, which runs no
//! destructor (a harness's timeout, an out-of-memory kill).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redis_script_test::{RedisCluster, RedisServer, TestDb};

/// Set in the child run of this test binary, which starts servers and
/// waits to be killed.
const CHILD: &str = "REDIS_SCRIPT_TEST_ORPHAN_CHILD";

/// Set in the child run that ends normally, as a test process of
/// `cargo nextest` does: the shared server is a static, never dropped.
const EXITING_CHILD: &str = "REDIS_SCRIPT_TEST_EXITING_CHILD";

fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (bounded) until `done` holds.
fn wait_until(what: &str, deadline: Duration, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < deadline, "{what} after {deadline:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn servers_do_not_outlive_a_killed_test_process() {
    if std::env::var_os(CHILD).is_some() {
        // The child: a server of its own, the shared one, and a cluster.
        let own = RedisServer::start();
        let shared = TestDb::new();
        let cluster = RedisCluster::start(3, 0);
        let mut pids: Vec<String> = vec![own.pid(), shared.server().pid()]
            .into_iter()
            .chain(cluster.nodes().iter().map(RedisServer::pid))
            .map(|pid| pid.map_or_else(String::new, |pid| pid.to_string()))
            .collect();
        pids.push(own.dir().display().to_string());
        println!("servers: {}", pids.join(" "));
        let _ = std::io::stdout().flush();
        // Killed long before this ends.
        std::thread::sleep(Duration::from_secs(60));
        return;
    }
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "servers_do_not_outlive_a_killed_test_process",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run the test binary again");
    let stdout = child.stdout.take().expect("piped stdout");
    let line = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find(|line| line.starts_with("servers: "))
        .expect("the child names its servers");
    let mut fields: Vec<&str> = line["servers: ".len()..].split(' ').collect();
    let own_dir = fields.pop().expect("the directory").to_owned();
    let pids: Vec<u32> = fields
        .iter()
        .map(|pid| pid.parse().expect("a pid"))
        .collect();
    assert_eq!(pids.len(), 5, "{line}");
    assert!(pids.iter().all(|&pid| process_exists(pid)));

    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");

    wait_until(
        "the servers of a killed test are still running",
        Duration::from_secs(10),
        || pids.iter().all(|&pid| !process_exists(pid)),
    );
    wait_until(
        "the server's directory is still there",
        Duration::from_secs(10),
        || !Path::new(&own_dir).exists(),
    );
}

#[test]
fn the_shared_server_does_not_outlive_a_test_process_that_exits() {
    if std::env::var_os(EXITING_CHILD).is_some() {
        let db = TestDb::new();
        println!("server: {}", db.server().pid().map_or(0, |pid| pid));
        let _ = std::io::stdout().flush();
        return;
    }
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "the_shared_server_does_not_outlive_a_test_process_that_exits",
            "--exact",
            "--nocapture",
        ])
        .env(EXITING_CHILD, "1")
        .stderr(Stdio::null())
        .output()
        .expect("run the test binary again");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let pid: u32 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("server: "))
        .and_then(|pid| pid.parse().ok())
        .expect("the child names its server");
    assert!(pid > 0);
    wait_until(
        "the shared server of a finished test process is still running",
        Duration::from_secs(10),
        || !process_exists(pid),
    );
}

#[test]
fn a_panicking_test_stops_its_server() {
    let pid = std::thread::spawn(|| {
        let server = RedisServer::start();
        let pid = server.pid().expect("running");
        std::panic::panic_any(pid);
    })
    .join()
    .expect_err("the thread panicked")
    .downcast::<u32>()
    .map(|pid| *pid)
    .expect("the pid");
    assert!(!process_exists(pid), "the server outlived the panic");
}
