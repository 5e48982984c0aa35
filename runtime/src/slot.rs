//! Redis Cluster hash slots: CRC16 (XMODEM) of the key, or of its
//! `{hash tag}`, modulo 16384.

/// Number of hash slots in a Redis Cluster.
pub const SLOT_COUNT: u16 = 16384;

/// The hash slot Redis Cluster assigns to `key`.
///
/// When the key contains a `{`, and a later `}` with at least one byte
/// between them, only the bytes between the first `{` and the first `}`
/// after it are hashed, so `user:{42}:profile` and `user:{42}:sessions`
/// share a slot. An empty tag (`{}`) hashes the whole key.
///
/// ```
/// use redis_script::cluster::key_slot;
///
/// assert_eq!(key_slot(b"foo"), 12182);
/// assert_eq!(key_slot(b"user:{42}:profile"), key_slot(b"user:{42}:sessions"));
/// assert_eq!(key_slot(b"{}x"), key_slot(b"{}x"));
/// ```
pub fn key_slot(key: &[u8]) -> u16 {
    slot_of_hashed(hash_tag(key))
}

/// The slot of a key whose hashed part ([`hash_tag`]) is `hashed`.
pub(crate) fn slot_of_hashed(hashed: &[u8]) -> u16 {
    crc16_xmodem(hashed) % SLOT_COUNT
}

/// The part of `key` that Redis Cluster hashes (the Cluster spec's rules).
pub(crate) fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&byte| byte == b'{') else {
        return key;
    };
    let after_open = &key[open + 1..];
    match after_open.iter().position(|&byte| byte == b'}') {
        Some(close) if close > 0 => &after_open[..close],
        _ => key,
    }
}

/// Whether `key` holds a complete hash tag: a `{`, then a `}` with at
/// least one byte between them. Then every key that starts with `key`
/// hashes to the same slot, whatever follows.
pub(crate) fn has_hash_tag(key: &[u8]) -> bool {
    hash_tag(key).len() < key.len()
}

const CRC16_TABLE: [u16; 256] = crc16_table();

/// CRC16 with polynomial 0x1021, initial value 0, no reflection (XMODEM):
/// the variant the Redis Cluster specification uses.
const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut index = 0;
    while index < 256 {
        let mut crc = (index as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[index] = crc;
        index += 1;
    }
    table
}

fn crc16_xmodem(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &byte| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ byte)]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_matches_the_cluster_spec_check_value() {
        // The Cluster specification gives CRC16("123456789") = 0x31C3.
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
    }

    #[test]
    fn hash_tag_rules() {
        assert_eq!(hash_tag(b"plain"), b"plain");
        assert_eq!(hash_tag(b"{user1000}.following"), b"user1000");
        assert_eq!(hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hash_tag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hash_tag(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hash_tag(b"{"), b"{");
        assert_eq!(hash_tag(b"}{"), b"}{");
        assert_eq!(hash_tag(b""), b"");
    }

    #[test]
    fn known_slots() {
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b""), 0);
        assert_eq!(
            key_slot(b"{user1000}.following"),
            key_slot(b"{user1000}.followers")
        );
    }
}
