//! How the source `redis-script` sends marks every error a script ends
//! with, and how the runtime reads the mark back: the one definition the
//! analysis's wrapper (which writes it in Lua) and the runtime (which
//! parses it) both follow.
//!
//! A script call can end with an error reply for two reasons: the server
//! refused it before running it (`NOSCRIPT`, `BUSY`, `MOVED`, …), or the
//! script ran and ended with an error. Only the first is safe to send
//! again, and both read the same on the wire: a script can return
//! `{err = 'NOSCRIPT No matching script'}` or raise
//! `error({err = 'BUSY …'})`. So the source sent runs the file's code
//! under `xpcall` and marks whatever it ends with:
//!
//! * an error reply it **returns** gets [`RETURNED_ERROR_MARK`] before its
//!   text: `~CONFLICT expected 3 found 4`;
//! * an error it **raises** (`error(…)`, a failing `redis.call`, a runtime
//!   error, an error raised from a C function such as `table.sort`) is
//!   caught, and returned as `^<message> @<line>`: [`RAISED_ERROR_MARK`],
//!   the message as the server would have written it (`ERR …` for a
//!   string, the `err` field of a table), then [`LINE_SEPARATOR`] and the
//!   line of the file the error was raised at (`?` when no line of Lua
//!   code raised it).
//!
//! The server's own errors start with a code in capitals, never with
//! either mark, so a reply without one cannot come from the script, and
//! one with a mark cannot be a refusal. The code of a marked error starts
//! with `~` or `^`, which clients that act on codes by themselves
//! (redis-rs's cluster connection follows `MOVED`, retries `TRYAGAIN`) do
//! not recognise either.
//!
//! ```
//! use redis_script_codes::marks::{ScriptEnding, read};
//!
//! assert_eq!(
//!     read("~CONFLICT", "expected 3 found 4"),
//!     Some(ScriptEnding::Returned { code: "CONFLICT", message: "expected 3 found 4" })
//! );
//! assert_eq!(
//!     read("^ERR", "value is not an integer or out of range @12"),
//!     Some(ScriptEnding::Raised {
//!         code: "ERR",
//!         message: "value is not an integer or out of range",
//!         line: Some(12),
//!     })
//! );
//! assert_eq!(read("NOSCRIPT", "No matching script. Please use EVAL."), None);
//! ```

/// The mark before the text of every error reply a script *returns*
/// (`redis.error_reply(…)`, `{err = …}`, a caught error handed back): the
/// code sent and read back is `~CONFLICT`, not `CONFLICT`.
///
/// ```
/// use redis_script_codes::marks::RETURNED_ERROR_MARK;
///
/// assert_eq!(RETURNED_ERROR_MARK, "~");
/// ```
pub const RETURNED_ERROR_MARK: &str = "~";

/// The mark before the text of every error a script *raises*, which the
/// source sent catches and returns as `^<message> @<line>`.
///
/// ```
/// use redis_script_codes::marks::RAISED_ERROR_MARK;
///
/// assert_eq!(RAISED_ERROR_MARK, "^");
/// ```
pub const RAISED_ERROR_MARK: &str = "^";

/// What separates a raised error's message from the line it was raised
/// at; the last occurrence in the reply is the separator, since the
/// message may hold the same text.
pub const LINE_SEPARATOR: &str = " @";

/// What the line is when no line of Lua code raised the error.
pub const UNKNOWN_LINE: &str = "?";

/// How a script ended, read from a marked error reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptEnding<'a> {
    /// The script returned an error reply: `code` and `message` as it
    /// wrote them.
    Returned {
        /// The first word of the reply (`CONFLICT`).
        code: &'a str,
        /// The rest of the reply.
        message: &'a str,
    },
    /// The script raised an error.
    Raised {
        /// The first word of the message (`ERR` for a string raised with
        /// `error('…')`, the first word of the `err` field of a table).
        code: &'a str,
        /// The rest of the message.
        message: &'a str,
        /// The line of the script's file the error was raised at, when a
        /// line of Lua code raised it.
        line: Option<u32>,
    },
}

/// Reads an error reply split, as clients split it, into its first word
/// `code` and the rest `detail`: `None` when it carries neither mark (the
/// server's own errors).
pub fn read<'a>(code: &'a str, detail: &'a str) -> Option<ScriptEnding<'a>> {
    if let Some(code) = code.strip_prefix(RETURNED_ERROR_MARK) {
        return Some(ScriptEnding::Returned {
            code,
            message: detail,
        });
    }
    let code = code.strip_prefix(RAISED_ERROR_MARK)?;
    // `^GONE @3` splits into `^GONE` and `@3`: the separator's space is
    // the one between code and detail.
    let (detail, line) = if let Some(line) = detail.strip_prefix(&LINE_SEPARATOR[1..]) {
        ("", Some(line))
    } else {
        match detail.rsplit_once(LINE_SEPARATOR) {
            Some((message, line)) => (message, Some(line)),
            None => (detail, None),
        }
    };
    let (code, message) = match code {
        "" => crate::split_error_reply(detail),
        code => (code, detail),
    };
    Some(ScriptEnding::Raised {
        code,
        message,
        line: line.and_then(|line| line.parse().ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returned_errors_keep_their_words() {
        assert_eq!(
            read("~NOSCRIPT", "No matching script"),
            Some(ScriptEnding::Returned {
                code: "NOSCRIPT",
                message: "No matching script"
            })
        );
        assert_eq!(
            read("~GONE", ""),
            Some(ScriptEnding::Returned {
                code: "GONE",
                message: ""
            })
        );
        // A returned text that starts with the other mark stays returned.
        assert_eq!(
            read("~^X", "y @3"),
            Some(ScriptEnding::Returned {
                code: "^X",
                message: "y @3"
            })
        );
    }

    #[test]
    fn raised_errors_carry_their_line() {
        assert_eq!(
            read("^ERR", "user_script:1: boom @1"),
            Some(ScriptEnding::Raised {
                code: "ERR",
                message: "user_script:1: boom",
                line: Some(1)
            })
        );
        assert_eq!(
            read("^GONE", "@3"),
            Some(ScriptEnding::Raised {
                code: "GONE",
                message: "",
                line: Some(3)
            })
        );
        assert_eq!(
            read("^BUSY", "a @2 in the text @14"),
            Some(ScriptEnding::Raised {
                code: "BUSY",
                message: "a @2 in the text",
                line: Some(14)
            })
        );
        assert_eq!(
            read("^ERR", "error in error handling @?"),
            Some(ScriptEnding::Raised {
                code: "ERR",
                message: "error in error handling",
                line: None
            })
        );
        // A message that is only a code and no line.
        assert_eq!(
            read("^7", "@1"),
            Some(ScriptEnding::Raised {
                code: "7",
                message: "",
                line: Some(1)
            })
        );
    }

    #[test]
    fn the_servers_errors_carry_no_mark() {
        for (code, detail) in [
            ("NOSCRIPT", "No matching script. Please use EVAL."),
            ("ERR", "Function not found"),
            ("MOVED", "3999 127.0.0.1:6381"),
            ("BUSY", "Valkey is busy running a script."),
        ] {
            assert_eq!(read(code, detail), None, "{code}");
        }
    }
}
