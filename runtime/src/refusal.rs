//! How the server words its refusals: an error reply without the mark of
//! the source sent ([`redis_script_codes::marks`]) and in these words
//! means the script did not run.
//!
//! The wording is checked against Redis 7.0–8.x and Valkey 7.2–9.x; where
//! they differ ("Redis is busy" / "Valkey is busy"), the common part is
//! matched.

/// Tells whether the text after an error code is the server's own wording.
type Wording = fn(&str) -> bool;

/// Codes the server answers a script call with before running the script,
/// each with a test on the rest of the message that only the server's own
/// text passes.
const REFUSALS: &[(&str, Wording)] = &[
    ("NOSCRIPT", |detail| {
        detail.starts_with("No matching script")
    }),
    ("BUSY", |detail| {
        detail.contains("busy running a script") || detail.contains("busy running a function")
    }),
    ("LOADING", |detail| {
        detail.contains("loading the dataset in memory")
    }),
    ("READONLY", |detail| {
        detail.starts_with("You can't write against a read only replica")
    }),
    ("MASTERDOWN", |detail| {
        detail.starts_with("Link with MASTER is down")
    }),
    ("OOM", |detail| {
        detail.starts_with("command not allowed when used memory")
    }),
    ("NOPERM", |detail| {
        detail.contains("no permissions to") || detail.contains("No permissions to")
    }),
    ("NOAUTH", |detail| {
        detail.starts_with("Authentication required")
    }),
    ("MOVED", is_redirect),
    ("ASK", is_redirect),
    ("TRYAGAIN", |detail| {
        detail.starts_with("Multiple keys request during rehashing of slot")
    }),
    ("CLUSTERDOWN", |detail| {
        detail.contains("cluster is down") || detail.starts_with("Hash slot not served")
    }),
    ("CROSSSLOT", |detail| {
        detail.starts_with("Keys in request don't hash to the same slot")
    }),
    ("MISCONF", |detail| {
        detail.contains("configured to save RDB snapshots")
            || detail.contains("Errors writing to the AOF file")
    }),
    ("NOREPLICAS", |detail| {
        detail.starts_with("Not enough good replicas to write")
    }),
    ("EXECABORT", |detail| {
        detail.starts_with("Transaction discarded because of")
    }),
    ("ERR", |detail| {
        detail.starts_with("unknown command")
            || detail.starts_with("Number of keys can't be")
            || detail == FUNCTION_NOT_FOUND
            || detail.starts_with("Can not execute a script with write flag using *_ro command")
    }),
];

/// The text after `ERR` in the reply to `FCALL`/`FCALL_RO` of a function no
/// loaded library registers (Redis 7.0–8.x, Valkey 7.2–9.x).
pub(crate) const FUNCTION_NOT_FOUND: &str = "Function not found";

/// Whether an error reply to `FCALL` is the server's "no such function".
pub(crate) fn is_function_not_found(code: &str, detail: &str) -> bool {
    code == "ERR" && detail == FUNCTION_NOT_FOUND
}

/// Whether a `NOPERM` refusal's text names the command `command` (lower
/// case, `function|load` for a subcommand) as the one the user may not
/// run: "User app has no permissions to run the 'eval' command" (Redis
/// 8.x, Valkey 8.1–9.x), "this user has no permissions to run the 'eval'
/// command" (Redis 7.0), not "No permissions to access a key".
pub(crate) fn names_command(detail: &str, command: &str) -> bool {
    detail
        .to_ascii_lowercase()
        .contains(&format!("no permissions to run the '{command}' command"))
}

/// Why `FUNCTION LOAD` (without `REPLACE`) did not load a library, from
/// its error reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LoadRefusal<'a> {
    /// `ERR Library 'quota_lib' already exists`: a library of that name is
    /// loaded, the same code or another.
    LibraryExists,
    /// `ERR Function fixed_window_allow already exists`: another library
    /// registers this function name.
    FunctionExists(&'a str),
    /// Anything else (compile errors, refusals such as `OOM`, `READONLY`).
    Other,
}

/// Reads a `FUNCTION LOAD` error reply; the wording is the same on Redis
/// 7.0–8.x and Valkey 7.2–9.x.
pub(crate) fn load_refusal<'a>(code: &str, detail: &'a str) -> LoadRefusal<'a> {
    if code != "ERR" {
        return LoadRefusal::Other;
    }
    if detail.starts_with("Library '") && detail.ends_with("' already exists") {
        return LoadRefusal::LibraryExists;
    }
    match detail
        .strip_prefix("Function ")
        .and_then(|rest| rest.strip_suffix(" already exists"))
    {
        Some(function) if !function.is_empty() => LoadRefusal::FunctionExists(function),
        _ => LoadRefusal::Other,
    }
}

/// `<slot> <host>:<port>`, as in `MOVED 3999 127.0.0.1:6381`.
fn is_redirect(detail: &str) -> bool {
    let mut parts = detail.split(' ');
    let slot = parts.next().is_some_and(|slot| slot.parse::<u16>().is_ok());
    let address = parts
        .next()
        .and_then(|address| address.rsplit_once(':'))
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    slot && address && parts.next().is_none()
}

/// Whether `code` and `detail` are the server's own refusal of a command
/// (the command did not run).
pub(crate) fn is_server_refusal(code: &str, detail: &str) -> bool {
    REFUSALS
        .iter()
        .any(|(refusal, matches)| *refusal == code && matches(detail))
}

/// Refusals that pass: sending the same command again later may succeed.
pub(crate) fn is_transient(code: &str) -> bool {
    matches!(
        code,
        "LOADING"
            | "BUSY"
            | "TRYAGAIN"
            | "MASTERDOWN"
            | "CLUSTERDOWN"
            | "MOVED"
            | "ASK"
            | "READONLY"
            | "NOREPLICAS"
    )
}

/// `detail` without the suffix servers append to an error raised inside a
/// script and not caught there: ` script: <sha1 or function>, on
/// @user_script:<line>.` (Redis 7.0–8.x, Valkey 7.2–8.x), or ` script: on
/// @user_script:<line>.` (Valkey 9.x). The source sent catches every error
/// its script raises, so only an error raised past it (by the server
/// killing the script) carries one, and its line is one of the wrapper's.
pub(crate) fn without_raise_suffix(detail: &str) -> &str {
    let Some(at) = detail.rfind(" script: ") else {
        return detail;
    };
    let suffix = &detail[at + " script: ".len()..];
    let place = match suffix.split_once("on ") {
        Some((name, place)) if name.is_empty() || name.ends_with(", ") => place,
        _ => return detail,
    };
    let is_line = place
        .strip_suffix('.')
        .and_then(|place| place.rsplit_once(':'))
        .is_some_and(|(_, line)| line.parse::<i64>().is_ok());
    if is_line { &detail[..at] } else { detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_own_wording_is_a_refusal() {
        for (code, detail) in [
            ("NOSCRIPT", "No matching script. Please use EVAL."),
            ("NOSCRIPT", "No matching script."),
            (
                "BUSY",
                "Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
            ),
            (
                "BUSY",
                "Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
            ),
            ("LOADING", "Redis is loading the dataset in memory"),
            ("READONLY", "You can't write against a read only replica."),
            ("OOM", "command not allowed when used memory > 'maxmemory'."),
            (
                "NOPERM",
                "User default has no permissions to run the 'evalsha' command",
            ),
            ("MOVED", "3999 127.0.0.1:6381"),
            ("ASK", "3999 127.0.0.1:6381"),
            ("TRYAGAIN", "Multiple keys request during rehashing of slot"),
            ("CLUSTERDOWN", "The cluster is down"),
            ("CLUSTERDOWN", "Hash slot not served"),
            (
                "ERR",
                "unknown command 'EVALSHA_RO', with args beginning with: ",
            ),
            (
                "EXECABORT",
                "Transaction discarded because of previous errors.",
            ),
            ("ERR", "Function not found"),
            (
                "ERR",
                "Can not execute a script with write flag using *_ro command.",
            ),
            (
                "ERR",
                "unknown command 'FCALL_RO', with args beginning with: ",
            ),
        ] {
            assert!(is_server_refusal(code, detail), "{code} {detail}");
        }
    }

    /// The refusals as each release words them, read from the live
    /// servers CI runs (the forms that differ between releases).
    #[test]
    fn each_releases_wording_is_a_refusal() {
        for (release, code, detail) in [
            (
                "redis 7.0.15, 8.0.2, 8.6.3",
                "NOSCRIPT",
                "No matching script. Please use EVAL.",
            ),
            ("valkey 8.1.8, 9.1.2", "NOSCRIPT", "No matching script."),
            (
                "redis 7.0.15",
                "NOPERM",
                "this user has no permissions to run the 'evalsha' command",
            ),
            (
                "redis 8.0.2, 8.6.3, valkey 8.1.8, 9.1.2",
                "NOPERM",
                "User lim has no permissions to run the 'evalsha' command",
            ),
            (
                "redis 7.0.15, 8.0.2",
                "BUSY",
                "Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
            ),
            (
                "redis 8.6.3",
                "BUSY",
                "Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
            ),
            (
                "valkey 8.1.8, 9.1.2",
                "BUSY",
                "Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
            ),
            (
                "every release",
                "OOM",
                "command not allowed when used memory > 'maxmemory'.",
            ),
            ("every release", "ERR", "Function not found"),
        ] {
            assert!(
                is_server_refusal(code, detail),
                "{release}: {code} {detail}"
            );
        }
    }

    #[test]
    fn a_refused_command_is_told_from_a_refused_key() {
        for (detail, command) in [
            (
                "this user has no permissions to run the 'eval' command",
                "eval",
            ),
            (
                "User app has no permissions to run the 'eval' command",
                "eval",
            ),
            (
                "User app has no permissions to run the 'function|load' command",
                "function|load",
            ),
        ] {
            assert!(names_command(detail, command), "{detail}");
        }
        assert!(!names_command("No permissions to access a key", "eval"));
        assert!(!names_command(
            "User app has no permissions to run the 'evalsha' command",
            "eval"
        ));
    }

    #[test]
    fn function_load_errors_are_told_apart() {
        // As Redis 7.0.15 and Valkey 8.1.8 word them.
        assert_eq!(
            load_refusal("ERR", "Library 'quota_lib' already exists"),
            LoadRefusal::LibraryExists
        );
        assert_eq!(
            load_refusal("ERR", "Function quota_peek already exists"),
            LoadRefusal::FunctionExists("quota_peek")
        );
        for (code, detail) in [
            (
                "ERR",
                "Error compiling function: user_function:2: ')' expected near '<eof>'",
            ),
            ("ERR", "Missing library metadata"),
            ("ERR", "No functions registered"),
            ("ERR", "Function  already exists"),
            ("OOM", "command not allowed when used memory > 'maxmemory'."),
        ] {
            assert_eq!(load_refusal(code, detail), LoadRefusal::Other, "{detail}");
        }
        assert!(is_function_not_found("ERR", "Function not found"));
        assert!(!is_function_not_found("ERR", "Function not found."));
    }

    #[test]
    fn other_wording_is_not_a_refusal() {
        for (code, detail) in [
            ("BUSY", "try again later"),
            ("MOVED", "somewhere else"),
            ("MOVED", "3999 127.0.0.1:6381 extra"),
            ("NOSCRIPT", "x"),
            ("ERR", "value is not an integer or out of range"),
            ("CONFLICT", "No matching script"),
            ("ERR", "Function not found in the table"),
        ] {
            assert!(!is_server_refusal(code, detail), "{code} {detail}");
        }
    }

    #[test]
    fn the_raise_suffix_of_each_server_is_dropped() {
        for (detail, message) in [
            // Redis 7.0.15, 8.0.2, 8.6.3, Valkey 8.1.8.
            (
                "Script killed by user with SCRIPT KILL... script: c64e417713643f86da27001a23b8e586f2b6f653, on @user_script:6.",
                "Script killed by user with SCRIPT KILL...",
            ),
            ("tbl script: f_x, on @user_function:3.", "tbl"),
            // Valkey 9.1.2: no SHA1.
            (
                "Script killed by user with SCRIPT KILL. script: on @user_script:6.",
                "Script killed by user with SCRIPT KILL.",
            ),
            // A C frame raised it.
            ("BUSY x script: 3d76011e, on =[C]:-1.", "BUSY x"),
            // No suffix.
            ("expected 3 found 4", "expected 3 found 4"),
            ("a script: b", "a script: b"),
            ("my script: on fire", "my script: on fire"),
        ] {
            assert_eq!(without_raise_suffix(detail), message, "{detail}");
        }
    }
}
