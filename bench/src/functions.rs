//! The same logic as a function of a library and as a script: the
//! fixed-window limiter of `lua/quota_lib.lua` (`FCALL` through the
//! generated function, and a hand-written `redis::cmd("FCALL")`) against
//! `lua/rate_limit_fixed.lua` (`EVALSHA` through the generated function).
//! The counter is full, so every call takes the same path on the server
//! (GET, PTTL, reply DENIED).

use std::time::Instant;

use redis::aio::MultiplexedConnection;
use redis_script::{OnConflict, redis_library, redis_script};

use crate::BoxError;
use crate::measure::{Samples, Summary};

/// What both versions reply.
#[derive(redis_script::ScriptReply)]
pub enum Decision {
    /// Admitted.
    #[reply(tag = "ALLOWED")]
    Allowed { count: u64, remaining: u64 },
    /// Refused until the window ends.
    #[reply(tag = "DENIED")]
    Denied { count: u64, retry_after_ms: u64 },
}

/// The limiter as a function library.
#[redis_library(path = "../lua/quota_lib.lua")]
pub mod quota_lib {
    #[function(keys = 1)]
    pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> Decision;

    #[function(keys = 1)]
    pub async fn quota_peek(counter: &str) -> Option<u64>;
}

/// The limiter as a script.
#[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
pub async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;

const COUNTER: &str = "redis-script-bench:{quota}:counter";
const LIMIT: u64 = 1;
const WINDOW_MS: u64 = 3_600_000;

#[derive(Debug, Clone, Copy)]
enum Way {
    GeneratedFunction,
    HandWrittenFcall,
    GeneratedScript,
}

impl Way {
    const ALL: [Way; 3] = [
        Way::GeneratedFunction,
        Way::HandWrittenFcall,
        Way::GeneratedScript,
    ];

    fn label(self) -> &'static str {
        match self {
            Way::GeneratedFunction => "`#[redis_library]` function: `FCALL`",
            Way::HandWrittenFcall => "hand-written `redis::cmd(\"FCALL\")`",
            Way::GeneratedScript => "`#[redis_script]`, same logic: `EVALSHA`",
        }
    }
}

/// One measured row.
#[derive(Debug)]
pub struct FunctionRow {
    pub label: &'static str,
    pub summary: Summary,
}

/// `calls` warm calls of each way, taking turns, one in flight.
pub async fn measure(
    connection: &mut MultiplexedConnection,
    calls: usize,
) -> Result<Vec<FunctionRow>, BoxError> {
    quota_lib::LIBRARY
        .deploy(connection, OnConflict::Replace)
        .await?;
    // Fill the window and warm the script cache.
    quota_lib::fixed_window_allow(connection, COUNTER, LIMIT, WINDOW_MS).await?;
    rate_limit_fixed(connection, COUNTER, LIMIT, WINDOW_MS).await?;
    let mut samples: Vec<Samples> = Way::ALL.iter().map(|_| Samples::default()).collect();
    for round in 0..=calls {
        for (index, way) in Way::ALL.into_iter().enumerate() {
            let start = Instant::now();
            let decision = match way {
                Way::GeneratedFunction => {
                    quota_lib::fixed_window_allow(connection, COUNTER, LIMIT, WINDOW_MS).await?
                }
                Way::HandWrittenFcall => {
                    redis::cmd("FCALL")
                        .arg("fixed_window_allow")
                        .arg(1)
                        .arg(COUNTER)
                        .arg(LIMIT)
                        .arg(WINDOW_MS)
                        .query_async(connection)
                        .await?
                }
                Way::GeneratedScript => {
                    rate_limit_fixed(connection, COUNTER, LIMIT, WINDOW_MS).await?
                }
            };
            let elapsed = start.elapsed();
            match decision {
                Decision::Denied {
                    count,
                    retry_after_ms,
                } if count == LIMIT && retry_after_ms > 0 => {}
                Decision::Denied { count, .. } => {
                    return Err(format!("{}: DENIED at count {count}", way.label()).into());
                }
                Decision::Allowed { count, remaining } => {
                    return Err(format!(
                        "{}: expected DENIED, got ALLOWED ({count}, {remaining} left)",
                        way.label()
                    )
                    .into());
                }
            }
            if round > 0 {
                samples[index].push(elapsed);
            }
        }
    }
    let () = redis::cmd("DEL")
        .arg(COUNTER)
        .query_async(connection)
        .await?;
    Ok(Way::ALL
        .into_iter()
        .zip(samples)
        .map(|(way, samples)| FunctionRow {
            label: way.label(),
            summary: samples.summarize(),
        })
        .collect())
}
