//! The server's refusals the runtime reads beyond their code: which
//! command a `NOPERM` names, why a `FUNCTION LOAD` failed, and the suffix
//! of an error raised past the source sent. Which replies are refusals at
//! all (a code in the server's own words) is the codes crate's table,
//! [`redis_script_codes::server`].

use redis_script_codes::FUNCTION_NOT_FOUND;

use crate::error::ServerFeature;
use crate::script::Script;

/// Whether an error reply to `FCALL` is the server's "no such function".
pub(crate) fn is_function_not_found(code: &str, detail: &str) -> bool {
    code == "ERR" && detail == FUNCTION_NOT_FOUND
}

/// The command an `unknown command` refusal names, lower case, as Redis
/// 7.0 and later (`unknown command 'FCALL', with args beginning with: …`)
/// and Redis 6.x (with backquotes: `` unknown command `FCALL`, … ``) word it.
pub(crate) fn unknown_command(code: &str, detail: &str) -> Option<String> {
    if code != "ERR" {
        return None;
    }
    let rest = detail.strip_prefix("unknown command ")?;
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '`')?;
    let name = rest[1..].split(quote).next()?;
    Some(name.to_ascii_lowercase())
}

/// What the server lacks, when `code` and `detail`, its unmarked answer to
/// a request for `script` (`None`: a request of no script's, such as a
/// deploy), say it has no such feature: an unknown `FCALL` or `FUNCTION`
/// (Redis before 7.0 has no Functions; an unknown `FCALL_RO` alone makes a
/// call fall back to `FCALL` first), or a script starting with a `#!lua`
/// line that the server could not compile at that line's `#` (Redis
/// before 7.0 reads the line as Lua).
pub(crate) fn missing_feature(
    script: Option<&Script>,
    code: &str,
    detail: &str,
) -> Option<ServerFeature> {
    if code == "ERR" && names_no_lua_engine(detail) {
        return Some(ServerFeature::LuaEngine);
    }
    match script {
        Some(script) if !script.is_function() => {
            let compile_error_at_shebang = code == "ERR"
                && script.source().starts_with("#!")
                && detail.starts_with("Error compiling script")
                && detail.contains("user_script:1:")
                && detail.ends_with("near '#'");
            compile_error_at_shebang.then_some(ServerFeature::ScriptFlags)
        }
        _ => unknown_command(code, detail)
            .filter(|command| command == "fcall" || command == "function")
            .map(|_| ServerFeature::Functions),
    }
}

/// Whether an `ERR` reply says the server has no Lua engine: Valkey 9.1
/// without its Lua module answers `EVAL` and `SCRIPT LOAD` with "Could not
/// find scripting engine 'lua'", and `FUNCTION LOAD` with "Engine 'lua' not
/// found" (read live).
fn names_no_lua_engine(detail: &str) -> bool {
    let engine = detail
        .strip_prefix("Could not find scripting engine '")
        .and_then(|rest| rest.strip_suffix('\''))
        .or_else(|| {
            detail
                .strip_prefix("Engine '")
                .and_then(|rest| rest.strip_suffix("' not found"))
        });
    engine.is_some_and(|engine| engine.eq_ignore_ascii_case("lua"))
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
    fn unknown_commands_are_read_in_each_releases_quotes() {
        for (detail, command) in [
            // Redis 7.0.15 and later, Valkey.
            (
                "unknown command 'FCALL', with args beginning with: 'f' ",
                Some("fcall"),
            ),
            // Redis 6.0.9 and 6.2.5.
            (
                "unknown command `EVALSHA_RO`, with args beginning with: `abc`, ",
                Some("evalsha_ro"),
            ),
            (
                "unknown command `FUNCTION`, with args beginning with: `LIST`, ",
                Some("function"),
            ),
            ("unknown command", None),
            ("unknown subcommand 'X'", None),
        ] {
            assert_eq!(
                unknown_command("ERR", detail).as_deref(),
                command,
                "{detail}"
            );
        }
        assert_eq!(unknown_command("NOPERM", "unknown command 'FCALL'"), None);
        for (detail, feature) in [
            (
                "unknown command `FCALL`, with args beginning with: ",
                Some(ServerFeature::Functions),
            ),
            (
                "unknown command 'FUNCTION', with args beginning with: ",
                Some(ServerFeature::Functions),
            ),
            (
                "unknown command `FCALL_RO`, with args beginning with: ",
                None,
            ),
            (
                "unknown command `EVALSHA_RO`, with args beginning with: ",
                None,
            ),
        ] {
            assert_eq!(missing_feature(None, "ERR", detail), feature, "{detail}");
        }
    }

    /// A script whose first line is `#!lua`, as Redis 6.0.9 and 6.2.5
    /// refuse it, and one without.
    #[test]
    fn a_compile_error_at_the_shebang_is_missing_script_flags() {
        static FLAGGED: Script = crate::script::new_script(
            "flagged",
            "lua/flagged.lua",
            "#!lua flags=no-writes\nreturn 1",
            "0000000000000000000000000000000000000000",
            true,
            false,
        );
        static PLAIN: Script = crate::script::new_script(
            "plain",
            "lua/plain.lua",
            "return 1",
            "0000000000000000000000000000000000000000",
            true,
            false,
        );
        let refused =
            "Error compiling script (new function): user_script:1: unexpected symbol near '#'";
        assert_eq!(
            missing_feature(Some(&FLAGGED), "ERR", refused),
            Some(ServerFeature::ScriptFlags)
        );
        assert_eq!(missing_feature(Some(&PLAIN), "ERR", refused), None);
        let elsewhere =
            "Error compiling script (new function): user_script:2: unexpected symbol near '#'";
        assert_eq!(missing_feature(Some(&FLAGGED), "ERR", elsewhere), None);
        assert_eq!(
            missing_feature(
                Some(&FLAGGED),
                "ERR",
                "unknown command `FCALL`, with args beginning with: "
            ),
            None,
            "a script is never sent with FCALL"
        );
    }

    /// As Valkey 9.1.2 answers after `MODULE UNLOAD lua`, for a script and
    /// for a library; another engine's name is a library's own mistake.
    #[test]
    fn a_server_without_its_lua_engine_is_told_apart() {
        for detail in [
            "Could not find scripting engine 'lua'",
            "Engine 'lua' not found",
            "Engine 'LUA' not found",
        ] {
            assert_eq!(
                missing_feature(None, "ERR", detail),
                Some(ServerFeature::LuaEngine),
                "{detail}"
            );
        }
        for detail in [
            "Engine 'js' not found",
            "Could not find scripting engine 'js'",
            "Engine 'lua' not found here",
        ] {
            assert_eq!(missing_feature(None, "ERR", detail), None, "{detail}");
        }
        assert_eq!(
            missing_feature(None, "NOPERM", "Engine 'lua' not found"),
            None
        );
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
