//! What a running server says it is: its family and version, from
//! `INFO server`.

use std::collections::BTreeMap;
use std::fmt;

use crate::ServerFlavor;

/// A server's version, e.g. `7.0.15` for Redis or `8.1.8` for Valkey.
///
/// Ordered field by field, so `version >= ServerVersion::new(7, 0, 0)` asks
/// "at least 7.0".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerVersion {
    /// The first number.
    pub major: u32,
    /// The second number.
    pub minor: u32,
    /// The third number.
    pub patch: u32,
}

impl ServerVersion {
    /// The version `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> ServerVersion {
        ServerVersion {
            major,
            minor,
            patch,
        }
    }

    /// Parses `"7.0.15"`; `None` unless it is exactly three numbers
    /// separated by dots.
    pub fn parse(text: &str) -> Option<ServerVersion> {
        let mut parts = text.trim().split('.').map(str::parse::<u32>);
        let version = ServerVersion::new(
            parts.next()?.ok()?,
            parts.next()?.ok()?,
            parts.next()?.ok()?,
        );
        parts.next().is_none().then_some(version)
    }
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The family and version in `INFO server` fields.
///
/// Valkey reports `server_name:valkey` and its own version in
/// `valkey_version`, and keeps a `redis_version` field for clients that
/// check it (Valkey 8.1.8 says `redis_version:7.2.4`); Redis has neither of
/// the first two.
pub(crate) fn parse_identity(
    info: &BTreeMap<String, String>,
) -> Result<(ServerFlavor, ServerVersion), String> {
    let is_valkey = info.get("server_name").map(String::as_str) == Some("valkey")
        || info.contains_key("valkey_version");
    let (flavor, field) = if is_valkey {
        (ServerFlavor::Valkey, "valkey_version")
    } else {
        (ServerFlavor::Redis, "redis_version")
    };
    let text = info
        .get(field)
        .ok_or_else(|| format!("INFO server of a {flavor} server has no `{field}` field"))?;
    let version = ServerVersion::parse(text)
        .ok_or_else(|| format!("INFO server field `{field}:{text}` is not a version"))?;
    Ok((flavor, version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::parse_info;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(
            ServerVersion::parse("7.0.15"),
            Some(ServerVersion::new(7, 0, 15))
        );
        assert_eq!(ServerVersion::parse("8.1.8").unwrap().to_string(), "8.1.8");
        for bad in ["", "7", "7.0", "7.0.15.1", "7.x.1", "v7.0.1", "7..1"] {
            assert_eq!(ServerVersion::parse(bad), None, "{bad:?}");
        }
        assert!(ServerVersion::new(7, 0, 15) < ServerVersion::new(7, 2, 0));
        assert!(ServerVersion::new(8, 1, 8) > ServerVersion::new(7, 2, 4));
        assert!(ServerVersion::new(7, 0, 15) >= ServerVersion::new(7, 0, 0));
    }

    #[test]
    fn redis_is_recognised() {
        // Abridged from Redis 7.0.15.
        let text = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n\
                    redis_mode:standalone\r\nos:Linux\r\nprocess_id:42\r\n";
        assert_eq!(
            parse_identity(&parse_info(text)),
            Ok((ServerFlavor::Redis, ServerVersion::new(7, 0, 15)))
        );
    }

    #[test]
    fn valkey_is_recognised_by_its_own_version_field() {
        // Abridged from Valkey 8.1.8: `redis_version` is the compatibility
        // version, not Valkey's.
        let text = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
                    valkey_version:8.1.8\r\nredis_git_sha1:00000000\r\n\
                    server_mode:standalone\r\nprocess_id:42\r\n";
        assert_eq!(
            parse_identity(&parse_info(text)),
            Ok((ServerFlavor::Valkey, ServerVersion::new(8, 1, 8)))
        );
    }

    #[test]
    fn missing_or_malformed_versions_are_errors() {
        assert_eq!(
            parse_identity(&parse_info("server_name:valkey\r\nredis_version:7.2.4\r\n")),
            Err("INFO server of a Valkey server has no `valkey_version` field".to_owned())
        );
        assert_eq!(
            parse_identity(&parse_info("process_id:1\r\n")),
            Err("INFO server of a Redis server has no `redis_version` field".to_owned())
        );
        assert_eq!(
            parse_identity(&parse_info("redis_version:unstable\r\n")),
            Err("INFO server field `redis_version:unstable` is not a version".to_owned())
        );
    }
}
