//! Cold calls: after `SCRIPT FLUSH` and `CONFIG RESETSTAT`, what each
//! client sends, read back from the server's `INFO commandstats`.

use redis::aio::MultiplexedConnection;
use redis_script::Batch;
pub use redis_script_test::CommandStat;
use redis_script_test::{CountingConnection, parse_commandstats};

use crate::BoxError;
use crate::variants::{LOCK_KEY, TOKEN, release_lock};

/// One row of the cold-call table.
#[derive(Debug)]
pub struct ColdRow {
    pub label: &'static str,
    pub round_trips: usize,
    pub evalsha: CommandStat,
    pub eval: CommandStat,
    pub script_load: CommandStat,
    pub reply: String,
}

/// Runs each cold scenario on a flushed script cache with zeroed stats.
/// `admin` is a separate connection for `SCRIPT FLUSH`, `CONFIG RESETSTAT`
/// and `INFO` (those are counted too, but not in the columns shown).
pub async fn cold_calls(
    connection: &MultiplexedConnection,
    admin: &mut MultiplexedConnection,
) -> Result<Vec<ColdRow>, BoxError> {
    let mut rows = Vec::new();

    let (round_trips, reply) = cold(admin, connection, async |counting| {
        format!("{:?}", release_lock(counting, LOCK_KEY, TOKEN).await)
    })
    .await?;
    rows.push(row(admin, "generated fn, 1 call", round_trips, reply).await?);

    let (round_trips, reply) = cold(admin, connection, async |counting| {
        let first = format!("{:?}", release_lock(&mut *counting, LOCK_KEY, TOKEN).await);
        let second = format!("{:?}", release_lock(&mut *counting, LOCK_KEY, TOKEN).await);
        format!("{first}, {second}")
    })
    .await?;
    rows.push(
        row(
            admin,
            "generated fn, 2 calls (cold, then warm)",
            round_trips,
            reply,
        )
        .await?,
    );

    let (round_trips, reply) = cold(admin, connection, async |counting| {
        let mut batch = Batch::pipeline();
        let mut handles = Vec::new();
        for _ in 0..3 {
            match batch.add(release_lock::call(LOCK_KEY, TOKEN)) {
                Ok(handle) => handles.push(handle),
                Err(error) => return format!("{:?}", Err::<(), _>(error)),
            }
        }
        match batch.run(counting).await {
            Ok(mut replies) => {
                let values: Vec<String> = handles
                    .into_iter()
                    .map(|handle| format!("{:?}", replies.take(handle)))
                    .collect();
                values.join(", ")
            }
            Err(error) => format!("{:?}", Err::<(), _>(error)),
        }
    })
    .await?;
    rows.push(
        row(
            admin,
            "`redis_script::Batch::pipeline`, 3 calls",
            round_trips,
            reply,
        )
        .await?,
    );

    let (round_trips, reply) = cold(admin, connection, async |counting| {
        let script = redis::Script::new(crate::variants::RELEASE_LOCK_FILE);
        let reply = script
            .key(LOCK_KEY)
            .arg(TOKEN)
            .invoke_async::<i64>(counting)
            .await;
        format!("{reply:?}")
    })
    .await?;
    rows.push(
        row(
            admin,
            "redis-rs `Script::invoke_async`, 1 call",
            round_trips,
            reply,
        )
        .await?,
    );

    let (round_trips, reply) = cold(admin, connection, async |counting| {
        let reply = redis::cmd("EVALSHA")
            .arg(crate::variants::Workload::ReleaseLock.file_sha1())
            .arg(1)
            .arg(LOCK_KEY)
            .arg(TOKEN)
            .query_async::<i64>(counting)
            .await;
        match reply {
            Ok(value) => format!("Ok({value})"),
            Err(error) => format!("Err({})", error.code().unwrap_or("?")),
        }
    })
    .await?;
    rows.push(
        row(
            admin,
            "hand-written `cmd(\"EVALSHA\")`, 1 call",
            round_trips,
            reply,
        )
        .await?,
    );

    Ok(rows)
}

/// Flushes the script cache, zeroes the stats, then runs `scenario` on a
/// counting clone of `connection`; returns its round trips and reply text.
async fn cold<F>(
    admin: &mut MultiplexedConnection,
    connection: &MultiplexedConnection,
    scenario: F,
) -> Result<(usize, String), BoxError>
where
    F: AsyncFnOnce(&mut CountingConnection<MultiplexedConnection>) -> String,
{
    redis::cmd("SCRIPT").arg("FLUSH").exec_async(admin).await?;
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec_async(admin)
        .await?;
    let mut counting = CountingConnection::new(connection.clone());
    let reply = scenario(&mut counting).await;
    Ok((counting.round_trips(), reply))
}

async fn row(
    admin: &mut MultiplexedConnection,
    label: &'static str,
    round_trips: usize,
    reply: String,
) -> Result<ColdRow, BoxError> {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(admin)
        .await?;
    let stats = parse_commandstats(&text);
    let stat = |name: &str| stats.get(name).copied().unwrap_or_default();
    Ok(ColdRow {
        label,
        round_trips,
        evalsha: stat("evalsha"),
        eval: stat("eval"),
        script_load: stat("script|load"),
        reply,
    })
}
