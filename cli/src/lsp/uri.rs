//! `file://` URIs and the paths they name.

use std::path::{Path, PathBuf};
use std::str::FromStr as _;

use lsp_types::Uri;

/// The local path a `file://` URI names; `None` for another scheme.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///path` or `file://localhost/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    Some(PathBuf::from(
        String::from_utf8_lossy(&decoded).into_owned(),
    ))
}

/// The `file://` URI of an absolute path (a relative one is taken from
/// the current directory). Every byte outside the unreserved set is
/// escaped, so it is always a URI; `None` would be a bug.
pub fn from_path(path: &Path) -> Option<Uri> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut text = String::from("file://");
    for byte in absolute.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            text.push(char::from(byte));
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        for path in [
            "/srv/app/lua/release lock.lua",
            "/tmp/é/x.lua",
            "/a/b%c.lua",
        ] {
            let uri = from_path(Path::new(path)).expect("a URI");
            assert!(uri.as_str().starts_with("file:///"), "{}", uri.as_str());
            assert_eq!(to_path(&uri).as_deref(), Some(Path::new(path)));
        }
        let other = Uri::from_str("untitled:Untitled-1").expect("a URI");
        assert_eq!(to_path(&other), None);
    }
}
