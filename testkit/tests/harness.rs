//! Tests of the test harness itself, against real `redis-server` (or, with
//! `REDIS_SCRIPT_TEST_SERVER=valkey`, `valkey-server`) processes.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use redis_script_test::{
    RedisCluster, RedisServer, ServerFlavor, ServerVersion, Stats, server_executable_version,
    server_flavor,
};

/// Whether a process with this pid exists (a zombie would still exist).
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

fn assert_refused(addr: &str) {
    match TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(1)) {
        Ok(_) => panic!("{addr} still accepts connections"),
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{addr}: {e}"),
    }
}

fn sync_query<T: redis::FromRedisValue>(server: &RedisServer, cmd: &redis::Cmd) -> T {
    let mut con = server.client().get_connection().unwrap();
    cmd.query(&mut con).unwrap()
}

#[tokio::test]
async fn standalone_server_answers_and_is_gone_after_drop() {
    let server = RedisServer::start();
    let port = server.port();
    assert_eq!(server.addr(), format!("127.0.0.1:{port}"));
    assert_eq!(server.url(), format!("redis://127.0.0.1:{port}/"));
    assert!(server.is_running());
    let pid = server.pid().unwrap();
    assert!(format!("{server:?}").contains(&server.addr()));

    let mut con = server.connection().await;
    let pong: String = redis::cmd("PING").query_async(&mut con).await.unwrap();
    assert_eq!(pong, "PONG");
    assert_eq!(server.info("server")["process_id"], pid.to_string());
    assert_eq!(server.info("persistence")["aof_enabled"], "0");

    // Statistics and the script cache.
    server.reset_stats();
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return 1")
        .query_async(&mut con)
        .await
        .unwrap();
    let _: i64 = redis::cmd("EVALSHA")
        .arg(&sha)
        .arg(0)
        .query_async(&mut con)
        .await
        .unwrap();
    let calls = server.command_calls();
    // Redis 6.x counts a command's subcommands under the command.
    let load = if server.flavor() == ServerFlavor::Redis && server.version().major < 7 {
        "script"
    } else {
        "script|load"
    };
    assert_eq!(calls.get(load), Some(&1), "{calls:?}");
    assert_eq!(server.calls("EVALSHA"), 1);
    assert_eq!(server.calls("never-called"), 0);
    server.script_flush();
    let exists: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(&sha)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(exists, [false]);
    server.reset_stats();
    assert_eq!(server.calls("evalsha"), 0);
    drop(con);

    let addr = server.addr();
    let dir = server.dir().to_owned();
    drop(server);
    assert_refused(&addr);
    assert!(!process_exists(pid), "redis-server pid {pid} survived drop");
    assert!(!dir.exists(), "{} survived drop", dir.display());
}

#[test]
fn the_server_is_of_the_selected_family_and_reports_its_version() {
    let server = RedisServer::start();
    let selected = server_flavor();
    assert_eq!(
        server.flavor(),
        selected,
        "REDIS_SCRIPT_TEST_SERVER selects {selected}, but {} is a {} server",
        server.binary().display(),
        server.flavor()
    );
    let info = server.info("server");
    let version = server.version().to_string();
    match server.flavor() {
        ServerFlavor::Redis => {
            assert_eq!(info["redis_version"], version);
            assert!(!info.contains_key("valkey_version"), "{info:?}");
        }
        ServerFlavor::Valkey => {
            assert_eq!(info["valkey_version"], version);
            assert_eq!(info["server_name"], "valkey");
            // Valkey keeps a compatibility `redis_version` of its own.
            assert_ne!(info["redis_version"], version);
        }
    }
    // The suite supports Redis from 6.0 and Valkey from 7.2, and the
    // testkit knows the executable's version before it starts a server.
    let oldest = match server.flavor() {
        ServerFlavor::Redis => ServerVersion::new(6, 0, 0),
        ServerFlavor::Valkey => ServerVersion::new(7, 2, 0),
    };
    assert!(
        server.version() >= oldest,
        "{} {} is older than {oldest}",
        server.flavor(),
        server.version()
    );
    assert_eq!(
        server_executable_version(),
        Some((server.flavor(), server.version())),
        "the executable's --version"
    );
    eprintln!(
        "running against {} {} ({})",
        server.flavor(),
        server.version(),
        server.binary().display()
    );
}

/// Sends `command` and returns the server's error reply.
fn error_reply(server: &RedisServer, command: &redis::Cmd) -> redis::RedisError {
    let mut con = server.client().get_connection().unwrap();
    match command.query::<redis::Value>(&mut con) {
        Ok(value) => panic!("expected an error reply, got {value:?}"),
        Err(error) => error,
    }
}

const UNKNOWN_SHA: &str = "0000000000000000000000000000000000000000";

#[test]
fn read_only_script_commands_can_be_removed() {
    // A default server has both: EVALSHA_RO answers NOSCRIPT for an unknown
    // script, EVAL_RO runs its script. Redis 6.x has neither (it quotes an
    // unknown command in backquotes), and starts as it is.
    let default = RedisServer::start();
    if default.flavor() == ServerFlavor::Redis && default.version().major < 7 {
        let error = error_reply(&default, redis::cmd("EVALSHA_RO").arg(UNKNOWN_SHA).arg(0));
        assert!(
            error.to_string().contains("unknown command `EVALSHA_RO`"),
            "{error}"
        );
        drop(default);
        let server = RedisServer::start_without_read_only_scripts();
        let error = error_reply(&server, redis::cmd("EVAL_RO").arg("return 1").arg(0));
        assert!(
            error.to_string().contains("unknown command `EVAL_RO`"),
            "{error}"
        );
        let two: i64 = sync_query(&server, redis::cmd("EVAL").arg("return 2").arg(0));
        assert_eq!(two, 2);
        eprintln!(
            "read_only_script_commands_can_be_removed: Redis {} has no EVALSHA_RO or EVAL_RO to remove",
            server.version()
        );
        return;
    }
    let error = error_reply(&default, redis::cmd("EVALSHA_RO").arg(UNKNOWN_SHA).arg(0));
    assert_eq!(error.code(), Some("NOSCRIPT"), "{error}");
    let one: i64 = sync_query(&default, redis::cmd("EVAL_RO").arg("return 1").arg(0));
    assert_eq!(one, 1);
    drop(default);

    let mut server = RedisServer::start_without_read_only_scripts();
    for round in ["after start", "after restart"] {
        let evalsha_ro = error_reply(&server, redis::cmd("EVALSHA_RO").arg(UNKNOWN_SHA).arg(0));
        assert_eq!(evalsha_ro.code(), Some("ERR"), "{round}: {evalsha_ro}");
        assert!(
            evalsha_ro
                .to_string()
                .contains("unknown command 'EVALSHA_RO'"),
            "{round}: {evalsha_ro}"
        );
        let eval_ro = error_reply(&server, redis::cmd("EVAL_RO").arg("return 1").arg(0));
        assert_eq!(eval_ro.code(), Some("ERR"), "{round}: {eval_ro}");
        assert!(
            eval_ro.to_string().contains("unknown command 'EVAL_RO'"),
            "{round}: {eval_ro}"
        );
        // Disabled, not renamed to a command called `""`.
        let quoted = error_reply(&server, redis::cmd("\"\"").arg(UNKNOWN_SHA).arg(0));
        assert!(
            quoted.to_string().contains("unknown command"),
            "{round}: {quoted}"
        );
        // The read-write commands are still there.
        let two: i64 = sync_query(&server, redis::cmd("EVAL").arg("return 2").arg(0));
        assert_eq!(two, 2, "{round}");
        let error = error_reply(&server, redis::cmd("EVALSHA").arg(UNKNOWN_SHA).arg(0));
        assert_eq!(error.code(), Some("NOSCRIPT"), "{round}: {error}");
        server.restart();
    }
}

#[test]
fn a_panicking_test_leaves_no_process_behind() {
    let pid = std::sync::Mutex::new(None);
    let result = std::panic::catch_unwind(|| {
        let server = RedisServer::start();
        *pid.lock().unwrap() = server.pid();
        panic!("the test fails while the server runs");
    });
    assert!(result.is_err());
    let pid = pid.into_inner().unwrap().expect("the server had started");
    assert!(
        !process_exists(pid),
        "redis-server pid {pid} survived the panic"
    );
}

#[test]
fn concurrent_servers_get_distinct_ports() {
    const COUNT: usize = 6;
    let servers: Vec<RedisServer> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..COUNT)
            .map(|i| {
                scope.spawn(move || {
                    let server = RedisServer::start();
                    let key = format!("key{i}");
                    let () = sync_query(&server, redis::cmd("SET").arg(&key).arg(i));
                    let value: usize = sync_query(&server, redis::cmd("GET").arg(&key));
                    assert_eq!(value, i);
                    server
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ports: BTreeSet<u16> = servers.iter().map(RedisServer::port).collect();
    assert_eq!(ports.len(), COUNT, "ports: {ports:?}");
    // Each server holds only its own key: they really are distinct servers.
    for server in &servers {
        let size: usize = sync_query(server, &redis::cmd("DBSIZE"));
        assert_eq!(size, 1, "{server:?}");
    }
}

#[test]
fn restart_keeps_the_port_and_loses_the_data() {
    let mut server = RedisServer::start();
    let port = server.port();
    let pid = server.pid().unwrap();
    let () = sync_query(&server, redis::cmd("SET").arg("k").arg("v"));
    let sha: String = sync_query(&server, redis::cmd("SCRIPT").arg("LOAD").arg("return 2"));

    server.restart();
    assert_eq!(server.port(), port);
    assert!(server.is_running());
    assert_ne!(server.pid(), Some(pid));
    assert!(!process_exists(pid), "the old process {pid} was not reaped");
    let value: Option<String> = sync_query(&server, redis::cmd("GET").arg("k"));
    assert_eq!(value, None);
    let exists: Vec<bool> = sync_query(&server, redis::cmd("SCRIPT").arg("EXISTS").arg(&sha));
    assert_eq!(exists, [false]);

    // stop is idempotent, and a stopped server can be restarted.
    server.stop();
    server.stop();
    assert!(!server.is_running());
    assert_eq!(server.pid(), None);
    assert_refused(&server.addr());
    server.restart();
    let pong: String = sync_query(&server, &redis::cmd("PING"));
    assert_eq!(pong, "PONG");
}

#[test]
fn bad_arguments_fail_at_once_with_the_server_output() {
    let began = Instant::now();
    let panic = std::panic::catch_unwind(|| RedisServer::start_with(&["--no-such-option", "1"]))
        .expect_err("a bad option must make start panic");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("no-such-option"), "{message}");
    // The server's own words: Redis 7.0 and Valkey reject the directive,
    // Redis 8 takes an unknown option for a module's and gives up on it.
    assert!(
        message.contains("Bad directive") || message.contains("Unresolved Configuration"),
        "{message}"
    );
    assert!(began.elapsed() < Duration::from_secs(5), "it retried");
}

#[tokio::test]
async fn cluster_starts_counts_commands_and_stops() {
    let began = Instant::now();
    let cluster = RedisCluster::start(3, 1);
    eprintln!("cluster up in {:.1?}", began.elapsed());
    assert_eq!(cluster.nodes().len(), 6);
    let primaries = cluster.primaries();
    let replicas = cluster.replicas();
    assert_eq!(primaries.len(), 3);
    assert_eq!(replicas.len(), 3);
    for node in cluster.nodes() {
        let text: String = sync_query(node, redis::cmd("CLUSTER").arg("INFO"));
        assert!(text.contains("cluster_state:ok"), "{node:?}: {text}");
        assert!(node.cluster_port().is_some());
    }
    assert_eq!(cluster.urls().len(), 6);

    // The server's own slot function.
    assert_eq!(cluster.keyslot(b"foo"), 12182);
    assert_eq!(
        cluster.keyslot(b"{user1000}.following"),
        cluster.keyslot(b"{user1000}.followers")
    );
    assert_ne!(cluster.keyslot(b"foo"), cluster.keyslot(b"bar"));

    // A SET through the async cluster client is counted once on a primary,
    // and once more on its replica when replication applies it.
    let mut con = cluster.connection().await;
    cluster.reset_stats();
    let () = redis::cmd("SET")
        .arg("foo")
        .arg("bar")
        .query_async(&mut con)
        .await
        .unwrap();
    let on_primaries: u64 = primaries.iter().map(|p| p.calls("set")).sum();
    assert_eq!(on_primaries, 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while cluster.calls("set") < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(cluster.calls("set"), 2, "{:?}", cluster.command_calls());

    // The slot's primary holds the key.
    let owner = cluster.node_for_slot(12182);
    assert!(primaries.iter().any(|p| p.port() == owner.port()));
    let value: String = sync_query(owner, redis::cmd("GET").arg("foo"));
    assert_eq!(value, "bar");
    assert_eq!(
        cluster.node_for_slot(0).port(),
        cluster.node_for_slot(1).port()
    );

    cluster.script_flush();
    drop(con);

    let pids: Vec<u32> = cluster.nodes().iter().map(|n| n.pid().unwrap()).collect();
    let addrs: Vec<String> = cluster.nodes().iter().map(RedisServer::addr).collect();
    drop(primaries);
    drop(replicas);
    drop(cluster);
    for pid in pids {
        assert!(!process_exists(pid), "redis-server pid {pid} survived drop");
    }
    for addr in addrs {
        assert_refused(&addr);
    }
}
