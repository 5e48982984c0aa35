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

/// The bytes of the length in front of each element.
const LENGTH: usize = size_of::<usize>();

/// The encoded keys and ARGV parameters of one call, in one buffer: the
/// generated code pushes the keys, the call appends the parameters. Each
/// element is its length, then its bytes, so that one allocation holds
/// the call's whole list.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Keys {
    data: Vec<u8>,
    count: usize,
}

impl Keys {
    /// An empty key list.
    pub fn new() -> Self {
        Self::default()
    }

    /// A list sized for a call of `keys` keys and `arguments` ARGV
    /// parameters, so that encoding it allocates once.
    pub fn for_call(keys: usize, arguments: usize) -> Self {
        Self {
            data: Vec::with_capacity((ELEMENT_SIZE_GUESS + LENGTH) * (keys + arguments)),
            count: 0,
        }
    }

    /// How many elements there are.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The bytes of all elements together.
    pub(super) fn encoded_len(&self) -> usize {
        self.data.len() - LENGTH * self.count
    }

    /// Appends the argument(s) `key` encodes to.
    pub fn push<K: redis::ToRedisArgs>(&mut self, key: &K) {
        key.write_redis_args(self);
    }

    /// Element `index` (0-based).
    pub(super) fn get(&self, index: usize) -> Option<&[u8]> {
        self.iter().nth(index)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut rest = self.data.as_slice();
        std::iter::from_fn(move || {
            let (length, after_length) = rest.split_first_chunk::<LENGTH>()?;
            let (element, after) = after_length.split_at_checked(usize::from_ne_bytes(*length))?;
            rest = after;
            Some(element)
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
        self.data.extend_from_slice(&arg.len().to_ne_bytes());
        self.data.extend_from_slice(arg);
        self.count += 1;
    }

    fn writer_for_next_arg(&mut self) -> impl io::Write + '_ {
        let start = self.data.len();
        self.data.extend_from_slice(&0usize.to_ne_bytes());
        self.count += 1;
        KeyWriter { keys: self, start }
    }
}

/// Writes one element in pieces, keeping its length current.
pub(super) struct KeyWriter<'a> {
    keys: &'a mut Keys,
    /// Where the element's length is.
    start: usize,
}

impl io::Write for KeyWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let data = &mut self.keys.data;
        data.extend_from_slice(bytes);
        let length = data.len() - self.start - LENGTH;
        if let Some(place) = data.get_mut(self.start..self.start + LENGTH) {
            place.copy_from_slice(&length.to_ne_bytes());
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

    /// Elements written whole, in pieces, empty, and of every length up to
    /// a few hundred bytes come back as written, in order.
    #[test]
    fn elements_come_back_as_written() {
        use redis::RedisWrite;
        use std::io::Write;

        let mut keys = Keys::for_call(1, 1);
        let mut expected: Vec<Vec<u8>> = Vec::new();
        for length in (0..300).step_by(7) {
            let element: Vec<u8> = (0..length).map(|byte| byte as u8).collect();
            if length % 2 == 0 {
                keys.write_arg(&element);
            } else {
                let mut writer = keys.writer_for_next_arg();
                for piece in element.chunks(5) {
                    writer.write_all(piece).unwrap();
                }
            }
            expected.push(element);
        }
        drop(keys.writer_for_next_arg());
        expected.push(Vec::new());
        assert_eq!(keys.count(), expected.len());
        assert_eq!(keys.iter().collect::<Vec<_>>(), expected);
        assert_eq!(
            keys.encoded_len(),
            expected.iter().map(Vec::len).sum::<usize>()
        );
        for (index, element) in expected.iter().enumerate() {
            assert_eq!(keys.get(index), Some(element.as_slice()));
        }
        assert_eq!(keys.get(expected.len()), None);
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
