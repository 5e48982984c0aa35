//! Typed script errors: the codes a script raises on purpose with
//! `redis.error_reply('CODE …')` or `error({err = 'CODE …'})`, decoded into
//! a Rust enum, apart from every other failure.
//!
//! ```
//! use redis_script::{Failure, ScriptError};
//!
//! #[derive(Debug, ScriptError)]
//! enum VersionError {
//!     /// `redis.error_reply('CONFLICT expected 3 found 4')`
//!     Conflict { expected: u64, found: u64 },
//!     /// `redis.error_reply('GONE the document was deleted')`
//!     #[error_code("GONE")]
//!     Deleted,
//! }
//!
//! // What the derive reads from the script's error replies:
//! assert!(matches!(
//!     VersionError::from_error_reply("CONFLICT", "expected 3 found 4"),
//!     Some(VersionError::Conflict { expected: 3, found: 4 })
//! ));
//! assert!(matches!(
//!     VersionError::from_error_reply("GONE", "the document was deleted"),
//!     Some(VersionError::Deleted)
//! ));
//! assert!(VersionError::from_error_reply("CONFLICT", "no numbers").is_none());
//!
//! # fn example(result: Result<(), Failure<VersionError>>) {
//! match result {
//!     Ok(()) => {}
//!     Err(Failure::Declared(VersionError::Conflict { found, .. })) => println!("now at {found}"),
//!     Err(Failure::Declared(VersionError::Deleted)) => println!("gone"),
//!     Err(Failure::Other(error)) => eprintln!("{error}"),
//! }
//! # }
//! ```

use std::fmt;

use crate::error::Error;

/// An error type a script declares: one variant per error code.
///
/// Derive it with `#[derive(ScriptError)]` (see [the derive's
/// documentation](derive@crate::ScriptError)); a `#[redis_script(..., errors = E)]`
/// function then returns `Result<T, Failure<E>>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a script error type",
    label = "`{Self}` does not implement `ScriptError`",
    note = "add `#[derive(redis_script::ScriptError)]` to an enum with one variant per error code"
)]
pub trait ScriptError: std::error::Error + Sized {
    /// Every error code this type decodes, e.g. `["CONFLICT", "GONE"]`.
    const CODES: &'static [&'static str];

    /// Decodes an error reply, already split into its `code` (the first
    /// word) and the rest of the `message`, as
    /// [`split_error_reply`](redis_script_codes::split_error_reply) splits
    /// it. `None` when the code is not one of [`Self::CODES`], or when the
    /// message does not carry the fields its variant needs.
    fn from_error_reply(code: &str, message: &str) -> Option<Self>;

    /// The code of this error (`"CONFLICT"`).
    fn code(&self) -> &'static str;
}

/// Why a script call with declared errors failed: one of the script's own
/// errors, or anything else.
///
/// Match a declared error in one pattern:
///
/// ```
/// # use redis_script::{Failure, ScriptError};
/// # #[derive(Debug, ScriptError)]
/// # enum VersionError { Conflict { expected: u64, found: u64 } }
/// # fn example(result: Result<u64, Failure<VersionError>>) {
/// if let Err(Failure::Declared(VersionError::Conflict { found, .. })) = result {
///     println!("someone else wrote version {found}");
/// }
/// # }
/// ```
///
/// `?` converts a [`Error`] into a `Failure<E>` (decoding declared
/// codes on the way); `Failure<E>` converts into `Box<dyn Error>` and
/// `anyhow::Error` like any error.
#[derive(Debug)]
pub enum Failure<E> {
    /// The script raised one of its declared errors: a variant of `E`.
    Declared(E),
    /// Any other failure: connection, undeclared script error, reply
    /// decoding, cross-slot keys.
    Other(Error),
}

impl<E> Failure<E> {
    /// The declared error, if that is what this is.
    ///
    /// ```
    /// # use redis_script::{Failure, ScriptError};
    /// # #[derive(Debug, ScriptError)]
    /// # enum LockError { NotOwner }
    /// let failure: Failure<LockError> = Failure::Declared(LockError::NotOwner);
    /// assert!(matches!(failure.declared(), Some(LockError::NotOwner)));
    /// ```
    pub fn declared(&self) -> Option<&E> {
        match self {
            Self::Declared(error) => Some(error),
            Self::Other(_) => None,
        }
    }

    /// The other error, if this is not a declared one.
    pub fn other(&self) -> Option<&Error> {
        match self {
            Self::Declared(_) => None,
            Self::Other(error) => Some(error),
        }
    }

    /// Whether the script may have run despite the error. A declared error
    /// was raised by the script itself, so it ran (and Redis keeps the
    /// writes it made before raising it); for other errors see
    /// [`Error::may_have_executed`].
    ///
    /// ```
    /// # use redis_script::{Failure, ScriptError};
    /// # #[derive(Debug, ScriptError)]
    /// # enum LockError { NotOwner }
    /// assert!(Failure::Declared(LockError::NotOwner).may_have_executed());
    /// ```
    pub fn may_have_executed(&self) -> bool {
        match self {
            Self::Declared(_) => true,
            Self::Other(error) => error.may_have_executed(),
        }
    }
}

impl<E: ScriptError> From<Error> for Failure<E> {
    /// Turns an [`Error::Script`] whose code `E` declares into
    /// [`Failure::Declared`]; anything else, including a declared code whose
    /// message lacks the variant's fields, stays [`Failure::Other`]
    /// unchanged. The functions `#[redis_script(..., errors = E)]`
    /// generates use it, and so does `?`.
    fn from(error: Error) -> Self {
        let Error::Script {
            operation: script,
            code,
            message,
            ..
        } = &error
        else {
            return Failure::Other(error);
        };
        if let Some(declared) = E::from_error_reply(code, message) {
            return Failure::Declared(declared);
        }
        if !E::CODES.contains(&code.as_str()) {
            return Failure::Other(error);
        }
        // A declared code whose message lacks its variant's fields: a
        // mismatch of script and type, reported as one, not hidden among
        // other failures.
        Failure::Other(Error::Decode {
            operation: script,
            expected: std::any::type_name::<E>(),
            reply: crate::error::truncate_for_display(
                format!("{code} {message}").trim_end().as_bytes(),
            ),
            reason: format!(
                "the script raised its declared error code {code}, but the message does not carry the fields of its variant"
            ),
        })
    }
}

impl<E: fmt::Display> fmt::Display for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Declared(error) => error.fmt(f),
            Self::Other(error) => error.fmt(f),
        }
    }
}

/// Transparent: the source is the wrapped error's own source.
impl<E: std::error::Error> std::error::Error for Failure<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Declared(error) => error.source(),
            Self::Other(error) => std::error::Error::source(error),
        }
    }
}
