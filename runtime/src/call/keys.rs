//! The keys of one call: encoded once, routed to their slot, and the key
//! prefixes the script builds keys from checked against it.

use std::io;

use redis::RedisWrite;

use crate::error::{Error, KeySlot, truncate_for_display};
use crate::slot::{has_hash_tag, hash_tag, key_slot, slot_of_hashed};

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
    /// One key, whose slot is computed when asked: most calls are sent
    /// without it (a cluster connection routes by the key itself).
    OneKey,
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
        self.ends.iter().scan(0, |start, &end| {
            let element = self.data.get(*start..end);
            *start = end;
            element
        })
    }

    /// The slot every key shares, or every key with its slot when they do
    /// not share one (unless cross-slot keys are allowed: then the first
    /// key's slot, which is where a cluster sends the call).
    pub(super) fn routing(&self, allow_cross_slot_keys: bool) -> Routing {
        let mut keys = self.iter();
        let Some(first) = keys.next() else {
            return Routing::AnyNode;
        };
        let first_hashed = hash_tag(first);
        let slot = slot_of_hashed(first_hashed);
        // Keys with the same hash tag (the usual multi-key call) share the
        // slot without hashing again.
        if allow_cross_slot_keys
            || keys.all(|key| {
                let hashed = hash_tag(key);
                hashed == first_hashed || slot_of_hashed(hashed) == slot
            })
        {
            return Routing::Slot(slot);
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

#[cfg(test)]
mod tests {
    use super::{Keys, Routing};
    use crate::slot::key_slot;

    fn keys(of: &[&[u8]]) -> Keys {
        let mut keys = Keys::new();
        for key in of {
            keys.push(key);
        }
        keys
    }

    /// Every pair and triple of keys over an alphabet with braces: the
    /// routing shares a slot exactly when each key's own slot is the first
    /// key's (the shortcut for equal hash tags never decides otherwise).
    #[test]
    fn routing_agrees_with_each_keys_slot() {
        let pieces: [&[u8]; 7] = [b"a", b"{", b"}", b"{a}", b"{b}", b"", b"x{a}"];
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for first in pieces {
            for second in pieces {
                texts.push([first, second].concat());
            }
        }
        // Two different hash tags in one slot, to reach the CRC after the
        // tags differ.
        let mut same_slot = None;
        for number in 0..100_000u32 {
            let tag = format!("{{t{number}}}");
            if number > 0 && key_slot(tag.as_bytes()) == key_slot(b"{t0}") {
                same_slot = Some(tag.into_bytes());
                break;
            }
        }
        texts.push(b"{t0}".to_vec());
        texts.push(same_slot.expect("two of 100,000 tags share a slot"));
        for first in &texts {
            for second in &texts {
                for third in [None, Some(&texts[3])] {
                    let mut of: Vec<&[u8]> = vec![first, second];
                    of.extend(third.map(Vec::as_slice));
                    let shared = of.iter().all(|key| key_slot(key) == key_slot(first));
                    let routing = keys(&of).routing(false);
                    if shared {
                        assert_eq!(routing, Routing::Slot(key_slot(first)), "{of:?}");
                    } else {
                        assert!(matches!(routing, Routing::CrossSlot(_)), "{of:?}");
                    }
                    assert_eq!(keys(&of).routing(true), Routing::Slot(key_slot(first)));
                }
            }
        }
        assert_eq!(keys(&[]).routing(false), Routing::AnyNode);
    }
}
