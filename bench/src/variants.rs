//! The scripts under test and the three client-side ways to call them.

use std::sync::LazyLock;

use redis::aio::MultiplexedConnection;
use redis_script::redis_script;

use crate::BoxError;

/// Deletes the lock only if `token` still owns it; 1 when deleted.
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
pub async fn release_lock(lock: &str, token: &str) -> i64;

/// Moves `amount` from `source` to `destination`; the new balances.
#[redis_script(path = "../lua/transfer.lua", keys = 2)]
pub async fn transfer(source: &str, destination: &str, amount: i64) -> (i64, i64);

/// The lock `release_lock` is called on. It is held by someone else, so
/// every call reads it, compares, and returns 0 (the server does the same
/// work on every call, whichever client sent it).
pub const LOCK_KEY: &str = "redis-script-bench:lock:{bench}";
/// Who holds the lock.
pub const LOCK_HOLDER: &str = "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f";
/// The token every call presents: 32 hex digits, like a random owner token.
pub const TOKEN: &str = "0123456789abcdef0123456789abcdef";
/// The accounts of `transfer`, in one hash slot through their `{tag}`.
pub const SOURCE: &str = "redis-script-bench:{account}:source";
pub const DESTINATION: &str = "redis-script-bench:{account}:destination";
/// Each transfer moves this much.
pub const AMOUNT: i64 = 1;
/// The source's starting balance: more than any run can move.
pub const OPENING_BALANCE: i64 = 1_000_000_000_000;

/// The `.lua` files as written: what a hand-written `EVALSHA` and redis-rs
/// `Script` send. (The generated call sends them wrapped, see
/// `redis_script_analysis::sent`, so the table shows what the wrapper
/// costs too.)
pub const RELEASE_LOCK_FILE: &str = include_str!("../../lua/release_lock.lua");
pub const TRANSFER_FILE: &str = include_str!("../../lua/transfer.lua");

/// SHA1 of each file as written, computed once.
static RELEASE_LOCK_SHA1: LazyLock<String> = LazyLock::new(|| sha1_hex(RELEASE_LOCK_FILE));
static TRANSFER_SHA1: LazyLock<String> = LazyLock::new(|| sha1_hex(TRANSFER_FILE));

/// redis-rs `Script`s over the files as written.
static RELEASE_LOCK_RS: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(RELEASE_LOCK_FILE));
static TRANSFER_RS: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(TRANSFER_FILE));

fn sha1_hex(text: &str) -> String {
    sha1_smol::Sha1::from(text).digest().to_string()
}

/// A script with fixed keys and arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `lua/release_lock.lua`: 1 key, 1 argument, reply an integer.
    ReleaseLock,
    /// `lua/transfer.lua`: 2 keys sharing a hash tag, 1 argument, reply a
    /// pair of integers.
    Transfer,
}

impl Workload {
    pub const ALL: [Workload; 2] = [Workload::ReleaseLock, Workload::Transfer];

    pub fn label(self) -> &'static str {
        match self {
            Self::ReleaseLock => "release_lock (1 key)",
            Self::Transfer => "transfer (2 keys, {tag})",
        }
    }

    pub fn script(self) -> &'static redis_script::Script {
        match self {
            Self::ReleaseLock => &release_lock::SCRIPT,
            Self::Transfer => &transfer::SCRIPT,
        }
    }

    /// The `.lua` file as written, which hand-written calls send.
    pub fn file(self) -> &'static str {
        match self {
            Self::ReleaseLock => RELEASE_LOCK_FILE,
            Self::Transfer => TRANSFER_FILE,
        }
    }

    /// SHA1 of [`Workload::file`].
    pub fn file_sha1(self) -> &'static str {
        match self {
            Self::ReleaseLock => &RELEASE_LOCK_SHA1,
            Self::Transfer => &TRANSFER_SHA1,
        }
    }

    /// `EVALSHA`'s arguments after the SHA: numkeys, keys, arguments.
    pub fn evalsha_tail(self) -> Vec<String> {
        match self {
            Self::ReleaseLock => vec!["1".into(), LOCK_KEY.into(), TOKEN.into()],
            Self::Transfer => vec![
                "2".into(),
                SOURCE.into(),
                DESTINATION.into(),
                AMOUNT.to_string(),
            ],
        }
    }
}

/// How the client calls the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The `#[redis_script]` function.
    Generated,
    /// `redis::cmd("EVALSHA").arg(sha)…query_async`, SHA precomputed.
    HandWritten,
    /// `redis::Script::key(…).arg(…).invoke_async`.
    RedisRsScript,
    /// [`Variant::HandWritten`] under `tokio::time::timeout` with the
    /// generated call's default deadline: what the deadline's timer costs
    /// a call on the network.
    HandWrittenWithTimer,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::Generated,
        Variant::HandWritten,
        Variant::RedisRsScript,
        Variant::HandWrittenWithTimer,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Self::Generated => "generated `#[redis_script]` fn",
            Self::HandWritten => "hand-written `cmd(\"EVALSHA\")`",
            Self::RedisRsScript => "redis-rs `Script::invoke_async`",
            Self::HandWrittenWithTimer => "hand-written, in `tokio::time::timeout` (a deadline)",
        }
    }
}

/// `workload` through one variant, on a handle of the shared connection:
/// the unit the warm rows measure.
#[derive(Clone)]
pub struct VariantWay {
    connection: MultiplexedConnection,
    workload: Workload,
    variant: Variant,
}

impl crate::measure::Way for VariantWay {
    async fn call(&mut self, _n: usize) -> Result<(), BoxError> {
        call_once(&mut self.connection, self.workload, self.variant).await
    }
}

/// Every variant of `workload`, in the order of [`Variant::ALL`].
pub fn ways(connection: &MultiplexedConnection, workload: Workload) -> Vec<VariantWay> {
    Variant::ALL
        .into_iter()
        .map(|variant| VariantWay {
            connection: connection.clone(),
            workload,
            variant,
        })
        .collect()
}

/// One call of `workload` through `variant`; the reply is checked (so a
/// variant cannot look fast by failing) and dropped.
pub async fn call_once(
    connection: &mut MultiplexedConnection,
    workload: Workload,
    variant: Variant,
) -> Result<(), BoxError> {
    match (workload, variant) {
        (_, Variant::HandWrittenWithTimer) => tokio::time::timeout(
            redis_script::DEFAULT_DEADLINE,
            Box::pin(call_once(connection, workload, Variant::HandWritten)),
        )
        .await
        .map_err(|_| "the deadline passed")?,
        (Workload::ReleaseLock, Variant::Generated) => {
            expect_not_released(release_lock(connection, LOCK_KEY, TOKEN).await?)
        }
        (Workload::ReleaseLock, Variant::HandWritten) => expect_not_released(
            redis::cmd("EVALSHA")
                .arg(Workload::ReleaseLock.file_sha1())
                .arg(1)
                .arg(LOCK_KEY)
                .arg(TOKEN)
                .query_async::<i64>(connection)
                .await?,
        ),
        (Workload::ReleaseLock, Variant::RedisRsScript) => expect_not_released(
            RELEASE_LOCK_RS
                .key(LOCK_KEY)
                .arg(TOKEN)
                .invoke_async::<i64>(connection)
                .await?,
        ),
        (Workload::Transfer, Variant::Generated) => {
            expect_moved(transfer(connection, SOURCE, DESTINATION, AMOUNT).await?)
        }
        (Workload::Transfer, Variant::HandWritten) => expect_moved(
            redis::cmd("EVALSHA")
                .arg(Workload::Transfer.file_sha1())
                .arg(2)
                .arg(SOURCE)
                .arg(DESTINATION)
                .arg(AMOUNT)
                .query_async::<(i64, i64)>(connection)
                .await?,
        ),
        (Workload::Transfer, Variant::RedisRsScript) => expect_moved(
            TRANSFER_RS
                .key(SOURCE)
                .key(DESTINATION)
                .arg(AMOUNT)
                .invoke_async::<(i64, i64)>(connection)
                .await?,
        ),
    }
}

fn expect_not_released(reply: i64) -> Result<(), BoxError> {
    if reply == 0 {
        Ok(())
    } else {
        Err(format!("release_lock released a lock held by someone else (reply {reply})").into())
    }
}

fn expect_moved((source, destination): (i64, i64)) -> Result<(), BoxError> {
    if source > 0 && destination > 0 {
        Ok(())
    } else {
        Err(format!("transfer returned unexpected balances ({source}, {destination})").into())
    }
}

/// Puts the keys in their starting state: the lock held by someone else,
/// the source account funded.
pub async fn prepare_keys(connection: &mut MultiplexedConnection) -> Result<(), BoxError> {
    redis::pipe()
        .set(LOCK_KEY, LOCK_HOLDER)
        .ignore()
        .set(SOURCE, OPENING_BALANCE)
        .ignore()
        .set(DESTINATION, 0)
        .ignore()
        .exec_async(connection)
        .await?;
    Ok(())
}

/// Deletes the keys the benchmark wrote.
pub async fn delete_keys(connection: &mut MultiplexedConnection) -> Result<(), BoxError> {
    redis::cmd("DEL")
        .arg(LOCK_KEY)
        .arg(SOURCE)
        .arg(DESTINATION)
        .exec_async(connection)
        .await?;
    Ok(())
}
