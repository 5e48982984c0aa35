//! Command-line flags.

/// What to run, and how much of it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Measured calls per variant and scenario.
    pub calls: usize,
    /// Unmeasured calls per variant and scenario before measuring.
    pub warmup: usize,
    /// Tasks sharing one connection in the concurrent scenario (and
    /// `redis-benchmark -c` for its concurrent row).
    pub tasks: usize,
    /// The measured calls are split into this many rounds, the variants
    /// taking turns, so that drift (CPU frequency, server state) is shared.
    pub rounds: usize,
    /// Iterations of the client-side encoding measurement.
    pub encode_iterations: usize,
    /// With `REDIS_URL`: allowed to run `SCRIPT FLUSH` and `CONFIG RESETSTAT`
    /// there, for the cold-call counts.
    pub flush_scripts: bool,
    /// Run the client on tokio's current-thread runtime instead of the
    /// multi-thread one.
    pub current_thread: bool,
    /// Only the table of reads on a cluster's replicas.
    pub only_replicas: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            calls: 20_000,
            warmup: 2_000,
            tasks: 32,
            rounds: 10,
            encode_iterations: 1_000_000,
            flush_scripts: false,
            current_thread: false,
            only_replicas: false,
        }
    }
}

pub const USAGE: &str = "\
bench: the generated #[redis_script] call side by side with a hand-written
EVALSHA, redis-rs Script::invoke_async and redis-benchmark.

Usage: cargo run --release -p redis-script-bench -- [FLAGS]

Flags:
  --calls N              measured calls per variant and scenario (default 20000)
  --warmup N             unmeasured warm-up calls before each (default 2000)
  --tasks N              tasks sharing one connection in the concurrent
                         scenario; redis-benchmark -c N (default 32)
  --rounds N             measured calls are split into N rounds, variants
                         taking turns (default 10)
  --encode-iterations N  iterations of the client-side encoding measurement
                         (default 1000000)
  --flush-scripts        with REDIS_URL: allow SCRIPT FLUSH and CONFIG RESETSTAT
                         on that server for the cold-call counts; with
                         REDIS_CLUSTER_URL: allow CONFIG RESETSTAT on every
                         node for the replica counts (a throwaway server or
                         cluster always is)
  --current-thread       run the client on tokio's current-thread runtime
                         (default: multi-thread, one worker per core)
  --only-replicas        only the table of reads on a cluster's replicas
                         (with --calls, --warmup, --tasks, --rounds)
  -h, --help             this text

Environment:
  REDIS_URL              a standalone server to use; without it a throwaway
                         redis-server is started on a free loopback port and
                         stopped on exit
  REDIS_CLUSTER_URL      a node of a cluster with replicas, for the replica
                         table; without it a throwaway cluster of 3
                         primaries with 1 replica each is started on loopback
                         and stopped when the table is done
  REDIS_BENCHMARK        the redis-benchmark binary (default: from PATH)

Results go to stdout as Markdown; progress goes to stderr.
";

/// What the command line asks for.
#[derive(Debug)]
pub enum Request {
    Help,
    Run(Options),
    /// `--telemetry-rows N`: only the telemetry-cost rows of this build, as
    /// tab-separated lines (the main run asks a build with the `telemetry`
    /// feature for them).
    TelemetryRows(usize),
}

/// Parses the flags; `Err` says what is wrong, followed by the usage.
pub fn parse(arguments: impl IntoIterator<Item = String>) -> Result<Request, String> {
    let mut options = Options::default();
    let mut arguments = arguments.into_iter();
    while let Some(flag) = arguments.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (flag.clone(), None),
        };
        let target = match name.as_str() {
            "-h" | "--help" => return Ok(Request::Help),
            "--flush-scripts" => {
                options.flush_scripts = true;
                continue;
            }
            "--current-thread" => {
                options.current_thread = true;
                continue;
            }
            "--only-replicas" => {
                options.only_replicas = true;
                continue;
            }
            "--telemetry-rows" => {
                let value = inline.or_else(|| arguments.next()).unwrap_or_default();
                return value
                    .parse()
                    .map(Request::TelemetryRows)
                    .map_err(|_| format!("`{name}` needs a whole number, got `{value}`"));
            }
            "--calls" => &mut options.calls,
            "--warmup" => &mut options.warmup,
            "--tasks" => &mut options.tasks,
            "--rounds" => &mut options.rounds,
            "--encode-iterations" => &mut options.encode_iterations,
            _ => return Err(format!("unknown flag `{flag}`\n\n{USAGE}")),
        };
        let value = inline
            .or_else(|| arguments.next())
            .ok_or_else(|| format!("`{name}` needs a number\n\n{USAGE}"))?;
        *target = value
            .replace('_', "")
            .parse()
            .map_err(|_| format!("`{name}` needs a whole number, got `{value}`"))?;
    }
    if options.calls == 0 || options.tasks == 0 || options.rounds == 0 {
        return Err("--calls, --tasks and --rounds must be at least 1".to_owned());
    }
    options.rounds = options.rounds.min(options.calls);
    Ok(Request::Run(options))
}
