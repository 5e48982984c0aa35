//! A Redis Functions library as the macro embeds it: its name, its code and
//! the functions it registers.

/// One Redis Functions library (`#!lua name=…` with
/// `redis.register_function`) embedded in the binary by `#[redis_library]`.
///
/// The code and its SHA1 are fixed at compile time. Each function the
/// library declares is a [`Script`](crate::Script) whose
/// [`library`](crate::Script::library) is this one, called with `FCALL`.
/// A call on a server that lacks the library loads it on the way (one more
/// round trip, see [`Call::invoke`](crate::Call::invoke)); [`deploy`]
/// installs it ahead of time, and is the only way to replace another
/// version of it.
///
/// ```no_run
/// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
/// # mod quota_lib {
/// #     #[function(keys = 1)]
/// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
/// #     #[function(keys = 1)]
/// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
/// # }
/// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{Deployed, OnConflict};
///
/// match quota_lib::LIBRARY.deploy(connection, OnConflict::Refuse).await?.deployed {
///     Deployed::Loaded => println!("loaded {}", quota_lib::LIBRARY.name()),
///     Deployed::Unchanged => {}
///     Deployed::Replaced { previous_sha1 } => println!("replaced {previous_sha1}"),
/// }
/// # Ok(()) }
/// ```
///
/// [`deploy`]: Library::deploy
#[derive(Debug)]
pub struct Library {
    name: &'static str,
    path: &'static str,
    source: &'static str,
    sha1: &'static str,
    functions: &'static [&'static str],
}

/// Used by generated code only; the macro guarantees that `name` is the
/// name in the code's `#!lua name=` line, that `sha1` is the lowercase hex
/// SHA1 of `source`, and that `functions` lists every function the code
/// registers.
pub const fn new_library(
    name: &'static str,
    path: &'static str,
    source: &'static str,
    sha1: &'static str,
    functions: &'static [&'static str],
) -> Library {
    Library {
        name,
        path,
        source,
        sha1,
        functions,
    }
}

impl Library {
    /// The library's name, from its `#!lua name=` line: the name `FUNCTION
    /// LOAD` registers it under.
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// assert_eq!(quota_lib::LIBRARY.name(), "quota_lib");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The `.lua` path as written in the attribute.
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// assert_eq!(quota_lib::LIBRARY.path(), "../lua/quota_lib.lua");
    /// ```
    pub const fn path(&self) -> &'static str {
        self.path
    }

    /// The library's code, exactly as sent with `FUNCTION LOAD` (and as
    /// `FUNCTION LIST WITHCODE` shows it once loaded).
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// assert!(quota_lib::LIBRARY.source().starts_with("#!lua name=quota_lib"));
    /// ```
    pub const fn source(&self) -> &'static str {
        self.source
    }

    /// Lowercase hex SHA1 of the code, computed at compile time: the
    /// version a deploy compares with the one a server holds.
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// let sha1 = quota_lib::LIBRARY.sha1();
    /// assert_eq!(sha1.len(), 40);
    /// assert!(sha1.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')));
    /// println!("quota_lib version {}", &sha1[..8]);
    /// ```
    pub const fn sha1(&self) -> &'static str {
        self.sha1
    }

    /// Every function the code registers, declared in Rust or not.
    ///
    /// ```
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// assert_eq!(quota_lib::LIBRARY.functions(), ["fixed_window_allow", "quota_peek"]);
    /// ```
    pub const fn functions(&self) -> &'static [&'static str] {
        self.functions
    }

    pub(crate) fn sha1_prefix(&self) -> &'static str {
        self.sha1.get(..8).unwrap_or(self.sha1)
    }
}

/// The error a `FUNCTION LOAD` (or `FUNCTION LOAD REPLACE`) of `library`
/// answered with `code` and `detail`, reported for `script` (the function
/// a call was for, or the library's name for a deploy).
pub(crate) fn load_error(
    script: &'static str,
    library: &Library,
    code: &str,
    detail: &str,
) -> crate::Error {
    use crate::refusal::{LoadRefusal, load_refusal};
    use redis_script_codes::is_refusal;
    match load_refusal(code, detail) {
        LoadRefusal::LibraryExists => crate::Error::LibraryConflict {
            operation: script,
            library: library.name(),
            node: None,
            deployed_sha1: None,
            compiled_sha1: library.sha1(),
        },
        LoadRefusal::FunctionExists(function) => crate::Error::FunctionNameTaken {
            operation: script,
            library: library.name(),
            function: function.to_owned(),
        },
        // A server without what the library needs (a Lua engine, Functions):
        // the same reading as every other reply, nothing ran.
        LoadRefusal::Other => match crate::refusal::missing_feature(None, code, detail) {
            Some(feature) => crate::Error::Unsupported {
                operation: script,
                feature,
                refusal: format!("{code} {detail}"),
            },
            // `OOM`, `READONLY`, `BUSY`, `NOPERM`…: refusals like any other,
            // retried as `RetryRefusals` says.
            None if is_refusal(code, detail) => crate::Error::Refused {
                operation: script,
                code: code.to_owned(),
                message: detail.to_owned(),
            },
            None => crate::Error::LoadFailed {
                operation: script,
                library: library.name(),
                code: code.to_owned(),
                message: detail.to_owned(),
            },
        },
    }
}
