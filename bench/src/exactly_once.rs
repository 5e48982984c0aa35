//! What `exactly_once` costs: the same `lua/transfer.lua` call as a plain
//! script and wrapped (a new call id per call: one `GET` of the record,
//! the body, one `SET` of the record), and a replayed call (the same id
//! sent again: the `GET` and the recorded reply, no body). Then the memory
//! one record takes on the server.

use std::time::Instant;

use redis::aio::MultiplexedConnection;
use redis_script::redis_script;

use crate::BoxError;
use crate::functions::FunctionRow;
use crate::measure::Samples;

/// Moves `amount` from `source` to `destination`; the new balances.
#[redis_script(path = "../lua/transfer.lua", keys = 2)]
pub async fn transfer(source: &str, destination: &str, amount: i64) -> (i64, i64);

/// The same script, recording each call under its id.
#[redis_script(
    path = "../lua/transfer.lua",
    keys = 2,
    exactly_once(prefix = "redis-script-bench:once:")
)]
pub async fn transfer_once(source: &str, destination: &str, amount: i64) -> (i64, i64);

const SOURCE: &str = "redis-script-bench:{once}:source";
const DESTINATION: &str = "redis-script-bench:{once}:destination";
/// Enough balance for every call of a run.
const BALANCE: i64 = 1 << 50;

#[derive(Debug, Clone, Copy)]
enum Way {
    Plain,
    ExactlyOnce,
    Replayed,
}

impl Way {
    const ALL: [Way; 3] = [Way::Plain, Way::ExactlyOnce, Way::Replayed];

    fn label(self) -> &'static str {
        match self {
            Way::Plain => "`transfer`, plain script: `EVALSHA`",
            Way::ExactlyOnce => "`transfer`, `exactly_once`, new id: `EVALSHA` + record",
            Way::Replayed => "`transfer`, `exactly_once`, same id again: replay",
        }
    }
}

/// What one record costs on the server.
#[derive(Debug)]
pub struct RecordSize {
    /// `MEMORY USAGE` of a record key (key, value, expiry, overhead).
    pub memory_usage: u64,
    pub key_bytes: usize,
    pub value_bytes: usize,
}

/// `calls` warm calls of each way, taking turns, one in flight; then the
/// size of one record, and the records deleted.
pub async fn measure(
    connection: &mut MultiplexedConnection,
    calls: usize,
) -> Result<(Vec<FunctionRow>, RecordSize), BoxError> {
    let () = redis::cmd("SET")
        .arg(SOURCE)
        .arg(BALANCE)
        .query_async(connection)
        .await?;
    // Warm the script cache; this call's record is replayed below.
    let replayed = transfer_once::call(SOURCE, DESTINATION, 1);
    replayed.invoke(connection).await?;
    transfer(connection, SOURCE, DESTINATION, 1).await?;
    let mut samples: Vec<Samples> = Way::ALL.iter().map(|_| Samples::default()).collect();
    for round in 0..=calls {
        for (index, way) in Way::ALL.into_iter().enumerate() {
            let start = Instant::now();
            let (source, _) = match way {
                Way::Plain => transfer(connection, SOURCE, DESTINATION, 1).await?,
                Way::ExactlyOnce => transfer_once(connection, SOURCE, DESTINATION, 1).await?,
                Way::Replayed => replayed.invoke(connection).await?,
            };
            let elapsed = start.elapsed();
            if source <= 0 {
                return Err(format!("{}: the source ran dry", way.label()).into());
            }
            if round > 0 {
                samples[index].push(elapsed);
            }
        }
    }
    let size = record_size(connection, &replayed).await;
    let cleaned = delete_records(connection).await;
    let () = redis::cmd("DEL")
        .arg(SOURCE)
        .arg(DESTINATION)
        .query_async(connection)
        .await?;
    cleaned?;
    let rows = Way::ALL
        .into_iter()
        .zip(samples)
        .map(|(way, samples)| FunctionRow {
            label: way.label(),
            summary: samples.summarize(),
        })
        .collect();
    Ok((rows, size?))
}

/// The size of `call`'s record: its key is the call's last key.
async fn record_size(
    connection: &mut MultiplexedConnection,
    call: &redis_script::Call<(i64, i64)>,
) -> Result<RecordSize, BoxError> {
    let command = call.command();
    let arguments: Vec<&[u8]> = command
        .args_iter()
        .filter_map(|argument| match argument {
            redis::Arg::Simple(bytes) => Some(bytes),
            _ => None,
        })
        .collect();
    // EVALSHA <sha> <numkeys> <source> <destination> <record> <ttl> <amount>
    let record = arguments.get(5).ok_or("the call has no record key")?;
    let value: Vec<u8> = redis::cmd("GET")
        .arg(*record)
        .query_async(connection)
        .await?;
    let memory_usage: u64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(*record)
        .query_async(connection)
        .await?;
    Ok(RecordSize {
        memory_usage,
        key_bytes: record.len(),
        value_bytes: value.len(),
    })
}

/// Deletes the run's records (matters with `REDIS_URL`).
async fn delete_records(connection: &mut MultiplexedConnection) -> Result<(), BoxError> {
    let pattern = format!(
        "{}*",
        transfer_once::SCRIPT
            .exactly_once()
            .map_or("", |once| once.record_prefix())
    );
    let mut cursor = 0u64;
    loop {
        let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(connection)
            .await?;
        if !keys.is_empty() {
            let () = redis::cmd("UNLINK")
                .arg(&keys)
                .query_async(connection)
                .await?;
        }
        if next == 0 {
            return Ok(());
        }
        cursor = next;
    }
}
