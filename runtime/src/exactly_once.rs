//! Exactly-once calls: call ids, their records, and where a record lives.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::slot::{SLOT_COUNT, key_slot};

/// How a script declared `exactly_once` records its calls, as the
/// attribute set it: `#[redis_script(…, exactly_once(ttl_secs = 600,
/// prefix = "rs:once:", retries = 3))]` (those are the defaults).
///
/// ```
/// # use redis_script::redis_script;
/// #[redis_script(path = "../lua/transfer.lua", keys = 2, exactly_once)]
/// async fn transfer(from: &str, to: &str, amount: i64) -> (i64, i64);
///
/// let once = transfer::SCRIPT.exactly_once().expect("declared exactly_once");
/// assert_eq!(once.record_prefix(), "rs:once:");
/// assert_eq!(once.record_ttl(), std::time::Duration::from_secs(600));
/// assert_eq!(once.retries(), 3);
/// // The defaults, as the attribute applies them when it says nothing.
/// use redis_script::ExactlyOnce;
/// assert_eq!(
///     (once.record_prefix(), once.record_ttl(), once.retries()),
///     (ExactlyOnce::DEFAULT_RECORD_PREFIX, ExactlyOnce::DEFAULT_RECORD_TTL, ExactlyOnce::DEFAULT_RETRIES)
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExactlyOnce {
    prefix: &'static str,
    ttl_ms: u64,
    retries: u32,
}

/// Used by generated code only: the attribute's settings, checked by the
/// macro (`prefix` has no `{` or `}`, `ttl_ms` is at least 1); `None` for
/// the defaults.
pub const fn exactly_once(
    prefix: Option<&'static str>,
    ttl_ms: Option<u64>,
    retries: Option<u32>,
) -> ExactlyOnce {
    ExactlyOnce {
        prefix: match prefix {
            Some(prefix) => prefix,
            None => ExactlyOnce::DEFAULT_RECORD_PREFIX,
        },
        ttl_ms: match ttl_ms {
            Some(ttl_ms) => ttl_ms,
            None => ExactlyOnce::DEFAULT_RECORD_TTL.as_secs() * 1000,
        },
        retries: match retries {
            Some(retries) => retries,
            None => ExactlyOnce::DEFAULT_RETRIES,
        },
    }
}

impl ExactlyOnce {
    /// The record prefix when the attribute names none.
    pub const DEFAULT_RECORD_PREFIX: &'static str = "rs:once:";

    /// How long a record lives when the attribute says nothing: long
    /// enough to outlive every re-send of one call (the runtime's retries,
    /// the cluster connection's own, commands held by a paused server),
    /// short enough that a busy script's records stay small (see the
    /// memory table of [the exactly-once guide](crate::guide::exactly_once)).
    pub const DEFAULT_RECORD_TTL: Duration = Duration::from_secs(600);

    /// How many times a call is sent again after a connection failure or
    /// a timeout when the attribute says nothing.
    pub const DEFAULT_RETRIES: u32 = 3;

    /// The prefix of every record key of the script.
    pub const fn record_prefix(&self) -> &'static str {
        self.prefix
    }

    /// How long a record lives unless the call's [`CallId::with_ttl`]
    /// says otherwise.
    pub const fn record_ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms)
    }

    /// How many times a call is sent again, with the same id, after its
    /// connection failed or no reply came in time.
    pub const fn retries(&self) -> u32 {
        self.retries
    }

    /// The record key of call `id` of `script`, in `slot`:
    /// `<prefix>{<tag>}<script>:<id>`, where `<tag>` is a short tag hashing
    /// to `slot`, so that the record shares the slot of the call's keys
    /// whether they have a hash tag or not.
    pub(crate) fn record_key(&self, script: &str, id: &[u8], slot: u16) -> Vec<u8> {
        let tag = slot_tag(slot);
        let mut key =
            Vec::with_capacity(self.prefix.len() + tag.len() + script.len() + id.len() + 3);
        key.extend_from_slice(self.prefix.as_bytes());
        key.push(b'{');
        key.extend_from_slice(tag);
        key.push(b'}');
        key.extend_from_slice(script.as_bytes());
        key.push(b':');
        key.extend_from_slice(id);
        key
    }
}

/// The id of one logical call of an exactly-once script, and how long its
/// record lives.
///
/// Every call of such a script carries one: [`CallId::generate`] makes a
/// new one for each `f::call(…)` (and each `f(conn, …)`); pass your own
/// to `f::call_with_id(id, …)` to make calls from different processes one
/// logical call, such as the requests that share an HTTP idempotency key.
/// Ids are per script: the same id given to two scripts names two calls.
///
/// ```
/// use std::time::Duration;
/// use redis_script::CallId;
///
/// let id = CallId::new("order-7:charge").with_ttl(Duration::from_secs(24 * 3600));
/// assert_eq!(id.as_str(), "order-7:charge");
/// assert_eq!(id.ttl(), Some(Duration::from_secs(86_400)));
/// assert_ne!(CallId::generate(), CallId::generate());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CallId {
    id: String,
    ttl: Option<Duration>,
}

impl CallId {
    /// The caller's own id, for instance an idempotency key. Any text; it
    /// becomes part of a Redis key, so keep it short.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ttl: None,
        }
    }

    /// A new id, unique across processes: 128 bits (a random 64-bit
    /// process part and a 64-bit counter), as 22 URL-safe base64 characters.
    pub fn generate() -> Self {
        static PROCESS: OnceLock<u64> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let process = *PROCESS.get_or_init(|| {
            // std seeds every `RandomState` from the operating system's
            // random source; hashing the process id and the time adds
            // nothing secret, only keeps two states of one seed apart.
            let started = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            RandomState::new().hash_one((std::process::id(), started))
        });
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&process.to_le_bytes());
        bytes[8..].copy_from_slice(&count.to_le_bytes());
        Self::new(base64_url(&bytes))
    }

    /// Keeps this call's record for `ttl` instead of the script's
    /// `exactly_once(ttl_secs = …)`; rounded up to whole milliseconds.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The id as given (or generated).
    pub fn as_str(&self) -> &str {
        &self.id
    }

    /// The record's time to live set with [`CallId::with_ttl`].
    pub fn ttl(&self) -> Option<Duration> {
        self.ttl
    }

    /// The TTL argument of the wrapped script, in milliseconds (at least 1).
    pub(crate) fn ttl_ms(&self, once: &ExactlyOnce) -> u64 {
        match self.ttl {
            Some(ttl) => u64::try_from(ttl.as_nanos().div_ceil(1_000_000))
                .unwrap_or(u64::MAX)
                .max(1),
            None => once.ttl_ms,
        }
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CallId").field(&self.id).finish()
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

impl From<&str> for CallId {
    fn from(id: &str) -> Self {
        Self::new(id)
    }
}

impl From<String> for CallId {
    fn from(id: String) -> Self {
        Self::new(id)
    }
}

/// Unpadded URL-safe base64: ids stay printable and short.
fn base64_url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let bits = chunk.iter().enumerate().fold(0u32, |bits, (index, &byte)| {
            bits | u32::from(byte) << (16 - 8 * index)
        });
        for sextet in 0..=chunk.len() {
            let index = (bits >> (18 - 6 * sextet)) & 0x3f;
            text.push(char::from(ALPHABET[index as usize]));
        }
    }
    text
}

/// The shortest tag (up to three letters or digits) hashing to each slot;
/// built on first use, in about a millisecond.
fn slot_tag(slot: u16) -> &'static [u8] {
    static TAGS: OnceLock<Vec<([u8; 3], u8)>> = OnceLock::new();
    let tags = TAGS.get_or_init(build_slot_tags);
    match tags.get(usize::from(slot % SLOT_COUNT)) {
        Some((tag, length)) => tag.get(..usize::from(*length)).unwrap_or(tag),
        None => b"",
    }
}

fn build_slot_tags() -> Vec<([u8; 3], u8)> {
    const ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut tags = vec![([0u8; 3], 0u8); usize::from(SLOT_COUNT)];
    let mut missing = tags.len();
    'lengths: for length in 1..=3u8 {
        let combinations = ALPHABET.len().pow(u32::from(length));
        for mut number in 0..combinations {
            let mut tag = [0u8; 3];
            for byte in tag.iter_mut().take(usize::from(length)) {
                *byte = ALPHABET[number % ALPHABET.len()];
                number /= ALPHABET.len();
            }
            let slot = key_slot(tag.get(..usize::from(length)).unwrap_or(&tag));
            let Some(entry) = tags.get_mut(usize::from(slot)) else {
                continue;
            };
            if entry.1 == 0 {
                *entry = (tag, length);
                missing -= 1;
                if missing == 0 {
                    break 'lengths;
                }
            }
        }
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_has_a_tag_that_hashes_to_it() {
        for slot in 0..SLOT_COUNT {
            let tag = slot_tag(slot);
            assert!(!tag.is_empty() && tag.len() <= 3, "slot {slot}");
            assert_eq!(key_slot(tag), slot);
        }
    }

    #[test]
    fn a_record_shares_the_slot_of_any_key() {
        let once = exactly_once(None, None, None);
        for key in [
            &b"plain"[..],
            b"user:{42}:profile",
            b"odd}{key",
            b"{}",
            b"a{b",
        ] {
            let slot = key_slot(key);
            let record = once.record_key("count_once", b"id-1", slot);
            assert_eq!(key_slot(&record), slot, "{}", String::from_utf8_lossy(key));
            assert!(record.starts_with(b"rs:once:{"));
            assert!(record.ends_with(b"}count_once:id-1"));
        }
    }

    #[test]
    fn generated_ids_are_distinct_and_printable() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| CallId::generate().id).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert_eq!(id.len(), 22);
            assert!(
                id.bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
            );
        }
    }

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64_url(b""), "");
        assert_eq!(base64_url(b"f"), "Zg");
        assert_eq!(base64_url(b"fo"), "Zm8");
        assert_eq!(base64_url(b"foo"), "Zm9v");
        assert_eq!(base64_url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn ttls_round_up_to_milliseconds() {
        let once = exactly_once(None, None, None);
        assert_eq!(CallId::new("a").ttl_ms(&once), 600_000);
        let short = CallId::new("a").with_ttl(Duration::from_micros(1500));
        assert_eq!(short.ttl_ms(&once), 2);
        assert_eq!(CallId::new("a").with_ttl(Duration::ZERO).ttl_ms(&once), 1);
    }
}
