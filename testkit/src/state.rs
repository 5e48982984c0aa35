//! Known states of a database: written as a test's fixture, read back after
//! its calls, and compared with a readable diff.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::time::Duration;

use redis::aio::ConnectionLike;

/// The value of one key, by type. Text is read as UTF-8 (lossily), which
/// keeps a diff readable.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Data {
    /// A string.
    String(String),
    /// A hash: field → value.
    Hash(BTreeMap<String, String>),
    /// A list, head first.
    List(Vec<String>),
    /// A set.
    Set(BTreeSet<String>),
    /// A sorted set: member → score.
    SortedSet(BTreeMap<String, f64>),
    /// A stream: entry id → field/value pairs, in order.
    Stream(BTreeMap<String, Vec<(String, String)>>),
}

impl Data {
    fn type_name(&self) -> &'static str {
        match self {
            Data::String(_) => "string",
            Data::Hash(_) => "hash",
            Data::List(_) => "list",
            Data::Set(_) => "set",
            Data::SortedSet(_) => "zset",
            Data::Stream(_) => "stream",
        }
    }
}

impl fmt::Display for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.type_name())?;
        match self {
            Data::String(text) => write!(f, "{text:?}"),
            Data::Hash(fields) => write!(f, "{fields:?}"),
            Data::List(items) => write!(f, "{items:?}"),
            Data::Set(members) => write!(f, "{members:?}"),
            Data::SortedSet(members) => write!(f, "{members:?}"),
            Data::Stream(entries) => write!(f, "{entries:?}"),
        }
    }
}

/// When a key expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// Never: the key has no TTL.
    Persistent,
    /// Within this time. Read from a database, the time left; in an
    /// expected state, the longest time left it may have (a TTL counts
    /// down while a test runs).
    Within(Duration),
}

impl fmt::Display for Ttl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ttl::Persistent => f.write_str("no TTL"),
            Ttl::Within(left) => write!(f, "TTL {left:?}"),
        }
    }
}

/// One key: its value and when it expires.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Entry {
    /// The value.
    pub data: Data,
    /// When it expires.
    pub ttl: Ttl,
}

/// The keys of a database with their values and TTLs: a fixture to write
/// ([`TestDb::given`](crate::TestDb::given)), what a database holds
/// ([`TestDb::state`](crate::TestDb::state)), or what it should hold
/// ([`TestDb::assert_state`](crate::TestDb::assert_state)).
///
/// ```
/// use std::time::Duration;
/// use redis_script_test::State;
///
/// let expected = State::new()
///     .string("rl:{tenant-7}", "1")
///     .expires_within("rl:{tenant-7}", Duration::from_secs(60))
///     .hash("job:{q}:1", [("state", "done")]);
/// let found = State::new()
///     .string("rl:{tenant-7}", "2")
///     .expires_within("rl:{tenant-7}", Duration::from_secs(59))
///     .hash("job:{q}:1", [("state", "done")]);
/// assert_eq!(
///     expected.diff(&found).unwrap(),
///     "the state differs (- expected, + found):\n  \
///      rl:{tenant-7}\n    - string \"1\"\n    + string \"2\"\n"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    keys: BTreeMap<String, Entry>,
}

impl State {
    /// No keys.
    pub fn new() -> State {
        State::default()
    }

    /// The keys, in order.
    pub fn keys(&self) -> &BTreeMap<String, Entry> {
        &self.keys
    }

    /// The entry of `key`, if it is there.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.keys.get(key)
    }

    /// Adds (or replaces) `key` with `data`, without a TTL.
    pub fn with(mut self, key: impl Into<String>, data: Data) -> State {
        self.keys.insert(
            key.into(),
            Entry {
                data,
                ttl: Ttl::Persistent,
            },
        );
        self
    }

    /// A string.
    pub fn string(self, key: impl Into<String>, value: impl Into<String>) -> State {
        self.with(key, Data::String(value.into()))
    }

    /// A hash.
    pub fn hash<F: Into<String>, V: Into<String>>(
        self,
        key: impl Into<String>,
        fields: impl IntoIterator<Item = (F, V)>,
    ) -> State {
        let fields = fields
            .into_iter()
            .map(|(field, value)| (field.into(), value.into()))
            .collect();
        self.with(key, Data::Hash(fields))
    }

    /// A list, head first.
    pub fn list<V: Into<String>>(
        self,
        key: impl Into<String>,
        items: impl IntoIterator<Item = V>,
    ) -> State {
        self.with(key, Data::List(items.into_iter().map(Into::into).collect()))
    }

    /// A set.
    pub fn set<V: Into<String>>(
        self,
        key: impl Into<String>,
        members: impl IntoIterator<Item = V>,
    ) -> State {
        self.with(
            key,
            Data::Set(members.into_iter().map(Into::into).collect()),
        )
    }

    /// A sorted set, from `(member, score)` pairs.
    pub fn sorted_set<M: Into<String>>(
        self,
        key: impl Into<String>,
        members: impl IntoIterator<Item = (M, f64)>,
    ) -> State {
        let members = members
            .into_iter()
            .map(|(member, score)| (member.into(), score))
            .collect();
        self.with(key, Data::SortedSet(members))
    }

    /// A stream, from entries with explicit ids (`"1-0"`), so that the
    /// state read back can be compared.
    pub fn stream<I, F, V, E>(self, key: impl Into<String>, entries: E) -> State
    where
        I: Into<String>,
        F: Into<String>,
        V: Into<String>,
        E: IntoIterator<Item = (I, Vec<(F, V)>)>,
    {
        let entries = entries
            .into_iter()
            .map(|(id, fields)| {
                let fields = fields
                    .into_iter()
                    .map(|(field, value)| (field.into(), value.into()))
                    .collect();
                (id.into(), fields)
            })
            .collect();
        self.with(key, Data::Stream(entries))
    }

    /// Gives `key` (added before) a TTL: written as `PEXPIRE`, and as an
    /// expectation, the longest time left it may have.
    ///
    /// # Panics
    ///
    /// If `key` was not added before.
    #[track_caller]
    pub fn expires_within(mut self, key: &str, ttl: Duration) -> State {
        match self.keys.get_mut(key) {
            Some(entry) => entry.ttl = Ttl::Within(ttl),
            None => panic!("`expires_within({key:?}, …)`: add the key before its TTL"),
        }
        self
    }

    /// The differences between this expected state and `found`, one key
    /// after the other; `None` when `found` matches: the same keys, each
    /// with the same value, and a TTL no longer than expected (a key
    /// expected without one must have none).
    pub fn diff(&self, found: &State) -> Option<String> {
        let mut text = String::new();
        let keys: BTreeSet<&String> = self.keys.keys().chain(found.keys.keys()).collect();
        for key in keys {
            let lines = match (self.keys.get(key), found.keys.get(key)) {
                (Some(expected), Some(actual)) => entry_diff(expected, actual),
                (Some(expected), None) => {
                    vec![format!("- {}", expected.data), "+ (missing)".into()]
                }
                (None, Some(actual)) => vec!["- (absent)".into(), format!("+ {}", actual.data)],
                (None, None) => Vec::new(),
            };
            if !lines.is_empty() {
                let _ = writeln!(text, "  {key}");
                for line in lines {
                    let _ = writeln!(text, "    {line}");
                }
            }
        }
        (!text.is_empty()).then(|| format!("the state differs (- expected, + found):\n{text}"))
    }

    /// Writes every key, replacing what is there, in one round trip.
    pub(crate) async fn write<C: ConnectionLike>(&self, connection: &mut C) {
        let mut pipeline = redis::pipe();
        for (key, entry) in &self.keys {
            entry.queue_write(key, &mut pipeline);
        }
        let written: redis::RedisResult<()> = pipeline.query_async(connection).await;
        if let Err(error) = written {
            panic!("writing the fixture failed: {error}");
        }
    }

    /// Writes every key, one round trip per key: on a cluster, whose
    /// pipelines cannot span slots.
    pub(crate) async fn write_each<C: ConnectionLike>(&self, connection: &mut C) {
        for (key, entry) in &self.keys {
            let mut pipeline = redis::pipe();
            entry.queue_write(key, &mut pipeline);
            let written: redis::RedisResult<()> = pipeline.query_async(connection).await;
            if let Err(error) = written {
                panic!("writing fixture key {key:?} failed: {error}");
            }
        }
    }

    /// Every key of the connection's database, with its value and TTL.
    pub(crate) async fn read<C: ConnectionLike>(connection: &mut C) -> State {
        let mut keys = BTreeSet::new();
        let mut cursor: u64 = 0;
        // SCAN returns each key at least once and ends at cursor 0; a
        // database of a test is small, so this takes a few rounds.
        loop {
            let (next, batch): (u64, Vec<String>) = query(
                connection,
                redis::cmd("SCAN").arg(cursor).arg("COUNT").arg(1000),
            )
            .await;
            keys.extend(batch);
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        State::read_keys(connection, keys).await
    }

    /// These keys with their values and TTLs (those that exist).
    pub(crate) async fn read_keys<C: ConnectionLike>(
        connection: &mut C,
        keys: impl IntoIterator<Item = String>,
    ) -> State {
        let mut state = State::new();
        for key in keys {
            if let Some(entry) = read_entry(connection, &key).await {
                state.keys.insert(key, entry);
            }
        }
        state
    }
}

impl Entry {
    /// Queues the commands that replace `key` with this entry.
    fn queue_write(&self, key: &str, pipeline: &mut redis::Pipeline) {
        pipeline.cmd("DEL").arg(key).ignore();
        match &self.data {
            Data::String(value) => {
                pipeline.cmd("SET").arg(key).arg(value).ignore();
            }
            Data::Hash(fields) if !fields.is_empty() => {
                pipeline.cmd("HSET").arg(key).arg(fields).ignore();
            }
            Data::List(items) if !items.is_empty() => {
                pipeline.cmd("RPUSH").arg(key).arg(items).ignore();
            }
            Data::Set(members) if !members.is_empty() => {
                pipeline.cmd("SADD").arg(key).arg(members).ignore();
            }
            Data::SortedSet(members) if !members.is_empty() => {
                let command = pipeline.cmd("ZADD").arg(key);
                for (member, score) in members {
                    command.arg(score).arg(member);
                }
                command.ignore();
            }
            Data::Stream(entries) => {
                for (id, fields) in entries {
                    let command = pipeline.cmd("XADD").arg(key).arg(id);
                    for (field, value) in fields {
                        command.arg(field).arg(value);
                    }
                    command.ignore();
                }
            }
            // Redis has no empty collections: the key is simply absent.
            _ => return,
        }
        if let Ttl::Within(ttl) = self.ttl {
            let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            pipeline.cmd("PEXPIRE").arg(key).arg(millis).ignore();
        }
    }
}

fn entry_diff(expected: &Entry, actual: &Entry) -> Vec<String> {
    let mut lines = Vec::new();
    if expected.data != actual.data {
        lines.push(format!("- {}", expected.data));
        lines.push(format!("+ {}", actual.data));
    }
    let ttl_fits = match (expected.ttl, actual.ttl) {
        (Ttl::Persistent, Ttl::Persistent) => true,
        (Ttl::Within(most), Ttl::Within(left)) => left <= most,
        _ => false,
    };
    if !ttl_fits {
        let expected_ttl = match expected.ttl {
            Ttl::Within(most) => format!("TTL at most {most:?}"),
            Ttl::Persistent => "no TTL".to_owned(),
        };
        lines.push(format!("- {expected_ttl}"));
        lines.push(format!("+ {}", actual.ttl));
    }
    lines
}

async fn query<C: ConnectionLike, T: redis::FromRedisValue>(
    connection: &mut C,
    command: &redis::Cmd,
) -> T {
    match command.query_async(connection).await {
        Ok(value) => value,
        Err(error) => panic!("reading the state failed: {error}"),
    }
}

/// A key's value and TTL; `None` when it expired meanwhile.
async fn read_entry<C: ConnectionLike>(connection: &mut C, key: &str) -> Option<Entry> {
    let kind: String = query(connection, redis::cmd("TYPE").arg(key)).await;
    let data = match kind.as_str() {
        "string" => Data::String(query(connection, redis::cmd("GET").arg(key)).await),
        "hash" => Data::Hash(query(connection, redis::cmd("HGETALL").arg(key)).await),
        "list" => Data::List(query(connection, redis::cmd("LRANGE").arg(key).arg(0).arg(-1)).await),
        "set" => Data::Set(query(connection, redis::cmd("SMEMBERS").arg(key)).await),
        "zset" => {
            let pairs: Vec<(String, f64)> = query(
                connection,
                redis::cmd("ZRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES"),
            )
            .await;
            Data::SortedSet(pairs.into_iter().collect())
        }
        "stream" => {
            let entries: Vec<(String, Vec<(String, String)>)> =
                query(connection, redis::cmd("XRANGE").arg(key).arg("-").arg("+")).await;
            Data::Stream(entries.into_iter().collect())
        }
        "none" => return None,
        other => panic!("key {key:?} has type {other}, which a state does not hold"),
    };
    let millis: i64 = query(connection, redis::cmd("PTTL").arg(key)).await;
    let ttl = match u64::try_from(millis) {
        Ok(millis) => Ttl::Within(Duration::from_millis(millis)),
        Err(_) => Ttl::Persistent,
    };
    Some(Entry { data, ttl })
}
