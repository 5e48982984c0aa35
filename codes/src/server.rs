//! The codes the server answers with on its own, before or instead of
//! running what it was sent: one table ([`SERVER_CODES`]) says, for each,
//! how the server words it, whether clients act on it by themselves,
//! whether it passes, and whether it is a cluster redirection.
//!
//! The runtime reads refusals by it (a reply in the server's words of one
//! means the command did not run), the cluster batches follow its
//! redirections, and the analysis and the `ScriptError` derive refuse the
//! codes clients act on as a script's own.
//!
//! The wording is checked against Redis 7.0–8.x and Valkey 7.2–9.x; where
//! they differ ("Redis is busy" / "Valkey is busy"), the common part is
//! matched.
//!
//! ```
//! use redis_script_codes::server::{is_refusal, server_code};
//!
//! assert!(is_refusal("MOVED", "3999 127.0.0.1:6381"));
//! assert!(!is_refusal("MOVED", "somewhere else"));
//! let moved = server_code("MOVED").expect("a server code");
//! assert!(moved.redirects() && moved.passes() && moved.clients_act().is_some());
//! ```

/// The server's answer to `EVALSHA` for a script it has not cached; clients
/// then send the script's body with `EVAL`.
pub const NOSCRIPT: &str = "NOSCRIPT";
/// The slot of the command's keys is served by another node, named after
/// the slot: `MOVED 3999 127.0.0.1:6381`.
pub const MOVED: &str = "MOVED";
/// The slot is migrating and the keys are on the node named (for one
/// command, sent after `ASKING`): `ASK 3999 127.0.0.1:6381`.
pub const ASK: &str = "ASK";
/// The transaction was discarded whole: a command of it was refused while
/// queued (or, on Valkey 9, at `EXEC`).
pub const EXECABORT: &str = "EXECABORT";
/// The user may not run the command, or touch the key.
pub const NOPERM: &str = "NOPERM";

/// The text after `ERR` in the reply to `FCALL`/`FCALL_RO` of a function no
/// loaded library registers (Redis 7.0–8.x, Valkey 7.2–9.x).
pub const FUNCTION_NOT_FOUND: &str = "Function not found";

/// Tells whether the text after an error code is the server's own wording.
type Wording = fn(&str) -> bool;

/// A code the server answers with on its own, and what it means.
#[derive(Debug)]
pub struct ServerCode {
    code: &'static str,
    wording: Wording,
    clients_act: Option<&'static str>,
    passes: bool,
    redirects: bool,
}

impl ServerCode {
    /// The code: `MOVED`.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// Whether `detail`, the text after the code, is in the server's own
    /// words: only then is the reply the server's refusal of a command it
    /// did not run (a script may reply with the same code).
    pub fn is_own_wording(&self, detail: &str) -> bool {
        (self.wording)(detail)
    }

    /// What clients do by themselves when they read the code (send the
    /// command again, elsewhere or later), for messages that say the code
    /// belongs to the server; `None` when they leave it to the caller.
    pub fn clients_act(&self) -> Option<&'static str> {
        self.clients_act
    }

    /// Whether the refusal passes: the same command sent again later may
    /// run.
    pub fn passes(&self) -> bool {
        self.passes
    }

    /// Whether it is a cluster redirection: the command's slot is
    /// elsewhere, moving, or not served, and the same command may run
    /// where (or when) the cluster serves it.
    pub fn redirects(&self) -> bool {
        self.redirects
    }
}

/// Clients act on the redirections of a cluster by following them.
const FOLLOWED: &str =
    "the redis-rs cluster connection follows it as a redirect and sends the script again";
/// Clients act on a cluster or a node not ready by waiting.
const WAITED_OUT: &str = "the redis-rs cluster connection waits and sends the script again";

/// Every code the server answers a command with before running it (or
/// instead), with the server's wording of each.
pub const SERVER_CODES: &[ServerCode] = &[
    ServerCode {
        code: NOSCRIPT,
        wording: |detail| detail.starts_with("No matching script"),
        clients_act: Some(
            "clients read it as \"the server has not cached this script\" and send the script again with EVAL",
        ),
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: "BUSY",
        wording: |detail| {
            detail.contains("busy running a script") || detail.contains("busy running a function")
        },
        clients_act: None,
        passes: true,
        redirects: false,
    },
    ServerCode {
        code: "LOADING",
        wording: |detail| detail.contains("loading the dataset in memory"),
        clients_act: Some(WAITED_OUT),
        passes: true,
        redirects: false,
    },
    ServerCode {
        code: "READONLY",
        wording: |detail| detail.starts_with("You can't write against a read only replica"),
        clients_act: Some(
            "the redis-rs cluster connection refreshes its slot map and sends the script again",
        ),
        passes: true,
        redirects: false,
    },
    ServerCode {
        code: "MASTERDOWN",
        wording: |detail| detail.starts_with("Link with MASTER is down"),
        clients_act: Some(WAITED_OUT),
        passes: true,
        redirects: false,
    },
    ServerCode {
        code: "OOM",
        wording: |detail| detail.starts_with("command not allowed when used memory"),
        clients_act: None,
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: NOPERM,
        wording: |detail| {
            detail.contains("no permissions to") || detail.contains("No permissions to")
        },
        clients_act: None,
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: "NOAUTH",
        wording: |detail| detail.starts_with("Authentication required"),
        clients_act: None,
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: MOVED,
        wording: names_slot_and_node,
        clients_act: Some(FOLLOWED),
        passes: true,
        redirects: true,
    },
    ServerCode {
        code: ASK,
        wording: names_slot_and_node,
        clients_act: Some(FOLLOWED),
        passes: true,
        redirects: true,
    },
    ServerCode {
        code: "TRYAGAIN",
        wording: |detail| detail.starts_with("Multiple keys request during rehashing of slot"),
        clients_act: Some(WAITED_OUT),
        passes: true,
        redirects: true,
    },
    ServerCode {
        code: "CLUSTERDOWN",
        wording: |detail| {
            detail.contains("cluster is down") || detail.starts_with("Hash slot not served")
        },
        clients_act: Some(WAITED_OUT),
        passes: true,
        redirects: true,
    },
    ServerCode {
        code: "CROSSSLOT",
        wording: |detail| detail.starts_with("Keys in request don't hash to the same slot"),
        clients_act: None,
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: "MISCONF",
        wording: |detail| {
            detail.contains("configured to save RDB snapshots")
                || detail.contains("Errors writing to the AOF file")
        },
        clients_act: None,
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: "NOREPLICAS",
        wording: |detail| detail.starts_with("Not enough good replicas to write"),
        clients_act: None,
        passes: true,
        redirects: false,
    },
    ServerCode {
        code: EXECABORT,
        wording: |detail| detail.starts_with("Transaction discarded because of"),
        clients_act: None,
        passes: false,
        redirects: false,
    },
    ServerCode {
        code: "ERR",
        wording: |detail| {
            detail.starts_with("unknown command")
                || detail.starts_with("Number of keys can't be")
                || detail == FUNCTION_NOT_FOUND
                || detail.starts_with("Can not execute a script with write flag using *_ro command")
        },
        clients_act: None,
        passes: false,
        redirects: false,
    },
];

/// The entry of [`SERVER_CODES`] for `code`. Codes are compared exactly, as
/// clients compare them.
pub fn server_code(code: &str) -> Option<&'static ServerCode> {
    SERVER_CODES.iter().find(|entry| entry.code == code)
}

/// Whether `code` and `detail` are the server's own refusal of a command
/// (the command did not run).
pub fn is_refusal(code: &str, detail: &str) -> bool {
    server_code(code).is_some_and(|entry| entry.is_own_wording(detail))
}

/// `<slot> <host>:<port>`, as in `MOVED 3999 127.0.0.1:6381`.
fn names_slot_and_node(detail: &str) -> bool {
    let mut parts = detail.split(' ');
    let slot = parts.next().is_some_and(|slot| slot.parse::<u16>().is_ok());
    let address = parts
        .next()
        .and_then(|address| address.rsplit_once(':'))
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    slot && address && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_is_listed_once() {
        for (index, entry) in SERVER_CODES.iter().enumerate() {
            assert!(crate::is_error_code(entry.code), "{}", entry.code);
            assert_eq!(
                SERVER_CODES
                    .iter()
                    .position(|other| other.code == entry.code),
                Some(index),
                "{}",
                entry.code
            );
        }
    }

    #[test]
    fn the_redirections_pass_and_clients_follow_them() {
        let redirections: Vec<&str> = SERVER_CODES
            .iter()
            .filter(|entry| entry.redirects())
            .map(ServerCode::code)
            .collect();
        assert_eq!(redirections, [MOVED, ASK, "TRYAGAIN", "CLUSTERDOWN"]);
        for code in redirections {
            let entry = server_code(code).expect("listed");
            assert!(entry.passes() && entry.clients_act().is_some(), "{code}");
        }
        let passing: Vec<&str> = SERVER_CODES
            .iter()
            .filter(|entry| entry.passes())
            .map(ServerCode::code)
            .collect();
        assert_eq!(
            passing,
            [
                "BUSY",
                "LOADING",
                "READONLY",
                "MASTERDOWN",
                MOVED,
                ASK,
                "TRYAGAIN",
                "CLUSTERDOWN",
                "NOREPLICAS"
            ]
        );
    }

    #[test]
    fn the_servers_own_wording_is_a_refusal() {
        for (code, detail) in [
            (NOSCRIPT, "No matching script. Please use EVAL."),
            (NOSCRIPT, "No matching script."),
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
                NOPERM,
                "User default has no permissions to run the 'evalsha' command",
            ),
            (MOVED, "3999 127.0.0.1:6381"),
            (ASK, "3999 127.0.0.1:6381"),
            ("TRYAGAIN", "Multiple keys request during rehashing of slot"),
            ("CLUSTERDOWN", "The cluster is down"),
            ("CLUSTERDOWN", "Hash slot not served"),
            (
                "ERR",
                "unknown command 'EVALSHA_RO', with args beginning with: ",
            ),
            (
                EXECABORT,
                "Transaction discarded because of previous errors.",
            ),
            ("ERR", FUNCTION_NOT_FOUND),
            (
                "ERR",
                "Can not execute a script with write flag using *_ro command.",
            ),
            (
                "ERR",
                "unknown command 'FCALL_RO', with args beginning with: ",
            ),
        ] {
            assert!(is_refusal(code, detail), "{code} {detail}");
        }
    }

    /// The refusals as each release words them, read from the live
    /// servers CI runs (the forms that differ between releases).
    #[test]
    fn each_releases_wording_is_a_refusal() {
        for (release, code, detail) in [
            (
                "redis 7.0.15, 8.0.2, 8.6.3",
                NOSCRIPT,
                "No matching script. Please use EVAL.",
            ),
            ("valkey 8.1.8, 9.1.2", NOSCRIPT, "No matching script."),
            (
                "redis 7.0.15",
                NOPERM,
                "this user has no permissions to run the 'evalsha' command",
            ),
            (
                "redis 8.0.2, 8.6.3, valkey 8.1.8, 9.1.2",
                NOPERM,
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
            ("every release", "ERR", FUNCTION_NOT_FOUND),
        ] {
            assert!(is_refusal(code, detail), "{release}: {code} {detail}");
        }
    }

    #[test]
    fn other_wording_is_not_a_refusal() {
        for (code, detail) in [
            ("BUSY", "try again later"),
            (MOVED, "somewhere else"),
            (MOVED, "3999 127.0.0.1:6381 extra"),
            (NOSCRIPT, "x"),
            ("ERR", "value is not an integer or out of range"),
            ("CONFLICT", "No matching script"),
            ("ERR", "Function not found in the table"),
        ] {
            assert!(!is_refusal(code, detail), "{code} {detail}");
        }
    }
}
