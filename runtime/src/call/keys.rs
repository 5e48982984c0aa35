//! The keys of one call: encoded once, routed to their slot, and the key
//! prefixes the script builds keys from checked against it.

use std::io;

use redis::RedisWrite;

use crate::error::{Error, KeySlot, truncate_for_display};
use crate::slot::{has_hash_tag, key_slot};

/// The key prefixes of one call: the first that cannot keep the keys
/// built from it in the call's slot, found as the keys and arguments are
/// encoded, and whether the caller lets untagged prefixes go.
#[derive(Debug, Clone, Default)]
pub(super) struct PrefixCheck {
    problem: Option<PrefixProblem>,
    allow_untagged: bool,
}

#[derive(Debug, Clone)]
pub(super) enum PrefixProblem {
    Unroutable {
        prefix: String,
        parameter: String,
        reason: crate::KeyPrefixProblem,
    },
    /// A prefix in another slot than the keys' (`keys_slot`).
    OtherSlot { prefix: KeySlot, keys_slot: u16 },
}

impl PrefixCheck {
    /// Lets untagged or misplaced prefixes go (a standalone server).
    pub(super) fn allow_untagged(&mut self) {
        self.allow_untagged = true;
    }

    /// Checks one prefix against the call's slot (`None`: no keys).
    pub(super) fn check(
        &mut self,
        prefix: &[u8],
        parameter: impl FnOnce() -> String,
        slot: Option<u16>,
    ) {
        if self.problem.is_some() {
            return;
        }
        let unroutable = |reason| PrefixProblem::Unroutable {
            prefix: truncate_for_display(prefix),
            parameter: parameter(),
            reason,
        };
        self.problem = if !has_hash_tag(prefix) {
            Some(unroutable(crate::KeyPrefixProblem::NoHashTag))
        } else {
            match slot {
                None => Some(unroutable(crate::KeyPrefixProblem::NoKeys)),
                Some(keys_slot) if key_slot(prefix) != keys_slot => {
                    Some(PrefixProblem::OtherSlot {
                        prefix: KeySlot {
                            key: truncate_for_display(prefix),
                            slot: key_slot(prefix),
                        },
                        keys_slot,
                    })
                }
                Some(_) => None,
            }
        };
    }

    /// The error the call fails with, if any; `first_key` names the keys'
    /// slot in a `CrossSlot` error.
    pub(super) fn error(
        &self,
        script: &'static str,
        first_key: impl FnOnce() -> Option<String>,
    ) -> Option<Error> {
        if self.allow_untagged {
            return None;
        }
        Some(match self.problem.clone()? {
            PrefixProblem::Unroutable {
                prefix,
                parameter,
                reason,
            } => Error::KeyPrefix {
                operation: script,
                prefix,
                parameter,
                reason,
            },
            PrefixProblem::OtherSlot { prefix, keys_slot } => Error::CrossSlot {
                operation: script,
                keys: vec![
                    KeySlot {
                        key: first_key().unwrap_or_default(),
                        slot: keys_slot,
                    },
                    prefix,
                ],
            },
        })
    }
}

/// Where a cluster sends a call, decided from its keys before sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Routing {
    /// No keys: any node may run it.
    AnyNode,
    /// Every key (or, with `allow-cross-slot-keys`, the first) is in this slot.
    Slot(u16),
    /// The keys span several slots: refused without a round trip.
    CrossSlot(Vec<KeySlot>),
}

/// Bytes reserved per key or ARGV parameter when sizing a call: enough for
/// keys, numbers, tokens and short strings; longer values grow the buffer
/// once.
const ELEMENT_SIZE_GUESS: usize = 32;

/// The encoded keys and ARGV parameters of one call, in one buffer: the
/// generated code pushes the keys, the call appends the parameters.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Keys {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Keys {
    /// An empty key list.
    pub fn new() -> Self {
        Self::default()
    }

    /// A list sized for a call of `keys` keys and `arguments` ARGV
    /// parameters, so that encoding it allocates once per buffer.
    pub fn for_call(keys: usize, arguments: usize) -> Self {
        let count = keys + arguments;
        Self {
            data: Vec::with_capacity(ELEMENT_SIZE_GUESS * count),
            ends: Vec::with_capacity(count),
        }
    }

    /// How many elements there are.
    pub(super) fn count(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of all elements together.
    pub(super) fn encoded_len(&self) -> usize {
        self.data.len()
    }

    /// Appends the argument(s) `key` encodes to.
    pub fn push<K: redis::ToRedisArgs>(&mut self, key: &K) {
        key.write_redis_args(self);
    }

    /// Element `index` (0-based).
    pub(super) fn get(&self, index: usize) -> Option<&[u8]> {
        let start = match index.checked_sub(1) {
            Some(previous) => *self.ends.get(previous)?,
            None => 0,
        };
        self.data.get(start..*self.ends.get(index)?)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .filter_map(|(start, end)| self.data.get(start..end))
    }

    /// The slot every key shares, or every key with its slot when they do
    /// not share one (unless cross-slot keys are allowed: then the first
    /// key's slot, which is where a cluster sends the call).
    pub(super) fn routing(&self, allow_cross_slot_keys: bool) -> Routing {
        let mut slots = self.iter().map(key_slot);
        let Some(first) = slots.next() else {
            return Routing::AnyNode;
        };
        if allow_cross_slot_keys || slots.all(|slot| slot == first) {
            return Routing::Slot(first);
        }
        Routing::CrossSlot(
            self.iter()
                .map(|key| KeySlot {
                    key: truncate_for_display(key),
                    slot: key_slot(key),
                })
                .collect(),
        )
    }
}

impl RedisWrite for Keys {
    fn write_arg(&mut self, arg: &[u8]) {
        self.data.extend_from_slice(arg);
        self.ends.push(self.data.len());
    }

    fn writer_for_next_arg(&mut self) -> impl io::Write + '_ {
        self.ends.push(self.data.len());
        KeyWriter { keys: self }
    }
}

/// Writes one key in pieces, keeping its end offset current.
pub(super) struct KeyWriter<'a> {
    keys: &'a mut Keys,
}

impl io::Write for KeyWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.keys.data.extend_from_slice(bytes);
        if let Some(end) = self.keys.ends.last_mut() {
            *end = self.keys.data.len();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
