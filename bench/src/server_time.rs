//! What the source sent costs the server: the same `EVALSHA` of each
//! workload's `.lua` file as written and as the generated call sends it
//! (run under `xpcall`, marking every error it ends with), timed by the
//! server itself (`INFO commandstats`, `usec` over `calls` for `evalsha`).

use redis::aio::MultiplexedConnection;

use crate::BoxError;
use crate::variants::Workload;

/// Calls per pipeline: enough to keep the server busy, few enough to stay
/// far below any output buffer limit.
const PIPELINE: usize = 100;

/// One row: a workload, which source, and the server's microseconds per call.
#[derive(Debug, Clone)]
pub struct ServerTimeRow {
    pub workload: &'static str,
    pub source: &'static str,
    pub usec_per_call: f64,
}

/// `calls` calls of each workload's two sources, taking turns in `rounds`;
/// needs `CONFIG RESETSTAT` (a throwaway server, or `--flush-scripts`).
pub async fn measure(
    admin: &mut MultiplexedConnection,
    calls: usize,
    rounds: usize,
) -> Result<Vec<ServerTimeRow>, BoxError> {
    let mut rows = Vec::new();
    for workload in Workload::ALL {
        let sources = [
            ("the file as written", workload.file_sha1()),
            ("as sent (wrapped)", workload.script().sha1()),
        ];
        let mut totals = [(0u64, 0u64); 2];
        for _ in 0..rounds.max(1) {
            for (total, (_, sha)) in totals.iter_mut().zip(sources) {
                let (calls, usec) = timed(admin, workload, sha, calls / rounds.max(1)).await?;
                total.0 += calls;
                total.1 += usec;
            }
        }
        for ((label, _), (calls, usec)) in sources.into_iter().zip(totals) {
            rows.push(ServerTimeRow {
                workload: workload.label(),
                source: label,
                usec_per_call: usec as f64 / calls.max(1) as f64,
            });
        }
    }
    Ok(rows)
}

/// Runs `count` `EVALSHA <sha>` of `workload` after `CONFIG RESETSTAT`:
/// the calls and microseconds the server counted.
async fn timed(
    admin: &mut MultiplexedConnection,
    workload: Workload,
    sha: &str,
    count: usize,
) -> Result<(u64, u64), BoxError> {
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(admin)
        .await?;
    let mut left = count;
    while left > 0 {
        let batch = left.min(PIPELINE);
        let mut pipeline = redis::pipe();
        for _ in 0..batch {
            pipeline
                .cmd("EVALSHA")
                .arg(sha)
                .arg(workload.evalsha_tail())
                .ignore();
        }
        let () = pipeline.query_async(admin).await?;
        left -= batch;
    }
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(admin)
        .await?;
    let line = stats
        .lines()
        .find(|line| line.starts_with("cmdstat_evalsha:"))
        .ok_or("INFO commandstats has no evalsha line")?;
    let field = |name: &str| -> Result<u64, BoxError> {
        line.split([':', ','])
            .find_map(|part| part.strip_prefix(name)?.strip_prefix('='))
            .ok_or_else(|| format!("no {name} in {line}"))?
            .parse::<u64>()
            .map_err(BoxError::from)
    };
    Ok((field("calls")?, field("usec")?))
}
